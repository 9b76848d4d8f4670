import { CacheError, OpenSpace, PgStore, type KeepMode } from '../../../cache';
import type { HeaderEntry } from '../../core/answers';
import { HttpError } from '../../core/errors';
import { fail } from '../../core/fail';
import type { Services } from '../../route/extensions';
import type { RouteRecord } from '../../route/route-record';
import { type Ctx, type Resolvable } from '../../request/ctx';
import { isThenable } from '../../core/thenable';
import { openIdempotency } from '../../request/idempotency-of';
import { AtomicRun, poolExhausted } from './atomic-run';
import type { CallerBudget } from './caller-budget';
import { KeptAnswers, type KeptAnswer, type RequestParts } from './kept-answers';
import { Tx } from './tx';
import { ClaimRenewer } from './claim-renewer';
import { IdempotentRequest } from './idempotent-request';
import { IDEMPOTENT, MAX_WAITERS, type IdempotentMark } from './idempotent-mark';
import { decodeKept, encodeKept, fingerprintMatches } from './kept-record';
import { readKey, recordKey } from './read-key';
import { SpaceState } from './space-state';
import { inFlight, note } from './outcomes';
import type { DuplicateWait, RouteSteps } from './route-steps';
import { exchangeOf } from '../../request/exchange-of';

const REPLAYED: HeaderEntry = Object.freeze({ name: 'idempotent-replayed', value: 'true' });
/** On the 422 for a key sent again with another request. */
const KEY_MISMATCH: HeaderEntry = Object.freeze({
  name: 'idempotency-key-mismatch',
  value: 'true',
});

/**
 * One `@Idempotent` route, built once: its space and settings, and the steps every request on it
 * takes before it is known to be a first request (the caller, the key, a replay). A first request
 * goes on as an `IdempotentRequest`.
 */
export class IdempotentRoute implements RouteSteps {
  readonly space: OpenSpace;
  readonly state: SpaceState;
  readonly label: string;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly keep: KeepMode;
  /** What a record costs the store beyond its bytes, counted against its caller's share. */
  readonly overhead: number;
  /** Null when the route has one caller (no `by`): there is no other caller to keep room for. */
  readonly callers: CallerBudget | null;
  readonly atomic: AtomicRun | null;
  readonly waits: DuplicateWait | null;
  readonly claimsInOne: boolean;
  readonly renewer: ClaimRenewer;
  readonly where: string;
  readonly #answers = new KeptAnswers();
  readonly #by: NonNullable<IdempotentMark['by']> | null;
  readonly #resolvers: readonly Resolvable<unknown>[];
  readonly #link: string;

  constructor(record: RouteRecord, mark: IdempotentMark, space: OpenSpace) {
    this.space = space;
    this.state = SpaceState.of(space);
    this.label = record.label;
    this.ttlMs = space.ttlSeconds * 1000;
    this.leaseMs = space.leaseMs;
    this.keep = space.space.keep;
    this.overhead = space.entryOverheadBytes;
    this.callers = mark.by === undefined ? null : this.state.callers;
    this.atomic = atomicRunOf(record, mark, space);
    this.waits = waitsOf(mark, space);
    this.claimsInOne = space.claimsInOne && mark.atomic !== true;
    this.renewer = new ClaimRenewer(space, this.leaseMs, this.label, space.leaseMarginMs);
    this.where = `space "${space.space.name}"`;
    this.#by = mark.by ?? null;
    this.#resolvers = record.args.flatMap((a) =>
      a.kind === 'resolved' && a.type !== Tx ? [a.type as unknown as Resolvable<unknown>] : [],
    );
    this.#link = `<${space.space.keyDocs}>; rel="describedby"; type="text/html"`;
  }

  /** The route of `record`, or null when it is not idempotent or its space is not provided (refused by the checks). */
  static of(record: RouteRecord, services: Services): IdempotentRoute | null {
    const mark = record.marks.get(IDEMPOTENT);
    if (mark === undefined) return null;
    const space = findSpace(services.all(), mark.space);
    return space === null ? null : new IdempotentRoute(record, mark, space);
  }

  // The steps run in order: the caller (its resolvers answer 401, `by` 403), the key, the raw body,
  // the store. Each goes on at once when what it needs is here, so a replay from a store that
  // answers at once costs one wait for the body; a replay never reads the body into its class.

  /** The step around the handler. */
  step(c: Ctx, proceed: () => unknown): unknown {
    const caller = this.#callerOf(c, 0);
    return isThenable(caller)
      ? caller.then((name) => this.#withCaller(c, proceed, name))
      : this.#withCaller(c, proceed, caller);
  }

  /** The caller's name, or a promise of it while a resolver or `by` is asynchronous. */
  #callerOf(c: Ctx, from: number): string | Promise<string> {
    const resolvers = this.#resolvers;
    for (let i = from; i < resolvers.length; i++) {
      const v = c.resolving(resolvers[i]!);
      if (isThenable(v)) return Promise.resolve(v).then(() => this.#callerOf(c, i + 1));
    }
    const by = this.#by;
    if (by === null) return '';
    const who = by(c);
    return isThenable(who) ? Promise.resolve(who).then(named) : named(who);
  }

  #withCaller(c: Ctx, proceed: () => unknown, caller: string): unknown {
    const x = exchangeOf(c);
    const header = x.req.headers['idempotency-key'];
    // IETF draft §2.7: a missing key is 400 with a link to what the server expects.
    if (header === undefined) c.setHeader('link', this.#link);
    const key = readKey(header, x.req.rawHeaders);
    const id = recordKey(caller, key);
    // The fencing token comes with the claim, once won (minted here, before the body is read and
    // the key claimed, a later claim could hold the smaller token).
    const run = (x.idempotency = openIdempotency(this.space.space.name, caller, key));
    // Steps are recorded on atomic routes too: they run outside the transaction (a query inside
    // one is refused), so what they did outlives a rollback and a rerun reads it back.
    run.steps = { space: this.space, record: id, core: x.core, label: this.label, run: x };
    return x.afterBodyPrint((body) => new IdempotentRequest(this, c, proceed, id).start(body));
  }

  /** A retry of a request answered in this process whose answer could not be kept: refused for the record's TTL, never run again. */
  refuseNotKept(c: Ctx, id: string): void {
    const notKept = this.state.notKept;
    const until = notKept.get(id);
    if (until === undefined) return;
    const left = until - performance.now();
    if (left <= 0) {
      notKept.delete(id);
      return;
    }
    c.setHeader('retry-after', String(Math.ceil(left / 1000)));
    throw new HttpError(
      'AnswerNotKept',
      'Idempotency-Key was answered, but the answer could not be kept: retry later',
    );
  }

  /** A record found under the key: replay its kept answer, or 409 while it is a claim, or 422 for another request. */
  answerExisting(c: Ctx, id: string, bytes: Buffer, parts: RequestParts): void {
    if (this.state.outage.down) this.state.outage.over(exchangeOf(c).core.log, this.where);
    const entry = this.#answers.find(id, bytes, decodeKept);
    if (entry === null) throw inFlight(c);
    if (!KeptAnswers.known(entry, parts)) {
      if (!fingerprintMatches(parts, entry.answer.fp)) {
        note(c, 'mismatch');
        // Whatever the app's failure shape, a caller (fw's outbound client) knows it by the header.
        c.setHeader(KEY_MISMATCH.name, KEY_MISMATCH.value);
        throw fail.unprocessable('Idempotency-Key was used for a different request');
      }
      KeptAnswers.learn(entry, parts);
    }
    replay(c, entry.answer);
  }

  /** The store failed: the outage's first failure is logged with its cause; 503 (or the error as it is). */
  storeDown(e: unknown, c: Ctx): never {
    // A pool with every connection in use is busy, not down: named, and no outage is reported.
    const busy =
      this.space.store instanceof PgStore ? poolExhausted(c, this.label, this.space.store) : null;
    if (busy !== null && e instanceof CacheError) throw busy;
    this.state.outage.failed(e, exchangeOf(c).core.log, this.where);
    if (e instanceof CacheError) {
      note(c, 'store_unavailable');
      throw new HttpError('StoreUnavailable', 'idempotency store unavailable');
    }
    throw e;
  }
}

function replay(c: Ctx, a: KeptAnswer): void {
  // Kept headers were checked when the answer was first sent: no second check.
  for (const h of a.own) exchangeOf(c).putHeader(h.name, h.value);
  exchangeOf(c).putHeader(REPLAYED.name, REPLAYED.value);
  note(c, 'replayed');
  exchangeOf(c).write(a.status, a.type, a.body, null);
}

function atomicRunOf(
  record: RouteRecord,
  mark: IdempotentMark,
  space: OpenSpace,
): AtomicRun | null {
  if (mark.atomic !== true || !(space.store instanceof PgStore)) return null;
  return new AtomicRun({
    store: space.store,
    label: record.label,
    ttlMs: space.ttlSeconds * 1000,
    deadlineMs: mark.deadlineMs ?? space.leaseMs,
    isolation: mark.isolation ?? 'read committed',
    hold: mark.holdTransaction === true,
    maxBytes: space.maxBytes,
    encode: encodeKept,
  });
}

/** How a duplicate of an atomic route's key in flight waits for its answer; null elsewhere (409 at once). */
function waitsOf(mark: IdempotentMark, space: OpenSpace): DuplicateWait | null {
  if (mark.atomic !== true) return null;
  return {
    waitMs: mark.waitMs ?? space.leaseMs,
    maxWaiters: mark.maxWaiters ?? MAX_WAITERS,
  };
}

/** The opened space of `decl` among the provided services. */
export function findSpace(provided: readonly unknown[], decl: object): OpenSpace | null {
  for (const p of provided) if (p instanceof OpenSpace && p.space === decl) return p;
  return null;
}

/**
 * The caller `by` named: null or undefined is no caller (403); anything but a non-empty string is
 * the program's mistake (500, the route named in the log), so a function, an object or a
 * prototype member found by a lookup can never become a caller whose answers others replay.
 */
function named(who: unknown): string {
  if (who === null || who === undefined)
    throw fail.forbidden('no caller for this idempotent request');
  if (typeof who !== 'string' || who === '')
    throw fail.internal(
      '@Idempotent by returned %s: it must return a non-empty string (or null for no caller)',
      who === '' ? 'an empty string' : typeof who === 'function' ? 'a function' : typeof who,
    );
  return who;
}
