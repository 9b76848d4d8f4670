import { copyBag, type HeaderBag } from '../../core/header-rules';
import { Failure, HttpError } from '../../core/errors';
import { fail } from '../../core/fail';
import type { Ctx } from '../../request/ctx';
import type { CapturedAnswer } from '../../request/exchange';
import { gateOutside } from '../../request/outside-gate';
import { AtomicTx, retryableCode, type AtomicTxSettings } from './atomic-tx';
import { bindTx, Tx } from './tx';
import { exchangeOf } from '../../request/exchange-of';

export type { Isolation } from './tx';
export { poolExhausted } from './atomic-tx';

/** How often an atomic transaction is tried when Postgres reports a serialization failure or a deadlock. */
export const ATOMIC_ATTEMPTS = 3;

/** @internal What one atomic route needs, fixed at build. */
export interface AtomicSettings extends AtomicTxSettings {
  readonly maxBytes: number;
  /** The kept record of a captured answer (the idempotency step's format). */
  readonly encode: (c: Ctx, answer: CapturedAnswer, before: HeaderBag | null, fp: string) => Buffer;
}

/** @internal One request's part: the handler step, its key in the store, its claim (won) and its fingerprint. */
export interface AtomicJob {
  readonly proceed: () => unknown;
  readonly key: string;
  readonly claim: Buffer;
  readonly fp: string;
}

/** @internal What a run committed: the answer and its kept record. */
export interface AtomicOutcome {
  readonly answer: CapturedAnswer;
  readonly kept: Buffer;
}

/**
 * @internal
 * Runs the handler of an atomic idempotent request whose claim was won (committed on its own, with
 * its lease, before this): the handler's transaction opens at its first `tx.query`, and its
 * writes commit together with the kept answer after a check, in that transaction, that the claim
 * is still this request's. Outbound calls and steps made before the first query hold no
 * connection and no lock; made while the transaction is open they are refused, unless the route
 * holds it across them. A crash before the commit leaves the claim, which lapses with its lease:
 * the rerun finds the steps recorded and sends each outbound call the key it had.
 */
export class AtomicRun {
  readonly #s: AtomicSettings;

  constructor(settings: AtomicSettings) {
    this.#s = settings;
  }

  /** Runs the request, trying again (a few times) on a serialization failure or deadlock. */
  async run(c: Ctx, job: AtomicJob): Promise<AtomicOutcome> {
    const before = copyBag(exchangeOf(c).out);
    // One `Tx` for the request (resolved values are worked out once per request), each of its
    // queries going to the attempt running now.
    let tx!: AtomicTx;
    const run = exchangeOf(c).idempotency;
    const handed = new Tx({
      query: (text, values) => tx.query(text, values, run?.stepNow() ?? null),
    });
    for (let attempt = 1; ; attempt++) {
      tx = new AtomicTx(this.#s, c, job.key);
      try {
        return await this.#once(c, job, { tx, handed, before });
      } catch (e) {
        await tx.end();
        const code = tx.cutBy === null ? retryableCode(e) : null;
        if (code === null) throw this.#unavailable(c, tx.cutBy ?? databaseFailed(e, tx.failure));
        if (attempt >= ATOMIC_ATTEMPTS) throw conflict(c, this.#s.label, attempt, code);
        // The attempt left nothing: its answer and the headers it set go too, and the next one
        // counts its outbound calls and steps from the start, so each call gets the same key.
        exchangeOf(c).endCapture();
        exchangeOf(c).captured = null;
        restoreBag(exchangeOf(c).out, before);
        run?.rerun();
      }
    }
  }

  async #once(c: Ctx, job: AtomicJob, at: Attempt) {
    const s = this.#s;
    const { tx, before } = at;
    await this.#handle(c, job.proceed, at);
    const answer = exchangeOf(c).captured!;
    const kept = s.encode(c, answer, before, job.fp);
    if (kept.length > s.maxBytes)
      throw fail.internal(
        `${s.label}: answer of %d bytes is larger than the space's maxBytes (%d): an atomic route commits only what it keeps, so nothing was committed`,
        kept.length,
        s.maxBytes,
      );
    const committed = await tx.commit(job.claim, kept);
    if (!committed) throw claimLost(c, s.label);
    await tx.end();
    return { answer, kept };
  }

  /** Runs the handler with the lazy transaction as its `Tx`, its answer captured, outside calls gated. */
  async #handle(c: Ctx, proceed: () => unknown, { tx, handed }: Attempt): Promise<void> {
    bindTx(c, handed);
    gateOutside(c, (what) => tx.refuseOutside(what));
    exchangeOf(c).capture = true;
    try {
      await proceed();
    } finally {
      gateOutside(c, null);
      bindTx(c, null);
      exchangeOf(c).endCapture();
    }
  }

  /** A database failure under the handler is 503 with Retry-After (logged); any other error leaves as it is. */
  #unavailable(c: Ctx, e: unknown): unknown {
    if (!(e instanceof DatabaseFailure)) return e;
    exchangeOf(c).core.log(
      `${this.#s.label}: the database failed under the handler (${e.why}): answered 503, nothing committed`,
    );
    c.setHeader('retry-after', '1');
    return new HttpError(
      'DatabaseUnavailable',
      'the database failed while the request ran: nothing was committed, retry later',
      null,
      { cause: e.cause },
    );
  }
}

/** One attempt: its transaction, the request's `Tx` and the headers as they were before the handler. */
interface Attempt {
  readonly tx: AtomicTx;
  readonly handed: Tx;
  readonly before: HeaderBag | null;
}

/** Serialization failures on every attempt: 503 with Retry-After, logged. */
function conflict(c: Ctx, label: string, attempts: number, code: string): HttpError {
  exchangeOf(c).core.log(
    `${label}: atomic transaction failed ${attempts} times (SQLSTATE ${code}): answered 503`,
  );
  c.setHeader('retry-after', '1');
  return new HttpError(
    'TransactionConflict',
    'the transaction kept conflicting with others: retry later',
  );
}

/** The claim was another run's by the commit (this one's lease lapsed): nothing committed, 503. */
function claimLost(c: Ctx, label: string): HttpError {
  exchangeOf(c).core.log(
    `error: ${label}: the claim was no longer this run's at its commit (its lease lapsed and another run took the key): rolled back, nothing committed`,
  );
  c.setHeader('retry-after', '1');
  return new HttpError(
    'LeaseLost',
    "the request's claim lapsed before its commit: nothing was committed, retry later with the same Idempotency-Key",
  );
}

/**
 * The attempt's failure when a statement met a failure of the database (its connection lost, the
 * server shutting down): the database's, marked so that `run` answers 503, when the handler threw
 * after it what would answer 500. Any other failure is the handler's and leaves as it is.
 */
function databaseFailed(e: unknown, failure: string | null): unknown {
  // An answer the handler chose (fail.status(503, …), fail.conflict) stays its own; a 500 does not.
  if (failure === null || e instanceof HttpError || (e instanceof Failure && e.status !== 500))
    return e;
  return new DatabaseFailure(failure, e);
}

/** A failure of the database under the handler, until `run` (which knows the request) answers it. */
class DatabaseFailure extends Error {
  readonly why: string;
  constructor(why: string, cause: unknown) {
    super(why, { cause });
    this.why = why;
  }
}

/** Puts the answer's headers back as they were before the handler ran. */
function restoreBag(bag: HeaderBag | null, before: HeaderBag | null): void {
  if (bag === null) return;
  for (const k in bag) if (before === null || !(k in before)) delete bag[k];
  if (before !== null) for (const k in before) bag[k] = before[k]!;
}
