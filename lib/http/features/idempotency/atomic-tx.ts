import { CacheError, PgTransaction, type PgStore } from '../../../cache';
import { HttpError, clientGone } from '../../core/errors';
import type { Ctx } from '../../request/ctx';
import type { Isolation, TxResult } from './tx';
import { exchangeOf } from '../../request/exchange-of';

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

/**
 * One attempt's transaction on an atomic route, opened by the handler's first `tx.query` (not
 * before: outbound calls and steps made before it hold no connection and no lock) and ended by
 * `commit`, which keeps the answer over the claim in the same transaction after checking that the
 * claim is still this request's. A handler that never queries commits its answer with one
 * compare-and-set statement. The transaction is the store's (`PgStore.transaction`): every
 * statement under the route's deadline; a cut (the deadline, the client gone, the lease lost)
 * cancels the statement on the server and destroys the connection.
 */
export class AtomicTx {
  readonly #s: AtomicTxSettings;
  readonly #c: Ctx;
  /** The key's entry in the store (the space's key of the record). */
  readonly #key: string;
  #opening: Promise<PgTransaction> | null = null;
  #tx: PgTransaction | null = null;
  #ended = false;
  readonly #gone = (): void => {
    if (!exchangeOf(this.#c).res.writableFinished) this.#tx?.cut(clientGone());
  };
  /** The claim's lease lost while the transaction is open: its statement is cancelled too. */
  readonly #leaseLost = (): void => {
    const reason: unknown = this.#c.signal.reason;
    if (!(reason instanceof HttpError) || reason.code !== 'LeaseLost' || this.#tx === null) return;
    this.#c.setHeader('retry-after', '1');
    this.#tx.cut(reason);
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
  get cutBy(): Error | null {
    return this.#tx?.cutBy ?? null;
  }

  /** The first database failure a statement of the handler's met, or null. */
  get failure(): string | null {
    return this.#tx?.failure ?? null;
  }

  /**
   * One statement of the handler's: the first opens the transaction. `step` names the `c.step` it
   * is made inside of, if any: refused there.
   */
  async query(
    text: string,
    values: readonly unknown[] | undefined,
    step: string | null,
  ): Promise<TxResult> {
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
    const tx = await (this.#opening ??= this.#begin());
    return tx.query(text, values);
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
    const tx = await this.#opening;
    if (!(await tx.keep(this.#key, kept, s.ttlMs, claim))) return false;
    await tx.commit();
    this.#ended = true;
    return true;
  }

  /** Ends the attempt: rolls back what is not committed, gives the connection back (or drops it). */
  async end(): Promise<void> {
    const opening = this.#opening;
    this.#ended = true;
    if (opening === null) return;
    const tx = await opening.catch(() => null);
    if (tx === null) return;
    exchangeOf(this.#c).res.off('close', this.#gone);
    this.#c.signal.removeEventListener('abort', this.#leaseLost);
    await tx.end();
  }

  async #begin(): Promise<PgTransaction> {
    const s = this.#s;
    let tx: PgTransaction;
    try {
      tx = await s.store.transaction({
        isolation: s.isolation,
        deadlineMs: s.deadlineMs,
        late: (what, ms) => this.#late(what, ms),
      });
    } catch (e) {
      throw e instanceof CacheError && e.code === 'PoolBusy' ? this.#poolExhausted(e) : e;
    }
    this.#tx = tx;
    // A client gone before its answer: the statement running is cancelled and nothing commits.
    exchangeOf(this.#c).res.once('close', this.#gone);
    this.#c.signal.addEventListener('abort', this.#leaseLost, { once: true });
    return tx;
  }

  /** The pool's connections all in use: named and logged as such, the database itself being up. */
  #poolExhausted(e: CacheError): HttpError {
    exchangeOf(this.#c).core.log(`${this.#s.label}: ${e.message}; answered 503`);
    this.#c.setHeader('retry-after', '1');
    return new HttpError('PoolExhausted', 'every database connection is in use: retry later');
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

/** The SQLSTATE of a retryable failure (serialization, deadlock), or null. */
export const retryableCode = (e: unknown): string | null => PgTransaction.retryable(e);

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
