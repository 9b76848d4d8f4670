import type { PgStore } from '../../cache';
import { copyBag, type HeaderBag } from '../core/header-rules';
import { Failure, HttpError, clientGone } from '../core/errors';
import { fail } from '../core/fail';
import type { CapturedAnswer, Ctx } from '../request/ctx';
import { bindTx, Tx } from './tx';
import { TxGuard, type GuardedClient } from './tx-guard';

import type { Isolation } from './tx';
export type { Isolation } from './tx';

/** How often an atomic transaction is tried when Postgres reports a serialization failure or a deadlock. */
export const ATOMIC_ATTEMPTS = 3;

/** @internal What one atomic route needs, fixed at build. */
export interface AtomicSettings {
  readonly store: PgStore;
  readonly label: string;
  readonly ttlMs: number;
  /** How long a duplicate waits on the key row's lock (an attempt in flight) before 409. */
  readonly lockWaitMs: number;
  /** How long the handler may hold the transaction before it is cut (503): the route's `deadlineMs`. */
  readonly deadlineMs: number;
  readonly maxBytes: number;
  readonly isolation: Isolation;
  /** The kept record of a captured answer (the idempotency step's format). */
  readonly encode: (c: Ctx, answer: CapturedAnswer, before: HeaderBag | null, fp: string) => Buffer;
}

/** @internal One request's part: the handler step, its key in the store, its claim and its fingerprint. */
export interface AtomicJob {
  readonly proceed: () => unknown;
  readonly key: string;
  readonly claim: Buffer;
  readonly fp: string;
}

/** @internal What one attempt ended with: the answer committed with its record, or the key found taken by a committed answer. */
export type AtomicOutcome =
  | { readonly kind: 'committed'; readonly answer: CapturedAnswer; readonly kept: Buffer }
  | { readonly kind: 'taken' };

/** SQLSTATE lock_not_available: a duplicate waited `lockWaitMs` for the key row of an attempt in flight. */
const LOCK_TIMEOUT = '55P03';

/** SQLSTATEs after which the whole transaction is tried again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * @internal
 * Runs an atomic idempotent request: in one transaction, the claim row (an insert that waits on
 * the row lock of a duplicate in flight), the handler with that transaction as its `Tx`, and the
 * kept answer over the claim; then commits. A crash anywhere before the commit leaves nothing:
 * Postgres rolls the transaction back when the connection drops.
 */
export class AtomicRun {
  readonly #s: AtomicSettings;
  readonly #begin: string;

  constructor(settings: AtomicSettings) {
    this.#s = settings;
    // One round trip: the lock wait bounds the claim's insert (and the handler's own locks); the
    // statement timeout stands over it, in place of the short one a PgStore's own pool sets.
    const ms = Math.ceil(settings.lockWaitMs);
    this.#begin = `BEGIN ISOLATION LEVEL ${settings.isolation.toUpperCase()}; SET LOCAL lock_timeout = ${ms}; SET LOCAL statement_timeout = ${ms + Math.ceil(settings.store.commandTimeoutMs)}`;
  }

  /** Runs the request, trying again (a few times) on a serialization failure or deadlock. */
  async run(c: Ctx, job: AtomicJob): Promise<AtomicOutcome> {
    const before = copyBag(c.headers());
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(c, job, before);
      } catch (e) {
        const code = (e as { code?: unknown } | null)?.code;
        if (typeof code !== 'string' || !RETRYABLE.has(code)) throw this.#unavailable(c, e);
        if (attempt >= ATOMIC_ATTEMPTS) {
          c.core.log(
            `${this.#s.label}: atomic transaction failed ${attempt} times (SQLSTATE ${code}): answered 503`,
          );
          c.setHeader('retry-after', '1');
          throw new HttpError(
            'TransactionConflict',
            'the transaction kept conflicting with others: retry later',
          );
        }
        // The attempt left nothing: its answer and the headers it set go too.
        c.endCapture();
        c.captured = null;
        restoreBag(c.headers(), before);
      }
    }
  }

  async #once(c: Ctx, job: AtomicJob, before: HeaderBag | null): Promise<AtomicOutcome> {
    const s = this.#s;
    const { key, claim } = job;
    const client = await this.#connect(c, key);
    const guard = new TxGuard(client);
    let lost: unknown = undefined;
    // A checked-out client has no listener of the pool's: without one, the connection cut while
    // the handler runs (Postgres restarting) would be an unhandled 'error' event. The query in
    // flight rejects with it anyway.
    const cut = (err: unknown): void => void (lost = err);
    client.on('error', cut);
    // A client gone before its answer: the statement running is cancelled and nothing commits
    // (its retry runs on a clean slate), rather than holding a connection for nobody.
    const gone = (): void => {
      if (!c.res.writableFinished) guard.cut(clientGone());
    };
    c.res.once('close', gone);
    const commandMs = s.store.commandTimeoutMs;
    try {
      // BEGIN and the claim, which may wait on a duplicate's row lock: the lock wait, then the store's bound.
      guard.arm(s.lockWaitMs + commandMs, () =>
        late(c, s.label, 'claim', s.lockWaitMs + commandMs),
      );
      await this.#statement(guard, `begin "${key}"`, this.#begin);
      const taken = await this.#statement(guard, `claim "${key}"`, s.store.sql.claim, [
        key,
        claim,
        s.ttlMs,
      ]);
      if (taken.rowCount === 0) {
        await guard.query('ROLLBACK');
        return { kind: 'taken' };
      }
      // The database's clock as the claim was written: the fencing token non-atomic routes on
      // this store get too, so a key's tokens grow whichever route claims it.
      c.idempotency?.claimed(s.store.tokenOf(taken.rows[0]!));
      guard.arm(s.deadlineMs, () => late(c, s.label, 'handler', s.deadlineMs));
      await this.#handle(c, job.proceed, guard);
      const answer = c.captured!;
      const kept = s.encode(c, answer, before, job.fp);
      if (kept.length > s.maxBytes)
        throw fail.internal(
          `${s.label}: answer of %d bytes is larger than the space's maxBytes (%d): an atomic route commits only what it keeps, so nothing was committed`,
          kept.length,
          s.maxBytes,
        );
      guard.arm(commandMs * 2, () => late(c, s.label, 'keep and commit', commandMs * 2));
      await this.#statement(guard, `keep "${key}"`, s.store.sql.keep, [key, kept, s.ttlMs]);
      await this.#statement(guard, `commit "${key}"`, 'COMMIT');
      return { kind: 'committed', answer, kept };
    } catch (e) {
      if (guard.cutBy !== null) lost = guard.cutBy;
      else await client.query('ROLLBACK').catch((gone: unknown) => (lost = gone));
      if ((e as { code?: unknown } | null)?.code === LOCK_TIMEOUT) throw inFlight(c);
      throw guard.cutBy ?? databaseFailed(e, guard.failure);
    } finally {
      guard.dispose();
      c.res.off('close', gone);
      client.off('error', cut);
      // A connection that was cut, or could not even roll back, is dropped, not given back to the pool.
      client.release(lost === undefined ? undefined : true);
    }
  }

  /** A database failure under the handler is 503 with Retry-After (logged); any other error leaves as it is. */
  #unavailable(c: Ctx, e: unknown): unknown {
    if (!(e instanceof DatabaseFailure)) return e;
    c.core.log(
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

  /** Runs the handler with the transaction as its `Tx`, its answer captured. */
  async #handle(c: Ctx, proceed: () => unknown, guard: TxGuard): Promise<void> {
    bindTx(c, new Tx(guard.forTx()));
    c.capture = true;
    try {
      await proceed();
    } finally {
      bindTx(c, null);
      c.endCapture();
    }
  }

  async #connect(c: Ctx, key: string): Promise<PgClient> {
    const store = this.#s.store;
    store.assertOpen(`atomic "${key}"`);
    let timer: NodeJS.Timeout | undefined;
    const connecting = store.pool.connect() as Promise<PgClient>;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no connection within ${store.commandTimeoutMs} ms`)),
          store.commandTimeoutMs,
        );
      });
      return await Promise.race([connecting, late]);
    } catch (e) {
      // A connection that comes after all goes back to the pool.
      connecting.then(
        (late) => late.release(),
        () => undefined,
      );
      throw (
        poolExhausted(c, this.#s.label, store) ?? store.unavailable(`atomic "${key}": connect`, e)
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One statement of fw's own (not the handler's): a failure of the database leaves as
   * `Unavailable`; a retryable SQLSTATE or the lock wait running out leave as they are.
   */
  async #statement(
    guard: TxGuard,
    what: string,
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }> {
    try {
      return await guard.query(text, values);
    } catch (e) {
      if (guard.cutBy !== null) throw guard.cutBy;
      const code = (e as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && (RETRYABLE.has(code) || code === LOCK_TIMEOUT)) throw e;
      throw this.#s.store.unavailable(`atomic ${what}`, e);
    }
  }
}

/** The part of a `pg.PoolClient` used here. */
interface PgClient extends GuardedClient {
  query(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release(err?: boolean | Error): void;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}

/** The attempt's deadline passed: 503 with Retry-After, logged. */
function late(c: Ctx, label: string, what: string, ms: number): HttpError {
  c.core.log(
    `${label}: atomic ${what} past its deadline of ${ms} ms: statement cancelled, connection destroyed, ${
      // A COMMIT cut in flight may have landed: the key's retry then replays its committed answer.
      what === 'keep and commit' ? 'the commit may have landed' : 'nothing committed'
    }`,
  );
  c.setHeader('retry-after', '1');
  return new HttpError(
    'DatabaseDeadline',
    'the database did not answer in time: retry later with the same Idempotency-Key',
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

/**
 * The pool's connections all in use, with requests waiting for them: named and logged as such,
 * the database itself being up. Null when the pool is not full.
 */
export function poolExhausted(c: Ctx, label: string, store: PgStore): HttpError | null {
  const busy = store.poolBusy();
  if (busy === null) return null;
  c.core.log(
    `${label}: no connection from the PgStore's pool within commandTimeoutMs: all ${busy.size} in use, ${busy.waiting} waiting; answered 503`,
  );
  c.setHeader('retry-after', '1');
  return new HttpError('PoolExhausted', 'every database connection is in use: retry later');
}

function inFlight(c: Ctx): Error {
  c.setHeader('retry-after', '1');
  return fail.conflict('Idempotency-Key is still being answered');
}

/** Puts the answer's headers back as they were before the handler ran. */
function restoreBag(bag: HeaderBag | null, before: HeaderBag | null): void {
  if (bag === null) return;
  for (const k in bag) if (before === null || !(k in before)) delete bag[k];
  if (before !== null) for (const k in before) bag[k] = before[k]!;
}
