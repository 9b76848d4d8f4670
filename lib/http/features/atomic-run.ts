import type { PgStore } from '../../cache';
import { copyBag, type HeaderBag } from '../core/header-rules';
import { HttpError } from '../core/errors';
import { fail } from '../core/fail';
import type { CapturedAnswer, Ctx } from '../request/ctx';
import { bindTx, Tx } from './tx';

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
        if (typeof code !== 'string' || !RETRYABLE.has(code)) throw e;
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
    const client = await this.#connect(key);
    let lost: unknown = undefined;
    // A checked-out client has no listener of the pool's: without one, the connection cut while
    // the handler runs (Postgres restarting) would be an unhandled 'error' event. The query in
    // flight rejects with it anyway.
    const cut = (err: unknown): void => void (lost = err);
    client.on('error', cut);
    try {
      await this.#statement(client, `begin "${key}"`, this.#begin);
      const taken = await this.#statement(client, `claim "${key}"`, s.store.sql.claim, [
        key,
        claim,
        s.ttlMs,
      ]);
      if (taken.rowCount === 0) {
        await client.query('ROLLBACK');
        return { kind: 'taken' };
      }
      // The database's clock as the claim was written: the fencing token non-atomic routes on
      // this store get too, so a key's tokens grow whichever route claims it.
      c.idempotency?.claimed(s.store.tokenOf(taken.rows[0]!));
      await this.#handle(c, job.proceed, client);
      const answer = c.captured!;
      const kept = s.encode(c, answer, before, job.fp);
      if (kept.length > s.maxBytes)
        throw fail.internal(
          `${s.label}: answer of %d bytes is larger than the space's maxBytes (%d): an atomic route commits only what it keeps, so nothing was committed`,
          kept.length,
          s.maxBytes,
        );
      await this.#statement(client, `keep "${key}"`, s.store.sql.keep, [key, kept, s.ttlMs]);
      await this.#statement(client, `commit "${key}"`, 'COMMIT');
      return { kind: 'committed', answer, kept };
    } catch (e) {
      await client.query('ROLLBACK').catch((gone: unknown) => (lost = gone));
      if ((e as { code?: unknown } | null)?.code === LOCK_TIMEOUT) throw inFlight(c);
      throw e;
    } finally {
      client.off('error', cut);
      // A connection that was cut, or could not even roll back, is dropped, not given back to the pool.
      client.release(lost === undefined ? undefined : true);
    }
  }

  /** Runs the handler with the transaction as its `Tx`, its answer captured. */
  async #handle(c: Ctx, proceed: () => unknown, client: PgClient): Promise<void> {
    bindTx(c, new Tx(client));
    c.capture = true;
    try {
      await proceed();
    } finally {
      bindTx(c, null);
      c.endCapture();
    }
  }

  async #connect(key: string): Promise<PgClient> {
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
      throw store.unavailable(`atomic "${key}": connect`, e);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One statement of fw's own (not the handler's): a failure of the database leaves as
   * `Unavailable`; a retryable SQLSTATE or the lock wait running out leave as they are.
   */
  async #statement(
    client: PgClient,
    what: string,
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }> {
    try {
      return await client.query(text, values);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && (RETRYABLE.has(code) || code === LOCK_TIMEOUT)) throw e;
      throw this.#s.store.unavailable(`atomic ${what}`, e);
    }
  }
}

/** The part of a `pg.PoolClient` used here. */
interface PgClient {
  query(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release(err?: boolean | Error): void;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
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
