import { type CacheError } from '../errors';
import type { PgSql } from './pg-sql';
import { TxGuard, type GuardedClient, type PgResult } from './tx-guard';

export type { PgResult } from './tx-guard';

/** The isolation level of a `PgStore.transaction`. */
export type PgIsolation = 'read committed' | 'repeatable read' | 'serializable';

/** Options of `PgStore.transaction(…)`. */
export interface PgTransactionOptions {
  /** Default `'read committed'`. */
  readonly isolation?: PgIsolation;
  /** How long the transaction may be held, from BEGIN to the end of COMMIT, in ms. */
  readonly deadlineMs: number;
  /** The error a deadline passing cuts the transaction with (`what`: `'transaction'` or `'keep and commit'`). */
  readonly late: (what: string, ms: number) => Error;
}

/** The part of a `pg.PoolClient` a transaction holds. */
export interface PgTxClient extends GuardedClient {
  release(err?: boolean | Error): void;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}

/** What a transaction needs of its store. */
export interface PgTransactionHost {
  readonly sql: PgSql;
  readonly commandTimeoutMs: number;
  unavailable(what: string, err: unknown): CacheError;
}

/** SQLSTATEs after which a transaction may be tried again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * One transaction of a `PgStore`'s pool, made by `store.transaction(options)` for an atomic
 * idempotent route (or anything that must keep a record with its own writes): one connection,
 * every statement under a deadline of the caller's, cut at once when asked (the running statement
 * cancelled on the server, the connection destroyed, never given back to the pool). `keep` writes
 * a record over a claim only if the claim is still there, in the transaction.
 * @example
 * const tx = await store.transaction({ deadlineMs: 5_000, late: () => new Error('too slow') });
 * try {
 *   await tx.query('INSERT INTO orders (sku) VALUES ($1)', ['tea']);
 *   if (await tx.keep(key, answer, 86_400_000, claim)) await tx.commit();
 * } finally {
 *   await tx.end();
 * }
 */
export class PgTransaction {
  readonly #host: PgTransactionHost;
  readonly #client: PgTxClient;
  readonly #guard: TxGuard;
  readonly #late: (what: string, ms: number) => Error;
  #lost: unknown = undefined;
  #ended = false;
  readonly #onError = (err: unknown): void => void (this.#lost = err);

  /** Made by `PgStore.transaction`, on a connection it checked out. */
  constructor(host: PgTransactionHost, client: PgTxClient, options: PgTransactionOptions) {
    this.#host = host;
    this.#client = client;
    this.#late = options.late;
    // Checked out, a client has no listener of the pool's: a connection cut mid-statement would
    // be an unhandled 'error' event. The statement in flight rejects with it anyway.
    client.on('error', this.#onError);
    this.#guard = new TxGuard(client);
    this.#guard.arm(options.deadlineMs, () => options.late('transaction', options.deadlineMs));
  }

  /** The SQLSTATE of a failure after which the transaction may be tried again (40001, 40P01), or null. */
  static retryable(e: unknown): string | null {
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === 'string' && RETRYABLE.has(code) ? code : null;
  }

  /** What cut the transaction (the deadline's error, or `cut`'s), or null. */
  get cutBy(): Error | null {
    return this.#guard.cutBy;
  }

  /** The first failure of the database a `query` met ("SQLSTATE 57P01", "ECONNRESET"), or null. */
  get failure(): string | null {
    return this.#guard.failure;
  }

  /** Opens the transaction (`BEGIN`, and the server's own statement bound behind the deadline). */
  async begin(isolation: PgIsolation, serverMs: number): Promise<void> {
    await this.#statement(
      'begin',
      `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}; SET LOCAL statement_timeout = ${Math.ceil(serverMs)}`,
    );
  }

  /** One statement of the caller's, in the transaction. */
  query(text: string, values?: readonly unknown[]): Promise<PgResult> {
    return this.#guard.handlerQuery(text, values);
  }

  /**
   * Writes `value` over the store's entry `key` if it still holds `claim` (and is live), with a
   * new TTL: true, or false when the claim is gone (another took the key). The deadline becomes
   * twice the store's `commandTimeoutMs`, for this and the commit.
   */
  async keep(key: string, value: Buffer, ttlMs: number, claim: Buffer): Promise<boolean> {
    const ms = this.#host.commandTimeoutMs * 2;
    this.#guard.arm(ms, () => this.#late('keep and commit', ms));
    const done = await this.#statement('keep', this.#host.sql.putIfEqual, [
      key,
      value,
      ttlMs,
      claim,
    ]);
    return done.rowCount !== 0;
  }

  async commit(): Promise<void> {
    await this.#statement('commit', 'COMMIT');
    this.#ended = true;
  }

  /** Cancels the running statement and destroys the connection: the transaction is gone. */
  cut(why: Error): void {
    this.#guard.cut(why);
  }

  /** Rolls back what is not committed and gives the connection back (or drops it when it was cut or failed). */
  async end(): Promise<void> {
    const guard = this.#guard;
    if (guard.cutBy !== null) this.#lost = guard.cutBy;
    else if (!this.#ended)
      await this.#client.query('ROLLBACK').catch((gone: unknown) => (this.#lost = gone));
    this.#ended = true;
    guard.dispose();
    this.#client.off('error', this.#onError);
    this.#client.release(this.#lost === undefined ? undefined : true);
  }

  /**
   * One statement of the transaction's own: a failure of the database leaves as the store's
   * `Unavailable`; a retryable SQLSTATE (a serialization failure at COMMIT) as it is.
   */
  async #statement(what: string, text: string, values?: unknown[]): Promise<PgResult> {
    const guard = this.#guard;
    try {
      return await guard.query(text, values);
    } catch (e) {
      if (guard.cutBy !== null) throw guard.cutBy;
      if (PgTransaction.retryable(e) !== null) throw e;
      throw this.#host.unavailable(`transaction ${what}`, e);
    }
  }
}
