import { isAscii } from 'node:buffer';
import { hash, randomBytes } from 'node:crypto';
import { CacheError, OpenSpace, PgStore, type SpaceDecl } from '../../cache';
import { innerContracts, type Contract, type HeaderEntry } from '../core/answers';
import type { AroundFactory, Capability } from '../route/extensions';
import { isThenable, type CapturedAnswer, type Ctx, type Resolvable } from '../request/ctx';
import { CallerBudget } from './caller-budget';
import { FillWatch } from './fill-watch';
import { StoreOutage } from './store-outage';
import { copyBag, type HeaderBag } from '../core/header-rules';
import type { OperationSink } from '../route/extensions';
import { HttpError } from '../core/errors';
import { mapError } from '../core/error-mapping';
import { KeptAnswers, type KeptAnswer, type RequestParts } from './kept-answers';
import { fail } from '../core/fail';
import type { RouteRecord } from '../route/route-record';
import type { RecordCheck } from '../route/extensions';
import { MarkKey } from '../route/mark-key';
import { markRoute } from '../route/decorators';
import { AtomicRun, type Isolation } from './atomic-run';
import { Tx } from './tx';
import { clockToken, IdempotencyInfo } from '../request/idempotency-info';

/** What an `@Idempotent` route declares. */
export interface IdempotentMark {
  /** The space declaration (from `fw-http/cache`'s `Space(...)`); the opened space is found among provided services. */
  readonly space: object;
  /** Names the caller: a non-empty string; null or undefined answers 403; anything else 500. */
  readonly by?: (c: Ctx) => string | null | undefined | Promise<string | null | undefined>;
  /**
   * On a space opened on a `PgStore`: the claim, the handler's writes (through its `Tx`) and the
   * kept answer commit in one transaction, so a crash before the commit leaves nothing and a retry
   * runs on a clean slate. A duplicate in flight waits on the key row's lock (up to the space's
   * `leaseMs`, then 409) and then gets the committed answer.
   */
  readonly atomic?: boolean;
  /** The atomic transaction's isolation level. Default `'read committed'`. */
  readonly isolation?: Isolation;
}

/** The key of a route's `@Idempotent` mark: `record.marks.get(IDEMPOTENT)`. */
export const IDEMPOTENT = new MarkKey<IdempotentMark>('idempotent');

/**
 * Runs the handler once per `Idempotency-Key` (and caller) and replays the kept answer to retries.
 * @example @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
 */
export function Idempotent(
  space: object,
  options: Omit<IdempotentMark, 'space'> = {},
): MethodDecorator {
  return markRoute(IDEMPOTENT, { space, ...options });
}

/** Longest `Idempotency-Key`, in bytes. */
export const MAX_KEY_BYTES = 255;
/**
 * How long an in-flight claim holds its key when the space sets no `leaseMs`. Far shorter than a
 * record's TTL, so a process that dies mid-request blocks its key for at most this long; the claim
 * is renewed every third of it while the handler runs, so a long handler never loses it.
 */
export const CLAIM_LEASE_MS = 30_000;
/** At most this many "answered, not kept" markers per space (the oldest goes first past it). */
export const MAX_NOT_KEPT = 10_000;

/** What every route on one opened space shares in this process. */
interface SpaceState {
  /**
   * Record id → until when (performance.now()) a retry is refused: answered, but the answer could
   * not be kept. As long as the record would have lived (its TTL): within it a retry to this
   * process never runs the handler again.
   */
  readonly notKept: Map<string, number>;
  /**
   * Record ids whose handler runs in this process now. A retry of one is 409 before the store is
   * asked: the store may have lost the claim (restarted empty, failed over, paused past the lease).
   */
  readonly held: Set<string>;
  readonly callers: CallerBudget;
  readonly fill: FillWatch;
  readonly outage: StoreOutage;
}
const states = new WeakMap<OpenSpace, SpaceState>();
function stateOf(space: OpenSpace): SpaceState {
  let st = states.get(space);
  if (st === undefined)
    states.set(
      space,
      (st = {
        notKept: new Map(),
        held: new Set(),
        callers: new CallerBudget(space.maxBytesPerCaller),
        fill: new FillWatch(),
        outage: new StoreOutage(),
      }),
    );
  return st;
}

const REPLAYED: HeaderEntry = Object.freeze({ name: 'idempotent-replayed', value: 'true' });

/**
 * A record in the space: `[u32 meta length][meta JSON][body bytes]`. The meta says whether it is an
 * in-flight claim (with its owner token) or a kept answer (with the request's fingerprint).
 */
interface Meta {
  readonly k: 'claim' | 'kept';
  /** The request's fingerprint (a kept answer's; a claim carries none: a retry finding it gets 409 whatever it sends). */
  readonly fp?: string;
  readonly owner?: string;
  readonly status?: number;
  readonly type?: string | null;
  readonly own?: readonly [string, string][];
}

/**
 * A kept answer in one Buffer of its own, written in place (a string body as UTF-8): it is handed
 * to an in-process store as it is (`putNow`), and nothing writes into it afterwards.
 */
function encodeRecord(head: string, body: Uint8Array | string | null): Buffer {
  const n = Buffer.byteLength(head);
  const size = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const out = Buffer.allocUnsafeSlow(4 + n + size);
  out.writeUInt32BE(n, 0);
  // A string body goes with the meta in one write: one call into C++ fewer.
  if (typeof body === 'string') out.write(head + body, 4, 'utf8');
  else {
    out.write(head, 4, 'utf8');
    if (body !== null) out.set(body, 4 + n);
  }
  return out;
}

/**
 * A claim: `[u32 meta length]{"k":"claim","owner":"…"}`, 50–60 bytes. At most 64 bytes, V8 keeps a
 * typed array in the JS heap, with no backing store to allocate and free, so it is written here
 * in JS (a native write would move it out of the heap); the owner is base64url and base 36: ASCII.
 */
function encodeClaim(owner: string): Buffer {
  const head = `{"k":"claim","owner":"${owner}"}`;
  const n = head.length;
  const out = Buffer.alloc(4 + n);
  out.writeUInt32BE(n, 0);
  for (let i = 0; i < n; i++) out[4 + i] = head.charCodeAt(i);
  return out;
}

// The meta of a kept answer: the text `JSON.stringify` gives for a `Meta` (fp is base64url, with
// nothing to escape), spelled out so no object is built to be serialised.
const keptMeta = (fp: string, a: CapturedAnswer, own: readonly [string, string][]): string =>
  `{"k":"kept","fp":"${fp}","status":${a.status},"type":${typeJson(a.type)},"own":${own.length === 0 ? '[]' : JSON.stringify(own)}}`;

/** `JSON.stringify(type)`, the text of the type seen last kept: a route answers with one type. */
function typeJson(type: string | null): string {
  if (type === null) return 'null';
  if (type !== lastType) {
    lastType = type;
    lastTypeJson = JSON.stringify(type);
  }
  return lastTypeJson;
}
let lastType: string | null = null;
let lastTypeJson = 'null';

/**
 * A claim's owner: this process's random prefix and a count, so no two claims anywhere are the
 * same bytes (a compare-and-set on one never matches another), without a random draw per request.
 */
const OWNER_PREFIX = randomBytes(12).toString('base64url');
let owners = 0;
const nextOwner = (): string => OWNER_PREFIX + (owners++).toString(36);

/** The kept answer a record holds, or null when it is an in-flight claim. */
function decodeKept(bytes: Buffer): KeptAnswer | null {
  const n = bytes.readUInt32BE(0);
  const meta = JSON.parse(bytes.toString('utf8', 4, 4 + n)) as Meta;
  if (meta.k === 'claim') return null;
  const body = bytes.subarray(4 + n);
  return {
    fp: meta.fp!,
    status: meta.status!,
    type: meta.type ?? null,
    // An ASCII body (most JSON) is the same bytes as a string, and a string leaves with the head in
    // one piece without being converted again on every replay.
    body:
      meta.type == null && body.length === 0
        ? null
        : body.length <= KeptAnswers.MAX_ENTRY_BYTES && isAscii(body)
          ? body.toString('latin1')
          : body,
    own: (meta.own ?? []).map(([name, value]) => ({ name: name.toLowerCase(), value })),
  };
}

/**
 * The key as sent: a bare value, or the quoted string form of the IETF draft (`"abc"` is `abc`).
 * Node joins repeated headers with ", "; the draft expects one key, so a value with a comma is
 * checked against the raw headers and two keys answer 400 (never the key `k1, k2`).
 */
export function readKey(
  header: string | string[] | undefined,
  rawHeaders?: readonly string[],
): string {
  if (Array.isArray(header) && header.length > 1) throw twoKeys();
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined) throw fail.badRequest('Idempotency-Key missing');
  if (rawHeaders !== undefined && raw.includes(',') && keyLines(rawHeaders) > 1) throw twoKeys();
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"'))
    key = key.slice(1, -1).replace(/\\(.)/g, '$1');
  if (key === '') throw fail.badRequest('Idempotency-Key is empty');
  // Node reads header bytes as latin1, one char a byte: the length is the size as it arrived. Only a
  // key handed in as a JS string (app.inject) can hold chars past U+00FF; those count as UTF-8.
  if (
    key.length > MAX_KEY_BYTES ||
    (key.length * 3 > MAX_KEY_BYTES &&
      NOT_LATIN1.test(key) &&
      Buffer.byteLength(key) > MAX_KEY_BYTES)
  ) {
    throw fail.badRequest('Idempotency-Key longer than %d bytes', MAX_KEY_BYTES);
  }
  return key;
}

const NOT_LATIN1 = /[^\u0000-\u00ff]/;

const twoKeys = (): Error => fail.badRequest('more than one Idempotency-Key');

/** How many Idempotency-Key lines the request's head holds. */
function keyLines(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === 15 && rawHeaders[i].toLowerCase() === 'idempotency-key') n++;
  return n;
}

/** (caller, key) as one store key that no other pair can spell: the caller's length comes first. */
export const recordKey = (caller: string, key: string): string =>
  `${caller.length}:${caller}:${key}`;

/**
 * SHA-256 over method, path, query and the raw body bytes, in one call (no Hash object per
 * request), written into a scratch Buffer that is reused when they fit (the hash is taken at once).
 */
function fingerprint(p: RequestParts): string {
  const head = `${p.method}\0${p.path}\0${p.rawQuery}\0`;
  const n = Buffer.byteLength(head);
  const size = n + p.body.length;
  const all = size <= SCRATCH.length ? SCRATCH : Buffer.allocUnsafe(size);
  all.write(head, 0, 'utf8');
  all.set(p.body, n);
  return hash('sha256', size === all.length ? all : all.subarray(0, size), 'base64url');
}
const SCRATCH = Buffer.allocUnsafeSlow(4096);

/** An idempotency outcome for the request's span and the outcome counter (telemetry on only). */
function note(c: Ctx, outcome: string): void {
  if (c.telemetry !== null) c.telemetry.note('idempotency', outcome);
}

/** Why a keep failed, for the error line. */
const why = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const unavailable = (e: unknown, c?: Ctx): never => {
  if (e instanceof CacheError) {
    if (c !== undefined) note(c, 'store_unavailable');
    throw new HttpError('StoreUnavailable', 'idempotency store unavailable');
  }
  throw e;
};

const around: AroundFactory = (record, services) => {
  const mark = record.marks.get(IDEMPOTENT);
  if (mark === undefined) return null;
  const space = findSpace(services.all(), mark.space);
  if (space === null) return null; // refused by the check below
  const by = mark.by ?? null;
  const resolvers = record.args.flatMap((a) =>
    a.kind === 'resolved' && a.type !== Tx ? [a.type as unknown as Resolvable<unknown>] : [],
  );
  const label = record.label;
  const spaceName = space.space.name;
  const ttlMs = space.ttlSeconds * 1000;
  const leaseMs = space.leaseMs;
  const answers = new KeptAnswers();
  const state = stateOf(space);
  // With no `by` the route has one caller: there is no other caller to keep room for.
  const callers = mark.by === undefined ? null : state.callers;
  const claimsInOne = space.claimsInOne && !(mark.atomic === true);
  const atomic =
    mark.atomic === true && space.store instanceof PgStore
      ? new AtomicRun({
          store: space.store,
          label,
          ttlMs,
          lockWaitMs: leaseMs,
          maxBytes: space.maxBytes,
          isolation: mark.isolation ?? 'read committed',
          encode: encodeKept,
        })
      : null;
  // What a record costs the store beyond its bytes, counted against its caller's share.
  const overhead = space.entryOverheadBytes;
  const where = `space "${space.space.name}"`;

  /** The store failed: the outage's first failure is logged with its cause; 503 (or the error as it is). */
  function storeDown(e: unknown, c: Ctx): never {
    state.outage.failed(e, c.core.log, where);
    return unavailable(e, c);
  }

  function replay(c: Ctx, a: KeptAnswer): void {
    // Kept headers were checked when the answer was first sent: no second check.
    for (let i = 0; i < a.own.length; i++) c.putHeader(a.own[i].name, a.own[i].value);
    c.putHeader(REPLAYED.name, REPLAYED.value);
    note(c, 'replayed');
    c.write(a.status, a.type, a.body, null);
  }

  // The steps run in order: the caller (its resolvers answer 401, `by` 403), the key, the raw body,
  // the store. Each goes on at once when what it needs is here, so a replay from an in-process
  // store costs one wait for the body and no async-function frame; a replay never reads the body
  // into its class.

  /** The caller's name, or a promise of it while a resolver or `by` is asynchronous. */
  function callerOf(c: Ctx, from: number): string | Promise<string> {
    for (let i = from; i < resolvers.length; i++) {
      const v = c.resolving(resolvers[i]);
      if (isThenable(v)) return Promise.resolve(v).then(() => callerOf(c, i + 1));
    }
    if (by === null) return '';
    const who = by(c);
    return isThenable(who) ? Promise.resolve(who).then(named) : named(who);
  }

  function withCaller(c: Ctx, proceed: () => unknown, caller: string): unknown {
    const key = readKey(c.req.headers['idempotency-key'], c.req.rawHeaders);
    const id = recordKey(caller, key);
    c.idempotency = new IdempotencyInfo(spaceName, caller, key, clockToken()).withSteps({
      space: space!,
      record: id,
      core: c.core,
      label,
    });
    return c.afterBodyPrint((body) => withBody(c, proceed, caller, id, body));
  }

  function withBody(
    c: Ctx,
    proceed: () => unknown,
    caller: string,
    id: string,
    body: Buffer,
  ): unknown {
    if (state.held.size !== 0 && state.held.has(id)) throw inFlight(c);
    if (state.notKept.size !== 0) refuseNotKept(c, id);
    const parts: RequestParts = { method: c.method, path: c.path, rawQuery: c.rawQuery, body };
    // An in-process store answers at once: a replay then waits for nothing but the body.
    let existing: Buffer | null | undefined;
    try {
      existing = space!.peek(id);
    } catch (e) {
      storeDown(e, c);
    }
    if (existing === undefined) {
      if (claimsInOne) return claimOrFind(c, proceed, caller, id, parts);
      return space!
        .get(id)
        .catch((e: unknown) => storeDown(e, c))
        .then((now) =>
          now !== null ? answerExisting(c, id, now, parts) : first(c, proceed, caller, id, parts),
        );
    }
    return existing !== null
      ? answerExisting(c, id, existing, parts)
      : first(c, proceed, caller, id, parts);
  }

  /**
   * On a store that claims and reads in one round trip (`RedisStore`): claim the key, or answer
   * the record found. A caller over its budget is asked about first: its retry may be a replay.
   */
  function claimOrFind(
    c: Ctx,
    proceed: () => unknown,
    caller: string,
    id: string,
    parts: RequestParts,
  ): unknown {
    const claim = encodeClaim(nextOwner());
    const bytes = id.length + claim.length + overhead;
    if (callers !== null && callers.admit(caller, id, bytes, performance.now() + leaseMs) !== 0)
      return space!
        .get(id)
        .catch((e: unknown) => storeDown(e, c))
        .then((now) =>
          now !== null ? answerExisting(c, id, now, parts) : first(c, proceed, caller, id, parts),
        );
    const fp = fingerprint(parts);
    return space!.claimOrGet(id, claim, leaseMs).then(
      (found) => {
        if (found === null) return claimed(c, proceed, caller, id, parts, fp, claim, true);
        if (found === false) return claimed(c, proceed, caller, id, parts, fp, claim, false);
        callers?.drop(caller, id);
        if (state.outage.down) state.outage.over(c.core.log, where);
        return answerExisting(c, id, found, parts);
      },
      (e: unknown) => claimFailed(c, caller, id, e),
    );
  }

  /** A retry of a request answered in this process whose answer could not be kept: refused for the record's TTL, never run again. */
  function refuseNotKept(c: Ctx, id: string): void {
    const until = state.notKept.get(id);
    if (until === undefined) return;
    const left = until - performance.now();
    if (left <= 0) {
      state.notKept.delete(id);
      return;
    }
    c.setHeader('retry-after', String(Math.ceil(left / 1000)));
    throw new HttpError(
      'AnswerNotKept',
      'Idempotency-Key was answered, but the answer could not be kept: retry later',
    );
  }

  // The first request under a key runs in steps (claim, handler, keep, send), each going on at
  // once when the store answered at once (a MemoryStore): then nothing waits, as on a plain route.
  // A store over the network makes each step a promise of the next.

  /** No record yet: claim the key, run the handler, keep its answer, send it. */
  function first(
    c: Ctx,
    proceed: () => unknown,
    caller: string,
    id: string,
    parts: RequestParts,
  ): unknown {
    const fp = fingerprint(parts);
    const claim = encodeClaim(nextOwner());
    const wait =
      callers === null
        ? 0
        : callers.admit(
            caller,
            id,
            id.length + claim.length + overhead,
            performance.now() + leaseMs,
          );
    if (wait !== 0) {
      c.setHeader('retry-after', String(Math.ceil(wait / 1000)));
      throw new HttpError(
        'CallerOverBudget',
        `${label}: this caller already holds ${space!.maxBytesPerCaller} bytes of kept answers: retry later`,
      );
    }
    if (atomic !== null) return atomicFirst(c, proceed, caller, id, parts, fp, claim);
    let won: boolean | undefined;
    try {
      won = space!.putIfAbsentNow(id, claim, leaseMs);
    } catch (e) {
      return claimFailed(c, caller, id, e);
    }
    if (won === undefined)
      return space!.putIfAbsent(id, claim, leaseMs).then(
        (w) => claimed(c, proceed, caller, id, parts, fp, claim, w),
        (e: unknown) => claimFailed(c, caller, id, e),
      );
    return claimed(c, proceed, caller, id, parts, fp, claim, won);
  }

  /** The claim, the handler and the keep in one transaction; a key found committed is answered from the store. */
  function atomicFirst(
    c: Ctx,
    proceed: () => unknown,
    caller: string,
    id: string,
    parts: RequestParts,
    fp: string,
    claim: Buffer,
  ): Promise<unknown> {
    return atomic!.run(c, { proceed, key: space!.keyOf(id), claim, fp }).then(
      (out) => {
        if (out.kind === 'taken') return claimed(c, proceed, caller, id, parts, fp, claim, false);
        callers?.set(caller, id, id.length + out.kept.length, performance.now() + ttlMs);
        note(c, 'stored');
        send(c, out.answer);
      },
      (e: unknown) => {
        if (e instanceof CacheError) return claimFailed(c, caller, id, e);
        callers?.drop(caller, id);
        throw e;
      },
    );
  }

  function claimFailed(c: Ctx, caller: string, id: string, e: unknown): never {
    callers?.drop(caller, id);
    if (e instanceof CacheError && e.code === 'Full') {
      c.setHeader('retry-after', '1');
      throw new HttpError('StoreFull', 'idempotency store full');
    }
    return storeDown(e, c);
  }

  /** The claim was written (`won`) or found taken: run the handler, or answer what is there. */
  function claimed(
    c: Ctx,
    proceed: () => unknown,
    caller: string,
    id: string,
    parts: RequestParts,
    fp: string,
    claim: Buffer,
    won: boolean,
  ): unknown {
    if (state.outage.down) state.outage.over(c.core.log, where);
    if (!won) {
      callers?.drop(caller, id);
      return space!
        .get(id)
        .catch((e: unknown) => storeDown(e, c))
        .then((now) => {
          if (now === null) throw inFlight(c); // taken and gone in between: let the client retry
          return answerExisting(c, id, now, parts);
        });
    }
    // The headers set before the handler (middleware's): those the handler adds through the Ctx
    // (setHeader, setCookie, a Session write) are part of its answer and kept with it.
    const before = copyBag(c.headers());
    c.capture = true;
    state.held.add(id);
    // A handler that ran and whose answer was then refused (a run-time @Returns check) has done its
    // side effects: its 500 is the answer kept (`keepRefused`), never a release that runs it again.
    let running: unknown;
    try {
      running = proceed();
    } catch (e) {
      if (c.handled) return keepRefused(c, e, () => keep(c, caller, id, fp, claim, before));
      return release(c, caller, id, claim, e);
    }
    if (isThenable(running))
      return renewWhile(c, id, claim, running).then(
        () => keep(c, caller, id, fp, claim, before),
        (e: unknown) =>
          c.handled
            ? keepRefused(c, e, () => keep(c, caller, id, fp, claim, before))
            : release(c, caller, id, claim, e),
      );
    return keep(c, caller, id, fp, claim, before);
  }

  /** The handler failed: give the key back (if the store still has this claim) and fail with its error. */
  function release(c: Ctx, caller: string, id: string, claim: Buffer, e: unknown): Promise<never> {
    c.endCapture();
    callers?.drop(caller, id);
    const answered = dropClaim(id, claim);
    if (typeof answered === 'boolean') {
      state.held.delete(id);
      if (!answered) notReleased(c);
      throw e;
    }
    // Rejected with the handler's error once the store has released the claim (or failed to).
    return answered.then((ok) => {
      state.held.delete(id);
      if (!ok) notReleased(c);
      return Promise.reject(e);
    });
  }

  /**
   * Deletes the claim if the store still holds it. Whether the store answered: at once when it
   * can (a memory store), else once it has.
   */
  function dropClaim(id: string, claim: Buffer): boolean | Promise<boolean> {
    let gone: boolean | undefined;
    try {
      gone = space!.delNow(id, { expect: claim });
    } catch {
      return false;
    }
    if (gone !== undefined) return true;
    return space!.del(id, { expect: claim }).then(
      () => true,
      () => false,
    );
  }

  function notReleased(c: Ctx): void {
    c.core.log(
      `${label}: idempotency claim not released (store unavailable); it lapses in ${Math.ceil(leaseMs / 1000)} s`,
    );
  }

  /** The handler answered (captured): keep its answer over the claim, then send it. */
  function keep(
    c: Ctx,
    caller: string,
    id: string,
    fp: string,
    claim: Buffer,
    before: HeaderBag | null,
  ): unknown {
    const answer = c.captured!;
    c.endCapture();
    const kept = encodeKept(c, answer, before, fp);
    if (kept.length > space!.maxBytes) {
      c.core.log(
        `${label}: answer of ${kept.length} bytes is larger than the space's maxBytes (${space!.maxBytes}): sent, not kept`,
      );
      note(c, 'not_kept');
      callers?.drop(caller, id);
      const answered = dropClaim(id, claim);
      if (typeof answered !== 'boolean')
        return answered.then(() => (state.held.delete(id), send(c, answer)));
      state.held.delete(id);
      return send(c, answer);
    }
    let stored: boolean | undefined;
    try {
      stored = space!.putNow(id, kept, ttlMs, { expect: claim });
    } catch (e) {
      return settled(c, caller, id, answer, kept, false, why(e));
    }
    if (stored === undefined)
      return space!.put(id, kept, ttlMs, { expect: claim }).then(
        (s) => settled(c, caller, id, answer, kept, s, 'the claim lapsed'),
        (e: unknown) => settled(c, caller, id, answer, kept, false, why(e)),
      );
    return settled(c, caller, id, answer, kept, stored, 'the claim lapsed');
  }

  /** The keep is done (`stored`, or not and `why`): count it, remember it, send the answer. */
  function settled(
    c: Ctx,
    caller: string,
    id: string,
    answer: CapturedAnswer,
    kept: Buffer,
    stored: boolean,
    why: string,
  ): void {
    if (stored) {
      callers?.set(caller, id, id.length + kept.length + overhead, performance.now() + ttlMs);
      note(c, 'stored');
      state.fill.check(space!.fill(), c.core.log, `space "${space!.space.name}"`);
    } else {
      note(c, 'not_kept');
      // Sent but not kept: a retry must not run the handler again. The claim (if the store still
      // has it) holds the key for at most the lease; this process refuses retries for as long as
      // the answer would have been kept (other instances: see the guide, "at least once").
      if (state.notKept.size >= MAX_NOT_KEPT)
        state.notKept.delete(state.notKept.keys().next().value!);
      state.notKept.set(id, performance.now() + ttlMs);
      c.core.log(
        `error: ${label}: answer to Idempotency-Key ${JSON.stringify(id)} sent but not kept (${why}); retries to this process are refused 503 for ${Math.ceil(ttlMs / 1000)} s`,
      );
    }
    state.held.delete(id);
    send(c, answer);
  }

  function send(c: Ctx, answer: CapturedAnswer): void {
    // A refused answer's kept 500: the app answers its error itself (logged, observers told).
    if (answer.status >= 400 && refusals.has(answer)) throw refusals.get(answer);
    c.write(answer.status, answer.type, answer.body, answer.own);
  }

  // Claims whose handlers are running, renewed together by one timer every third of the lease
  // (a claim made just before a tick is renewed early, which only lengthens its hold); the timer
  // runs only while a claim is held. No timer and no async frame per request.
  const holding = new Set<Holding>();
  let renewer: NodeJS.Timeout | null = null;
  const renewAll = (): void => {
    for (const h of holding) renew(h);
  };

  /** The renewal timer runs only while a claim is held. */
  function stopIfIdle(): void {
    if (holding.size === 0 && renewer !== null) {
      clearInterval(renewer);
      renewer = null;
    }
  }

  function renew(h: Holding): void {
    space!.put(h.id, h.claim, leaseMs, { expect: h.claim }).then(
      (held) => {
        if (held || !holding.has(h)) return;
        // Lost (the store restarted empty, failed over, or was paused past the lease): said once,
        // not renewed again. This process still refuses retries (held keys), and the answer, which
        // cannot be kept over a claim that is gone, is marked not kept when the handler ends.
        holding.delete(h);
        stopIfIdle();
        h.core.log(
          `error: ${label}: claim on Idempotency-Key ${JSON.stringify(h.id)} was lost while the handler ran`,
        );
      },
      () =>
        h.core.log(
          `warning: ${label}: claim on Idempotency-Key ${JSON.stringify(h.id)} not renewed (store unavailable)`,
        ),
    );
  }

  /** Settles as the handler does, the claim renewed meanwhile. */
  function renewWhile(
    c: Ctx,
    id: string,
    claim: Buffer,
    running: PromiseLike<unknown>,
  ): Promise<unknown> {
    const h: Holding = { id, claim, core: c.core };
    holding.add(h);
    renewer ??= setInterval(renewAll, Math.max(1, Math.floor(leaseMs / 3)));
    const done = (): void => {
      holding.delete(h);
      stopIfIdle();
    };
    return Promise.resolve(running).then(
      (v) => (done(), v),
      (e: unknown) => (done(), Promise.reject(e)),
    );
  }

  function answerExisting(c: Ctx, id: string, bytes: Buffer, parts: RequestParts): void {
    if (state.outage.down) state.outage.over(c.core.log, where);
    const entry = answers.find(id, bytes, decodeKept);
    if (entry === null) throw inFlight(c);
    if (!KeptAnswers.known(entry, parts)) {
      if (fingerprint(parts) !== entry.answer.fp) {
        note(c, 'mismatch');
        throw fail.unprocessable('Idempotency-Key was used for a different request');
      }
      KeptAnswers.learn(entry, parts);
    }
    replay(c, entry.answer);
  }

  return (c, proceed) => {
    const caller = callerOf(c, 0);
    return isThenable(caller)
      ? caller.then((name) => withCaller(c, proceed, name))
      : withCaller(c, proceed, caller);
  };
};

/** The kept record of `answer`: its status, type, body and the headers the handler added (those not in `before`). */
function encodeKept(c: Ctx, answer: CapturedAnswer, before: HeaderBag | null, fp: string): Buffer {
  const own = added(before, c.headers());
  if (answer.own !== null) for (const h of answer.own) own.push([h.name, h.value]);
  return encodeRecord(keptMeta(fp, answer, own), answer.body);
}

/**
 * Kept answers that stand for an error: the 500 of an answer refused after its handler ran. Sending
 * one throws the error instead, so the app answers it as it answers any error (the same bytes, as
 * it maps the error the same way) and logs it once; a retry replays the kept bytes.
 */
const refusals = new WeakMap<CapturedAnswer, unknown>();

/** Keeps the failure answer of `e` as the handler's answer (`keep` sends it, which throws `e`). */
function keepRefused(c: Ctx, e: unknown, keep: () => unknown): unknown {
  const failure = mapError(e, '');
  const answer: CapturedAnswer = {
    status: failure.status,
    type: c.core.failureType,
    body: c.core.failureBody({
      status: failure.status,
      message: failure.message,
      code: failure.code,
      details: failure.details,
      requestId: c.requestId(),
      path: c.path,
    }),
    own: null,
  };
  refusals.set(answer, e);
  c.captured = answer;
  return keep();
}

/** A claim held while its handler runs. */
interface Holding {
  readonly id: string;
  readonly claim: Buffer;
  readonly core: Ctx['core'];
}

/** The headers in `now` that were not in `before`, in order (each added Set-Cookie line one entry). */
function added(before: HeaderBag | null, now: HeaderBag | null): [string, string][] {
  const out: [string, string][] = [];
  if (now === null) return out;
  for (const k in now) {
    const v = now[k];
    const was = before?.[k];
    if (Array.isArray(v)) {
      for (const line of v) if (!(Array.isArray(was) && was.includes(line))) out.push([k, line]);
    } else if (v !== was) out.push([k, v]);
  }
  return out;
}

/**
 * The caller `by` named: null or undefined is no caller (403); anything but a non-empty string is
 * the program's mistake (500, the route named in the log), so a function, an object or a
 * prototype member found by a lookup can never become a caller whose answers others replay (the
 * log line names the route).
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

function inFlight(c: Ctx): Error {
  note(c, 'in_flight');
  c.setHeader('retry-after', '1');
  return fail.conflict('Idempotency-Key is still being answered');
}

function findSpace(provided: readonly unknown[], decl: object): OpenSpace | null {
  for (const p of provided) if (p instanceof OpenSpace && p.space === decl) return p;
  return null;
}

/** What an idempotent route may not answer with, by kind: a kept answer could not replay it. */
const UNKEEPABLE: Partial<Record<Contract['kind'], string>> = {
  file: 'FileBody',
  redirect: 'Redirect',
  versioned: 'Versioned',
  events: 'EventStream',
};

/** The first kind an idempotent route may not answer with, wherever it sits in the contract (every `Reply` variant too). */
function unkeepable(contract: Contract | null): string | null {
  if (contract === null) return null;
  const own = UNKEEPABLE[contract.kind];
  if (own !== undefined) return own;
  for (const inner of innerContracts(contract)) {
    const found = unkeepable(inner);
    if (found !== null) return found;
  }
  return null;
}

/** Methods that change nothing, so a retry is harmless without a key. */
const SAFE_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];

/** What was passed to `@Idempotent` instead of a Space declaration, or null when it is one. */
function notASpace(x: unknown): string | null {
  if (x instanceof OpenSpace)
    return `the opened space "${x.space.name}" (Space.open(store) gives what app.provide takes)`;
  const decl = x as Partial<SpaceDecl> | null;
  if (
    typeof x === 'object' &&
    decl !== null &&
    typeof decl.name === 'string' &&
    typeof decl.open === 'function' &&
    typeof decl.ttlSeconds === 'number'
  )
    return null;
  const what =
    x === null || x === undefined
      ? String(x)
      : typeof x === 'function'
        ? `the class ${(x as Function).name || 'anonymous'}`
        : typeof x === 'object'
          ? `an object that is not a Space (${Object.keys(x).slice(0, 4).join(', ') || 'no keys'})`
          : `${typeof x} ${JSON.stringify(x)}`;
  return what;
}

const check: RecordCheck = (record: RouteRecord, services, problems) => {
  const mark = record.marks.get(IDEMPOTENT);
  checkAtomic(record, mark, services.all(), problems);
  if (mark === undefined) return;
  const label = record.label;
  if (SAFE_METHODS.includes(record.method))
    problems.push(
      `${label}: @Idempotent on ${record.method}: a ${record.method} is idempotent already (a retry cannot do anything twice): take @Idempotent off`,
    );
  const given = notASpace(mark.space);
  if (given !== null)
    problems.push(
      `${label}: @Idempotent was given ${given}; it takes the Space declaration (const Orders = Space('orders', { … }); @Idempotent(Orders)) and the opened space is provided (app.provide(Orders.open(store)))`,
    );
  else if (findSpace(services.all(), mark.space) === null) {
    const name = (mark.space as SpaceDecl).name;
    problems.push(
      `${label}: @Idempotent space "${name}" is not provided: app.provide(${name}.open(store))`,
    );
  }
  const kind = unkeepable(record.contract);
  if (kind !== null)
    problems.push(
      `${label}: @Idempotent cannot keep ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind} answer`,
    );
  if (record.contract === null && record.args.some((a) => a.kind === 'ctx')) {
    problems.push(
      `${label}: @Idempotent route answers through the Ctx: declare @Returns(...) and return the value so it can be kept`,
    );
  }
  if (
    mark.by === undefined &&
    record.args.some((a) => a.kind === 'authorization' || (a.kind === 'resolved' && a.type !== Tx))
  ) {
    problems.push(
      `${label}: @Idempotent without by on a route with more than one caller (it takes an Authorization or a resolved caller): name the caller with { by }`,
    );
  }
};

/** Refusals of atomic routes: a store that cannot, a `Tx` where there is no transaction. */
function checkAtomic(
  record: RouteRecord,
  mark: IdempotentMark | undefined,
  provided: readonly unknown[],
  problems: string[],
): void {
  const label = record.label;
  const wantsTx = record.args.some((a) => a.kind === 'resolved' && a.type === Tx);
  if (wantsTx && mark?.atomic !== true)
    problems.push(
      `${label}: a Tx parameter needs an atomic route: @Idempotent(Space, { atomic: true }) on a space opened on a PgStore`,
    );
  if (mark === undefined || mark.atomic === undefined) return;
  if (typeof mark.atomic !== 'boolean')
    problems.push(`${label}: @Idempotent atomic must be true or false`);
  const isolation: unknown = mark.isolation;
  if (isolation !== undefined && !ISOLATIONS.includes(isolation as Isolation))
    problems.push(
      `${label}: @Idempotent isolation must be one of ${ISOLATIONS.map((i) => `'${i}'`).join(', ')}`,
    );
  if (mark.atomic !== true) return;
  const space = findSpace(provided, mark.space);
  if (space !== null && !(space.store instanceof PgStore))
    problems.push(
      `${label}: @Idempotent atomic: true needs a space opened on a PgStore (space "${space.space.name}" is on ${space.store.constructor.name}): only Postgres can commit the claim, the handler's writes and the answer together`,
    );
  if (record.contract?.kind === 'events' || unkeepable(record.contract) !== null)
    problems.push(
      `${label}: @Idempotent atomic: true cannot stream its answer: the answer commits with the transaction, so it is whole before it is sent`,
    );
}

const ISOLATIONS: readonly Isolation[] = ['read committed', 'repeatable read', 'serializable'];

/**
 * The API description of an idempotent route: the required key, the extra answers, and the
 * replay marker on every success answer (OPEN-15). 403 only when `by` can refuse (OPEN-14).
 */
const describe = (record: RouteRecord, op: OperationSink): void => {
  const mark = record.marks.get(IDEMPOTENT);
  if (mark === undefined) return;
  // The draft's expiry (IETF httpapi-idempotency-key §2.3): how long a key's answer is kept.
  const ttl = (mark.space as { readonly ttlSeconds?: unknown }).ttlSeconds;
  const kept = typeof ttl === 'number' ? ` Answers are kept ${ttl} s after the first.` : '';
  if (typeof ttl === 'number') op.extension('x-idempotency-key-expiry-seconds', ttl);
  op.parameter({
    name: 'Idempotency-Key',
    in: 'header',
    description: `Names this request: retries with the same key get the kept answer. At most ${MAX_KEY_BYTES} bytes.${kept}`,
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_BYTES },
  });
  for (const status of op.answerStatuses) {
    op.header(status, 'Idempotent-Replayed', {
      description: 'Present (true) when this is the kept answer replayed',
      required: false,
      schema: { type: 'string', enum: ['true'] },
    });
  }
  op.failure(400, 'Idempotency-Key missing, empty or too long');
  if (mark.by !== undefined) op.failure(403, 'no caller for this idempotent request');
  op.failure(409, 'Idempotency-Key is still being answered', {
    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  });
  op.failure(422, 'Idempotency-Key was used for a different request');
  op.failure(503, 'the idempotency store cannot be reached or has no room'); // issue 24 §3
};

/** Idempotent replay: the Refusals of `@Idempotent`, the step around its handler and its API description. */
export const idempotency: Capability = { checks: [check], arounds: [around], describe };
