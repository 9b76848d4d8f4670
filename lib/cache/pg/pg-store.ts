import { checkBytes, checkTtlMs } from '../check-args';
import { checkPositive, checkWhole, type OptionOwner } from '../../options';
import { CacheError, invalidArgument } from '../errors';
import { tokenOfMicros } from '../fence-token';
import { pgSql, type PgSql } from './pg-sql';
import { PgTransaction, type PgTransactionOptions, type PgTxClient } from './pg-transaction';
import type { ExpectOptions, Store } from '../store';

/**
 * The part of a `pg.Pool` the store uses (a `pg.Pool` is one). Declared here so that a program
 * without `pg`'s types still compiles against fw-http/cache.
 */
export interface PgPool {
  query(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}

/** A connection lent by a `PgPool` (a `pg.PoolClient`). */
export interface PgPoolClient {
  query(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
}

type Pool = PgPool;

/** What a `pg.Pool` counts, and the client class it makes connections with. */
interface PoolCounters {
  readonly totalCount?: number;
  readonly idleCount?: number;
  readonly waitingCount?: number;
  readonly options?: { readonly max?: number };
  readonly Client?: new (options: unknown) => {
    connect(): Promise<void>;
    query(text: string): Promise<unknown>;
    end(): Promise<void>;
    on(event: 'error', listener: () => void): unknown;
  };
}

/** What `require('pg')` gives that the store uses. */
interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool & {
    on(event: 'error', listener: (err: Error) => void): unknown;
  };
}

/** Options of `new PgStore(…)`: a pool of your own (`pool`) or where Postgres is (`connectionString`). */
export type PgStoreOptions = PgCommonOptions &
  (
    | {
        /** A `pg.Pool` of your own: the store borrows its connections and `close()` leaves it open. */
        readonly pool: Pool;
        readonly connectionString?: never;
      }
    | {
        /** e.g. `postgres://shop@127.0.0.1:5432/shop`: the store makes (and on `close()` ends) a pool of its own. */
        readonly connectionString: string;
        readonly pool?: never;
      }
  );

interface PgCommonOptions {
  /** The table entries live in, `[schema.]name` in lower case. Default `fw_store`. */
  readonly table?: string;
  /** How long one operation may take, getting a connection included, before it fails `Unavailable`. Default 1000. */
  readonly commandTimeoutMs?: number;
  /** How often lapsed rows are deleted (in batches of `sweepBatch`); 0 turns the sweep off. Default 60 000. */
  readonly sweepEveryMs?: number;
  /** Rows one sweep statement deletes at most. Default 1000. */
  readonly sweepBatch?: number;
  /** Connections of the pool made from `connectionString`. Default 10. */
  readonly poolSize?: number;
}

const TABLE_NAME = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,62}$/;

/**
 * A store in Postgres (over `pg`, node-postgres): entries are rows of one table (`key`, `value`
 * bytea, `expires_at`), read and written one statement each, expiry judged by the database's own
 * clock. A claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE expired`, compare-and-set an
 * `UPDATE … WHERE value = $expect`. Spaces opened on it can run atomic idempotent routes: the
 * claim, the handler's writes and the kept answer in one transaction.
 *
 * Create the table once with `await store.migrate()` (idempotent) or the SQL of `store.migrationSql`.
 * Lapsed rows are deleted by a background sweep in small batches that skip locked rows, so it
 * never waits on a claim nor holds one up.
 *
 * It fails fast and closed like `RedisStore`: while Postgres cannot be reached every operation
 * rejects with `CacheError` `Unavailable` within `commandTimeoutMs`, the message naming host,
 * port, database and the driver's error (its `cause` is the driver's error).
 *
 * `pg` is an optional peer dependency, loaded by the first store built from a `connectionString`.
 *
 * @example
 * const store = new PgStore({ connectionString: process.env.DATABASE_URL! });
 * await store.migrate();
 * app.provide(Orders.open(store));
 */
export class PgStore implements Store {
  /** @internal The pool, for atomic routes (lib/http) that run their own transaction on it. */
  readonly pool: Pool;
  /** @internal The statements, on this store's table. */
  readonly sql: PgSql;
  /** How long one operation may take before it fails `Unavailable`. */
  readonly commandTimeoutMs: number;
  /** `host:port/database`, for messages (never a password). */
  readonly where: string;
  readonly #own: boolean;
  readonly #sweepBatch: number;
  #sweeper: NodeJS.Timeout | null = null;
  #sweeping = false;
  /** Per key, the last call made on it: the next one waits for it (see #inOrder). */
  readonly #tails = new Map<string, Promise<void>>();
  #closed = false;

  constructor(options: PgStoreOptions) {
    const o = (options ?? {}) as unknown as Partial<Record<string, unknown>>;
    const table = o.table ?? 'fw_store';
    if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
      throw invalid(`table must be [schema.]name in lower case, got ${JSON.stringify(table)}`);
    }
    this.commandTimeoutMs = checkPositive(PG, 'commandTimeoutMs', o.commandTimeoutMs ?? 1000, {
      unit: 'ms',
    });
    const sweepEveryMs = o.sweepEveryMs ?? 60_000;
    if (sweepEveryMs !== 0) checkPositive(PG, 'sweepEveryMs', sweepEveryMs, { unit: 'ms' });
    this.#sweepBatch = checkWhole(PG, 'sweepBatch', o.sweepBatch ?? 1000, { min: 1 });
    const poolSize = checkWhole(PG, 'poolSize', o.poolSize ?? 10, { min: 1 });
    if ((o.pool === undefined) === (o.connectionString === undefined)) {
      throw invalid('give exactly one of pool (a pg.Pool) or connectionString');
    }
    if (o.pool !== undefined) {
      const pool = o.pool as Pool;
      if (typeof pool?.query !== 'function' || typeof pool.connect !== 'function') {
        throw invalid('pool must be a pg.Pool (with query and connect)');
      }
      this.pool = pool;
      this.#own = false;
    } else {
      if (typeof o.connectionString !== 'string' || o.connectionString === '') {
        throw invalid(
          'connectionString must be a non-empty string such as postgres://127.0.0.1/shop',
        );
      }
      this.pool = ownPool(o.connectionString, this.commandTimeoutMs, poolSize);
      this.#own = true;
    }
    this.where = describe(this.pool);
    this.sql = pgSql(table);
    if (sweepEveryMs !== 0) {
      this.#sweeper = setInterval(() => void this.#sweepQuietly(), sweepEveryMs as number);
      this.#sweeper.unref();
    }
  }

  /** The SQL `migrate()` runs: print it for a migration tool of your own. */
  get migrationSql(): string {
    return this.sql.migrate;
  }

  /**
   * Creates the table and its expiry index if missing (idempotent; several instances may call it
   * at once: an advisory lock makes them take turns).
   */
  async migrate(): Promise<void> {
    await this.#run('migrate', '(table)', async () => {
      const client = await this.pool.connect();
      // Checked out, the client has no listener of the pool's: a cut connection must not be an unhandled 'error'.
      const cut = (): void => undefined;
      client.on('error', cut);
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.sql.table]);
        await client.query(this.sql.migrate);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', cut);
        client.release();
      }
    });
  }

  async get(key: string): Promise<Buffer | null> {
    const rows = await this.#query('get', key, this.sql.get, [checkKey(key)]);
    return rows.length === 0 ? null : (rows[0]!.value as Buffer);
  }

  async putIfAbsent(key: string, value: Buffer, ttlMs: number): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const rows = await this.#query('putIfAbsent', key, this.sql.claim, [checkKey(key), value, ms]);
    return rows.length > 0;
  }

  /**
   * `putIfAbsent` answering, when it wrote, the claim's fencing token (see `Store.claim`) from the
   * database's clock, read by the statement that writes the row; null when the key is taken. The
   * atomic routes' claims read the same clock, so the tokens of a key grow whichever route claims it.
   * @example
   * const token = await store.claim('order:1', claim, 30_000); // 7226051072004096n, or null
   */
  async claim(key: string, value: Buffer, ttlMs: number): Promise<bigint | null> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const rows = await this.#query('claim', key, this.sql.claim, [checkKey(key), value, ms]);
    return rows.length === 0 ? null : this.tokenOf(rows[0]!);
  }

  /**
   * A transaction on a connection of this store's pool, begun (see `PgTransaction`): every
   * statement under `options.deadlineMs`, and the server's `statement_timeout` set to that plus
   * `commandTimeoutMs` behind it. Rejects `PoolBusy` when no connection came within
   * `commandTimeoutMs` while every one was in use, `Unavailable` when the database does not answer.
   * @example const tx = await store.transaction({ deadlineMs: 5_000, late: () => new Error('late') });
   */
  async transaction(options: PgTransactionOptions): Promise<PgTransaction> {
    const client = await this.#checkOut();
    const host = {
      sql: this.sql,
      commandTimeoutMs: this.commandTimeoutMs,
      unavailable: (what: string, err: unknown) => this.unavailable(what, err),
    };
    const tx = new PgTransaction(host, client, options);
    try {
      await tx.begin(
        options.isolation ?? 'read committed',
        options.deadlineMs + this.commandTimeoutMs,
      );
    } catch (e) {
      await tx.end();
      throw e;
    }
    return tx;
  }

  /** A connection of the pool within `commandTimeoutMs`; one that comes later goes back. */
  async #checkOut(): Promise<PgTxClient> {
    this.assertOpen('transaction');
    let timer: NodeJS.Timeout | undefined;
    const connecting = this.pool.connect() as unknown as Promise<PgTxClient>;
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no connection within ${this.commandTimeoutMs} ms`)),
          this.commandTimeoutMs,
        );
      });
      return await Promise.race([connecting, late]);
    } catch (e) {
      connecting.then(
        (came) => came.release(),
        () => undefined,
      );
      const busy = this.poolBusy();
      if (busy === null) throw this.unavailable('transaction: connect', e);
      throw new CacheError(
        'PoolBusy',
        `PgStore ${this.where}: no connection within ${this.commandTimeoutMs} ms: all ${busy.size} in use, ${busy.waiting} waiting`,
        { cause: e },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** @internal The fencing token of a row the claim statement returned (atomic routes run it in their transaction). */
  tokenOf(row: Record<string, unknown>): bigint {
    return tokenOfMicros(String(row.us));
  }

  async put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const expect = opts?.expect;
    if (expect === undefined) {
      await this.#query('put', key, this.sql.put, [checkKey(key), value, ms]);
      return true;
    }
    checkBytes(expect, key, 'expect');
    const rows = await this.#query('put', key, this.sql.putIfEqual, [
      checkKey(key),
      value,
      ms,
      expect,
    ]);
    return rows.length > 0;
  }

  async del(key: string, opts?: ExpectOptions): Promise<boolean> {
    const expect = opts?.expect;
    if (expect !== undefined) checkBytes(expect, key, 'expect');
    const rows =
      expect === undefined
        ? await this.#query('del', key, this.sql.del, [checkKey(key)])
        : await this.#query('del', key, this.sql.delIfEqual, [checkKey(key), expect]);
    return rows.length > 0;
  }

  /**
   * Resolves when Postgres answers `SELECT 1` within `commandTimeoutMs`; rejects `Unavailable`
   * otherwise. While every connection of the pool is in use, the question goes on a connection of
   * its own (closed after it): a busy pool is not a database down.
   */
  async ping(): Promise<void> {
    if (this.poolBusy() === null) await this.#query('ping', '(ping)', 'SELECT 1', []);
    else await this.#run('ping', '(ping, pool busy)', () => this.#pingAside());
  }

  /**
   * While every connection of the pool is in use (none idle, as many as it may hold),
   * its size and how many callers wait for one; null otherwise, or for a pool that does not
   * count (not a `pg.Pool`).
   */
  poolBusy(): { readonly size: number; readonly waiting: number } | null {
    const p = this.pool as unknown as PoolCounters;
    const size = p.options?.max;
    if (typeof size !== 'number' || p.totalCount !== size || p.idleCount !== 0) return null;
    return { size, waiting: p.waitingCount ?? 0 };
  }

  /** `SELECT 1` on a client made as the pool makes its own, outside it. */
  async #pingAside(): Promise<void> {
    const p = this.pool as unknown as PoolCounters;
    if (typeof p.Client !== 'function') throw new Error('every connection of the pool is in use');
    const client = new p.Client(p.options);
    client.on('error', noop); // cut while asking: the query in flight rejects anyway
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      void client.end().catch(noop);
    }
  }

  /**
   * Deletes lapsed rows now, `sweepBatch` at a time (rows locked by a transaction in flight are
   * skipped, not waited for), until a batch comes back short; answers how many went. The
   * background sweep calls this.
   */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.#query('sweep', '(expired)', this.sql.sweep, [this.#sweepBatch]);
      total += rows.length;
      if (rows.length < this.#sweepBatch || this.#closed) return total;
    }
  }

  /** Stops the sweep and ends the pool this store made (a pool given is left open); later calls fail `Unavailable`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    if (this.#own) await this.pool.end().catch(() => undefined);
  }

  /** @internal Throws `Unavailable` once closed (atomic routes ask before they take a connection). */
  assertOpen(what: string): void {
    if (this.#closed) throw this.unavailable(what, new Error('the store is closed'));
  }

  /** @internal The error for a failed operation: Full when the disk is, else Unavailable, naming where and why. */
  unavailable(what: string, err: unknown): CacheError {
    if (err instanceof CacheError) return err;
    const e = err as { message?: string; code?: string } | null;
    const why = `${e?.message ?? String(err)}${e?.code !== undefined && !String(e.message).includes(e.code) ? ` (${e.code})` : ''}`;
    // 53100 disk_full, 53200 out_of_memory: the database is up but cannot keep what it is given.
    const code = e?.code === '53100' || e?.code === '53200' ? 'Full' : 'Unavailable';
    return new CacheError(code, `PgStore ${this.where}: ${what} failed: ${why}`, { cause: err });
  }

  async #sweepQuietly(): Promise<void> {
    if (this.#sweeping || this.#closed) return;
    this.#sweeping = true;
    try {
      await this.sweep();
    } catch {
      // The database is away: the next sweep tries again, and reads ignore lapsed rows meanwhile.
    } finally {
      this.#sweeping = false;
    }
  }

  async #query(
    op: string,
    key: string,
    text: string,
    values: unknown[],
  ): Promise<Record<string, unknown>[]> {
    return this.#inOrder(key, () =>
      this.#run(op, key, async () => (await this.pool.query(text, values)).rows),
    );
  }

  /**
   * Calls on one key apply in the order they were made, as on Redis's one connection: a pool runs
   * statements on several connections at once, so a `del` made after a `put` could land first.
   */
  #inOrder<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prior = this.#tails.get(key);
    const run = prior === undefined ? work() : prior.then(work);
    const tail: Promise<void> = run.then(noop, noop);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }

  /** Runs one operation within `commandTimeoutMs`, every failure leaving as `CacheError`. */
  async #run<T>(op: string, key: string, work: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      if (this.#closed) throw new Error('the store is closed');
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${this.commandTimeoutMs} ms`)),
          this.commandTimeoutMs,
        );
      });
      const doing = work();
      doing.catch(() => undefined); // answered late, after the deadline: nobody waits for it
      return await Promise.race([doing, late]);
    } catch (err) {
      throw this.unavailable(`${op} "${key}"`, err);
    } finally {
      clearTimeout(timer);
    }
  }
}

const noop = (): void => undefined;

/** A pool of the store's own, every connect and statement bounded by the store's timeout. */
function ownPool(connectionString: string, timeoutMs: number, max: number): Pool {
  let pg: PgModule;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by the first store built, not by requiring fw-http/cache: an app that never uses Postgres never loads pg (cold start), and pg is an optional peer
    pg = require('pg') as PgModule;
  } catch (err) {
    throw new CacheError(
      'CachePeerMissing',
      'PgStore needs the pg package (an optional peer dependency): npm install pg',
      { cause: err },
    );
  }
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: timeoutMs,
    // The server gives up too, so a statement the store reported failed does not land much later.
    statement_timeout: timeoutMs,
    idle_in_transaction_session_timeout: Math.max(60_000, timeoutMs * 10),
    application_name: 'fw-http PgStore',
  });
  // An idle connection lost (the database restarting) is reported here; without a listener it
  // would crash the process. The next operation reconnects or fails Unavailable.
  pool.on('error', () => undefined);
  return pool;
}

/** Where the pool connects: host:port/database, from its options (never a password). */
function describe(pool: Pool): string {
  const o =
    (
      pool as {
        options?: { host?: string; port?: number; database?: string; connectionString?: string };
      }
    ).options ?? {};
  let host = o.host;
  let port: string | number | undefined = o.port;
  let database = o.database;
  if (o.connectionString !== undefined) {
    try {
      const u = new URL(o.connectionString);
      host ??= u.hostname;
      port ??= u.port === '' ? undefined : u.port;
      database ??= u.pathname.slice(1) || undefined;
    } catch {
      // not a URL (a key=value string): the defaults below
    }
  }
  return `${host ?? process.env.PGHOST ?? 'localhost'}:${port ?? process.env.PGPORT ?? 5432}/${database ?? process.env.PGDATABASE ?? ''}`;
}

/** Postgres text cannot hold NUL: such a key is refused rather than failing in the database. */
function checkKey(key: string): string {
  if (typeof key !== 'string' || key.includes('\0')) {
    throw new CacheError(
      'InvalidArgument',
      `cache key ${JSON.stringify(key)}: PgStore keys are strings without NUL`,
    );
  }
  return key;
}

function invalid(what: string): CacheError {
  return new CacheError('InvalidArgument', `PgStore: ${what}`);
}

/** PgStore's options are refused as `InvalidArgument` naming the store. */
const PG: OptionOwner = { where: 'PgStore', refuse: invalidArgument };
