import type { PgStore } from '../../cache';
import { HttpError, clientGone } from '../core/errors';
import type { Ctx } from '../request/ctx';
import { TxGuard, type GuardedClient } from './tx-guard';
import type { Isolation, TxResult } from './tx';
import { exchangeOf } from '../request/exchange-of';

/** What one atomic route's transactions need, fixed at build. */
export interface AtomicTxSettings {
  readonly store: PgStore;
  readonly label: string;
  readonly ttlMs: number;
  /** How long the transaction may be held, from its first statement to COMMIT (the route's `deadlineMs`). */
  readonly deadlineMs: number;
  readonly isolation: Isolation;
  /** The route holds its transaction across outbound calls and steps (`holdTransaction: true`). */
  readonly hold: boolean;
}

/** The part of a `pg.PoolClient` used here. */
interface PgClient extends GuardedClient {
  release(err?: boolean | Error): void;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}

/**
 * One attempt's transaction on an atomic route, opened by the handler's first `tx.query` (not
 * before: outbound calls and steps made before it hold no connection and no lock) and ended by
 * `commit`, which keeps the answer over the claim in the same transaction after checking that the
 * claim is still this request's. A handler that never queries commits its answer with one
 * compare-and-set statement. Every statement runs under the route's deadline; a cut (the
 * deadline, the client gone) cancels the statement on the server and destroys the connection.
 */
export class AtomicTx {
  readonly #s: AtomicTxSettings;
  readonly #c: Ctx;
  /** The key's entry in the store (the space's key of the record). */
  readonly #key: string;
  #opening: Promise<TxGuard> | null = null;
  #client: PgClient | null = null;
  #guard: TxGuard | null = null;
  /** Why the connection cannot go back to the pool (cut, or lost under a statement). */
  #lost: unknown = undefined;
  #ended = false;
  readonly #cut = (err: unknown): void => void (this.#lost = err);
  readonly #gone = (): void => {
    if (!exchangeOf(this.#c).res.writableFinished) this.#guard?.cut(clientGone());
  };
  /** The claim's lease lost while the transaction is open: its statement is cancelled too. */
  readonly #leaseLost = (): void => {
    const reason: unknown = this.#c.signal.reason;
    if (!(reason instanceof HttpError) || reason.code !== 'LeaseLost' || this.#guard === null)
      return;
    this.#c.setHeader('retry-after', '1');
    this.#guard.cut(reason);
  };

  constructor(settings: AtomicTxSettings, c: Ctx, key: string) {
    this.#s = settings;
    this.#c = c;
    this.#key = key;
  }

  /** Whether the transaction is open (a statement of the handler's opened it) and not yet ended. */
  get open(): boolean {
    return this.#opening !== null && !this.#ended;
  }

  /** What cut the attempt (its error, to answer with), or null. */
  get cutBy(): HttpError | null {
    return this.#guard?.cutBy ?? null;
  }

  /** The first database failure a statement of the handler's met, or null. */
  get failure(): string | null {
    return this.#guard?.failure ?? null;
  }

  /**
   * One statement of the handler's: the first opens the transaction. `step` names the `c.step` it
   * is made inside of, if any: refused there.
   */
  async query(text: string, values: readonly unknown[] | undefined, step: string | null) {
    if (this.#ended)
      throw new HttpError(
        'NotResolved',
        `${this.#s.label}: tx.query after the transaction ended (a query the handler did not await?)`,
      );
    if (step !== null)
      throw new HttpError(
        'QueryInStep',
        `${this.#s.label}: tx.query inside c.step "${step}": a step's result is kept outside the transaction, so its writes would be lost on a rerun that reads it back; query before or after the step`,
      );
    const guard = await (this.#opening ??= this.#begin());
    return guard.handlerQuery(text, values);
  }

  /**
   * An outbound call or a step about to start: refused while the transaction is open, unless the
   * route holds it across them. Waiting on the outside world with a connection and its locks
   * would take the pool from every other request for as long as the upstream is slow.
   */
  refuseOutside(what: string): void {
    if (!this.open || this.#s.hold) return;
    const line = `${this.#s.label}: ${what} while the atomic transaction is open: make outside calls before the first tx.query, or in a step before it, or declare holdTransaction: true`;
    exchangeOf(this.#c).core.log(`error: ${line}`);
    throw new HttpError('TransactionHeld', line);
  }

  /**
   * Keeps `kept` over the claim `claim` and commits: true, or false when the claim is no longer
   * this request's (its lease lapsed and another run took the key), then nothing is committed.
   */
  async commit(claim: Buffer, kept: Buffer): Promise<boolean> {
    const s = this.#s;
    if (this.#opening === null) return s.store.put(this.#key, kept, s.ttlMs, { expect: claim });
    const guard = await this.#opening;
    const ms = s.store.commandTimeoutMs * 2;
    guard.arm(ms, () => this.#late('keep and commit', ms));
    const done = await this.#statement(guard, 'keep', s.store.sql.putIfEqual, [
      this.#key,
      kept,
      s.ttlMs,
      claim,
    ]);
    if (done.rowCount === 0) return false;
    await this.#statement(guard, 'commit', 'COMMIT');
    this.#ended = true;
    return true;
  }

  /** Ends the attempt: rolls back what is not committed, gives the connection back (or drops it). */
  async end(): Promise<void> {
    const opening = this.#opening;
    if (opening === null) return;
    const guard = await opening.catch(() => null);
    if (guard === null) return;
    if (guard.cutBy !== null) this.#lost = guard.cutBy;
    else if (!this.#ended)
      await this.#client!.query('ROLLBACK').catch((gone: unknown) => (this.#lost = gone));
    this.#ended = true;
    guard.dispose();
    exchangeOf(this.#c).res.off('close', this.#gone);
    this.#c.signal.removeEventListener('abort', this.#leaseLost);
    const client = this.#client!;
    client.off('error', this.#cut);
    // A connection that was cut, or could not even roll back, is dropped, not given back.
    client.release(this.#lost === undefined ? undefined : true);
  }

  async #begin(): Promise<TxGuard> {
    const s = this.#s;
    const client = await connect(this.#c, s);
    this.#client = client;
    // Checked out, a client has no listener of the pool's: a connection cut while the handler
    // runs would be an unhandled 'error' event. The query in flight rejects with it anyway.
    client.on('error', this.#cut);
    const guard = (this.#guard = new TxGuard(client));
    // A client gone before its answer: the statement running is cancelled and nothing commits.
    exchangeOf(this.#c).res.once('close', this.#gone);
    this.#c.signal.addEventListener('abort', this.#leaseLost, { once: true });
    guard.arm(s.deadlineMs, () => this.#late('transaction', s.deadlineMs));
    // The server's own bound stands behind ours, in place of the short one a PgStore's pool sets.
    const serverMs = Math.ceil(s.deadlineMs + s.store.commandTimeoutMs);
    await this.#statement(
      guard,
      'begin',
      `BEGIN ISOLATION LEVEL ${s.isolation.toUpperCase()}; SET LOCAL statement_timeout = ${serverMs}`,
    );
    return guard;
  }

  /**
   * One statement of fw's own: a failure of the database leaves as the store's `Unavailable`; a
   * retryable SQLSTATE (a serialization failure at COMMIT) leaves as it is.
   */
  async #statement(
    guard: TxGuard,
    what: string,
    text: string,
    values?: unknown[],
  ): Promise<TxResult> {
    try {
      return await guard.query(text, values);
    } catch (e) {
      if (guard.cutBy !== null) throw guard.cutBy;
      if (isRetryable(e)) throw e;
      throw this.#s.store.unavailable(`atomic ${what} "${this.#key}"`, e);
    }
  }

  /** The transaction's deadline passed: 503 with Retry-After, logged. */
  #late(what: string, ms: number): HttpError {
    const c = this.#c;
    exchangeOf(c).core.log(
      `${this.#s.label}: atomic ${what} past its deadline of ${ms} ms: statement cancelled, connection destroyed, ${
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
}

/** SQLSTATEs after which the whole attempt is tried again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

/** The SQLSTATE of a retryable failure, or null. */
export function retryableCode(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code) ? code : null;
}

const isRetryable = (e: unknown): boolean => retryableCode(e) !== null;

/** A connection from the store's pool within its `commandTimeoutMs`, or 503 (`PoolExhausted` when every one is in use). */
async function connect(c: Ctx, s: AtomicTxSettings): Promise<PgClient> {
  const store = s.store;
  store.assertOpen(`atomic "${s.label}"`);
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
    throw poolExhausted(c, s.label, store) ?? store.unavailable(`atomic ${s.label}: connect`, e);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The pool's connections all in use, with requests waiting for them: named and logged as such,
 * the database itself being up. Null when the pool is not full.
 */
export function poolExhausted(c: Ctx, label: string, store: PgStore): HttpError | null {
  const busy = store.poolBusy();
  if (busy === null) return null;
  exchangeOf(c).core.log(
    `${label}: no connection from the PgStore's pool within commandTimeoutMs: all ${busy.size} in use, ${busy.waiting} waiting; answered 503`,
  );
  c.setHeader('retry-after', '1');
  return new HttpError('PoolExhausted', 'every database connection is in use: retry later');
}
