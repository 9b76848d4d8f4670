import { CacheError, type KeepMode } from '../../../cache';
import { HttpError, clientGone } from '../../core/errors';
import { setTimeout as sleep } from 'node:timers/promises';
import { copyBag, type HeaderBag } from '../../core/header-rules';
import { type Ctx } from '../../request/ctx';
import { type CapturedAnswer } from '../../request/exchange';
import { isThenable } from '../../core/thenable';
import type { RequestParts } from './kept-answers';
import { failureAnswer, sendAnswer } from './failure-answer';
import { decodeKept, encodeClaim, encodeKept, fingerprint, nextOwner } from './kept-record';
import { inFlight, note } from './outcomes';
import { namedKey } from './read-key';
import type { RouteSteps } from './route-steps';
import { then } from './then';
import type { Holding } from './claim-renewer';
import { exchangeOf } from '../../request/exchange-of';

const NO_BYTES: Buffer = Buffer.alloc(0);
/** A waiting duplicate's first poll of the store, doubling up to the last. */
const FIRST_POLL_MS = 10;
const LAST_POLL_MS = 200;

/**
 * One request on an `@Idempotent` route, from its body on: a replay of the record found, or a first
 * request that goes claim → run → keep → settle (or release when the handler failed). Each step
 * goes on at once when the store answered at once (a `MemoryStore`): then nothing waits, as on a
 * plain route. A store over the network makes each step a promise of the next.
 */
export class IdempotentRequest {
  readonly #r: RouteSteps;
  readonly #c: Ctx;
  readonly #proceed: () => unknown;
  readonly #caller: string;
  readonly #id: string;
  #parts: RequestParts | null = null;
  #fp = '';
  #claim = NO_BYTES;
  /** When the claim was sent (performance.now()): its lease cannot have started before. */
  #sentAt = 0;
  /** The claim held while the handler runs, with its lease. */
  #holding: Holding | null = null;
  /** The headers set before the handler (middleware's): those it adds are part of its answer. */
  #before: HeaderBag | null = null;
  /** When a duplicate waiting for the key's answer stops waiting (performance.now()). */
  #waitUntil: number | undefined;

  /** `c.idempotency` names the caller and key already; `id` is their record key. */
  constructor(route: RouteSteps, c: Ctx, proceed: () => unknown, id: string) {
    this.#r = route;
    this.#c = c;
    this.#proceed = proceed;
    this.#caller = c.idempotency!.caller;
    this.#id = id;
  }

  /** The body is here: refuse what this process knows is in flight or answered, then look for a record. */
  start(body: Buffer): unknown {
    const r = this.#r;
    const c = this.#c;
    const state = r.state;
    this.#parts = { method: c.method, path: c.path, rawQuery: c.rawQuery, body };
    if (state.held.size !== 0 && state.held.has(this.#id)) {
      if (r.waits === null) throw inFlight(c);
      return this.#waitForAnswer();
    }
    if (state.notKept.size !== 0) r.refuseNotKept(c, this.#id);
    if (r.claimsInOne) return this.#claimOrFind();
    let record;
    try {
      record = r.space.get(this.#id);
    } catch (e) {
      return r.storeDown(e, c);
    }
    return then(
      record,
      (found) => this.#found(found),
      (e) => r.storeDown(e, c),
    );
  }

  #found(record: Buffer | null): unknown {
    if (record === null) return this.#claimKey();
    if (this.#r.waits !== null && decodeKept(record) === null) return this.#waitForAnswer();
    return this.#r.answerExisting(this.#c, this.#id, record, this.#parts!);
  }

  /** No record yet: claim the key. */
  #claimKey(): unknown {
    const r = this.#r;
    this.#fp = fingerprint(this.#parts!);
    this.#claim = encodeClaim(nextOwner());
    this.#admit();
    let won;
    try {
      this.#sentAt = performance.now();
      won = r.space.claimWithToken(this.#id, this.#claim, r.leaseMs);
    } catch (e) {
      return this.#claimFailed(e);
    }
    return then(
      won,
      (w) => this.#claimed(w),
      (e) => this.#claimFailed(e),
    );
  }

  /**
   * On a store that claims and reads in one round trip (`RedisStore`): claim the key, or answer
   * the record found. A caller over its budget is asked about first: its retry may be a replay.
   */
  #claimOrFind(): unknown {
    const r = this.#r;
    const c = this.#c;
    const claim = encodeClaim(nextOwner());
    const size = this.#id.length + claim.length + r.overhead;
    if (
      r.callers !== null &&
      r.callers.admit(this.#caller, this.#id, size, performance.now() + r.leaseMs) !== 0
    )
      return then(
        r.space.get(this.#id),
        (found) => this.#found(found),
        (e) => r.storeDown(e, c),
      );
    this.#fp = fingerprint(this.#parts!);
    this.#claim = claim;
    let answer;
    try {
      this.#sentAt = performance.now();
      answer = r.space.claimWithToken(this.#id, claim, r.leaseMs);
    } catch (e) {
      return this.#claimFailed(e);
    }
    return then(
      answer,
      (a) => this.#claimed(a),
      (e) => this.#claimFailed(e),
    );
  }

  /** Counts the claim against its caller's share: 503 with Retry-After when the caller holds too much. */
  #admit(): void {
    const { callers, overhead, leaseMs } = this.#r;
    if (callers === null) return;
    const id = this.#id;
    const size = id.length + this.#claim.length + overhead;
    const wait = callers.admit(this.#caller, id, size, performance.now() + leaseMs);
    if (wait === 0) return;
    this.#c.setHeader('retry-after', String(Math.ceil(wait / 1000)));
    throw new HttpError(
      'CallerOverBudget',
      `${this.#r.label}: this caller already holds ${this.#r.space.maxBytesPerCaller} bytes of kept answers: retry later`,
    );
  }

  #claimFailed(e: unknown): never {
    this.#r.callers?.drop(this.#caller, this.#id);
    if (e instanceof CacheError && e.code === 'Full') {
      this.#c.setHeader('retry-after', '1');
      throw new HttpError('StoreFull', 'idempotency store full');
    }
    return this.#r.storeDown(e, this.#c);
  }

  /**
   * What the claim answered: won (its fencing token), so run the handler; the record found; or
   * taken and not read (null; false: a claim over the space's maxBytes), so read what is there.
   */
  #claimed(answer: bigint | Buffer | null | false): unknown {
    const r = this.#r;
    const c = this.#c;
    if (r.state.outage.down) r.state.outage.over(exchangeOf(c).core.log, r.where);
    if (typeof answer === 'bigint') {
      exchangeOf(c).idempotency!.token = answer;
      return this.#run();
    }
    r.callers?.drop(this.#caller, this.#id);
    if (answer !== null && answer !== false)
      return r.answerExisting(c, this.#id, answer, this.#parts!);
    let record;
    try {
      record = r.space.get(this.#id);
    } catch (e) {
      return r.storeDown(e, c);
    }
    return then(
      record,
      (found) => {
        if (found === null) throw inFlight(c); // taken and gone in between: let the client retry
        if (r.waits !== null && decodeKept(found) === null) return this.#waitForAnswer();
        return r.answerExisting(c, this.#id, found, this.#parts!);
      },
      (e) => r.storeDown(e, c),
    );
  }

  /** Runs the handler with its answer captured, the claim renewed (and its lease checked) while it runs. */
  #run(): unknown {
    const c = this.#c;
    const renewer = this.#r.renewer;
    this.#before = copyBag(exchangeOf(c).out);
    exchangeOf(c).capture = true;
    this.#r.state.held.add(this.#id);
    const h = (this.#holding = renewer.hold(c, this.#id, this.#claim, this.#sentAt));
    if (this.#r.atomic !== null) return this.#runAtomic(h);
    let running: unknown;
    try {
      running = this.#proceed();
    } catch (e) {
      renewer.end(h);
      return this.#failed(e);
    }
    if (!isThenable(running)) {
      renewer.end(h);
      return this.#keep(false);
    }
    return renewer.while(h, running).then(
      () => this.#keep(false),
      (e: unknown) => this.#failed(e),
    );
  }

  /**
   * The claim won, the handler runs with its transaction opened on its first query; its writes
   * and the kept answer commit together. Any failure rolls back and gives the key back.
   */
  #runAtomic(h: Holding): Promise<unknown> {
    const r = this.#r;
    const c = this.#c;
    const job = {
      proceed: this.#proceed,
      key: r.space.keyOf(this.#id),
      claim: this.#claim,
      fp: this.#fp,
    };
    return r.renewer.while(h, r.atomic!.run(c, job)).then(
      (out) => {
        r.state.held.delete(this.#id);
        const size = this.#id.length + out.kept.length + r.overhead;
        r.callers?.set(this.#caller, this.#id, size, performance.now() + r.ttlMs);
        note(c, 'stored');
        sendAnswer(c, out.answer);
      },
      (e: unknown) => this.#release(e instanceof CacheError ? this.#storeError(e) : e),
    );
  }

  /** The error a failure of the store answers with (503, named), the outage noted. */
  #storeError(e: CacheError): unknown {
    try {
      return this.#claimFailed(e);
    } catch (answer) {
      return answer;
    }
  }

  /**
   * A duplicate of a key in flight, on an atomic route: waits for the first request's answer off
   * the pool (a poll of the store, backing off, with no connection held between polls) and
   * replays it; runs itself if the key is given back meanwhile; 409 with Retry-After past the
   * route's `waitMs`, or at once when `maxWaiters` already wait on the key here.
   */
  async #waitForAnswer(): Promise<unknown> {
    const r = this.#r;
    const c = this.#c;
    const id = this.#id;
    const { waitMs, maxWaiters } = r.waits!;
    const waiting = r.state.waiting;
    const n = waiting.get(id) ?? 0;
    if (n >= maxWaiters) throw inFlight(c);
    waiting.set(id, n + 1);
    this.#waitUntil ??= performance.now() + waitMs;
    try {
      for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, LAST_POLL_MS)) {
        const left = this.#waitUntil - performance.now();
        if (left <= 0) throw inFlight(c);
        await sleep(Math.min(pause, left));
        if (exchangeOf(c).res.destroyed) throw clientGone();
        let found;
        try {
          found = await r.space.get(id);
        } catch (e) {
          return r.storeDown(e, c);
        }
        if (found === null) return this.#claimKey();
        if (decodeKept(found) !== null) return r.answerExisting(c, id, found, this.#parts!);
      }
    } finally {
      const left = waiting.get(id)! - 1;
      if (left === 0) waiting.delete(id);
      else waiting.set(id, left);
    }
  }

  /**
   * The handler (or reading its arguments) failed. A handler that ran and whose answer was then
   * refused (a run-time @Returns check) has done its side effects: its 500 is kept whatever the
   * space's `keep`, never released to run again. On a space that keeps `'all'`, a failure the
   * handler threw is kept too; otherwise the key is released for a retry.
   */
  #failed(e: unknown): unknown {
    const c = this.#c;
    // A failure of a run whose lease was lost (its signal aborted: LeaseLost) is never kept: the
    // key may be another instance's now, and a retry must find it free, not a kept 503.
    const lost = this.#holding !== null && this.#holding.lease.lost;
    const kept =
      exchangeOf(c).handled || (this.#r.keep === 'all' && exchangeOf(c).invoked && !lost);
    if (!kept) return this.#release(e);
    exchangeOf(c).captured = failureAnswer(c, e);
    return this.#keep(exchangeOf(c).handled);
  }

  /** Gives the key back (if the store still has this claim) and fails with the handler's error. */
  #release(e: unknown): unknown {
    const r = this.#r;
    const c = this.#c;
    exchangeOf(c).endCapture();
    note(c, 'released');
    r.callers?.drop(this.#caller, this.#id);
    return then(this.#dropClaim(), (answered) => {
      r.state.held.delete(this.#id);
      if (!answered)
        exchangeOf(c).core.log(
          `${r.label}: idempotency claim not released (store unavailable); it lapses in ${Math.ceil(r.leaseMs / 1000)} s`,
        );
      throw e;
    });
  }

  /** Deletes the claim if the store still holds it. Whether the store answered. */
  #dropClaim(): boolean | Promise<boolean> {
    let gone;
    try {
      gone = this.#r.space.del(this.#id, { expect: this.#claim });
    } catch {
      return false;
    }
    return then(
      gone,
      () => true,
      () => false,
    );
  }

  /** The handler answered (captured): keep its answer over the claim (unless the space's `keep` says not, or it is too large), then send it. */
  #keep(always: boolean): unknown {
    const r = this.#r;
    const c = this.#c;
    const answer = exchangeOf(c).captured!;
    exchangeOf(c).endCapture();
    if (!always && !keeps(r.keep, answer.status)) return this.#sendUnkept(answer, 'released');
    const kept = encodeKept(c, answer, this.#before, this.#fp);
    if (kept.length > r.space.maxBytes) {
      exchangeOf(c).core.log(
        `${r.label}: answer of ${kept.length} bytes is larger than the space's maxBytes (${r.space.maxBytes}): sent, not kept`,
      );
      return this.#sendUnkept(answer, 'not_kept');
    }
    let stored;
    try {
      stored = r.space.put(this.#id, kept, r.ttlMs, { expect: this.#claim });
    } catch (e) {
      return this.#settle(answer, kept, false, why(e));
    }
    return then(
      stored,
      (s) => this.#settle(answer, kept, s, 'the claim lapsed'),
      (e) => this.#settle(answer, kept, false, why(e)),
    );
  }

  /** Sends an answer that is not kept, the key given back first: a retry runs the handler again. */
  #sendUnkept(answer: CapturedAnswer, outcome: string): unknown {
    note(this.#c, outcome);
    this.#r.callers?.drop(this.#caller, this.#id);
    return then(this.#dropClaim(), () => {
      this.#r.state.held.delete(this.#id);
      sendAnswer(this.#c, answer);
    });
  }

  /** The keep is done (`stored`, or not and `reason`): count it, remember it, send the answer. */
  #settle(answer: CapturedAnswer, kept: Buffer, stored: boolean, reason: string): void {
    const r = this.#r;
    const c = this.#c;
    const id = this.#id;
    if (stored) {
      r.callers?.set(
        this.#caller,
        id,
        id.length + kept.length + r.overhead,
        performance.now() + r.ttlMs,
      );
      note(c, 'stored');
      r.state.fill.check(r.space.fill(), exchangeOf(c).core.log, r.where);
    } else {
      note(c, 'not_kept');
      // Sent but not kept: a retry must not run the handler again. The claim (if the store still
      // has it) holds the key for at most the lease; this process refuses retries for as long as
      // the answer would have been kept (other instances: see the guide, "at least once").
      r.state.notKeptFor(id, r.ttlMs);
      exchangeOf(c).core.log(
        `error: ${r.label}: answer to ${namedKey(this.#caller, c.idempotency!.key)} sent but not kept (${reason}); retries to this process are refused 503 for ${Math.ceil(r.ttlMs / 1000)} s`,
      );
    }
    r.state.held.delete(id);
    sendAnswer(c, answer);
  }
}

/** Whether a space that keeps `mode` keeps an answer of `status` (a failure thrown is decided before). */
export function keeps(mode: KeepMode, status: number): boolean {
  return mode === 'all' || status < (mode === 'success' ? 400 : 500);
}

/** Why a keep failed, for the error line. */
const why = (e: unknown): string => (e instanceof Error ? e.message : String(e));
