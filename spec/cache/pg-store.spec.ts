import net from 'node:net';
import type { Pool } from 'pg';
import { CacheError, PgStore, Space } from 'fw-http/cache';
import { postgresDatabase, type PostgresDatabase } from '../support/postgres-database';
import { startPostgres } from '../support/postgres-process';
import { freePort } from '../support/redis-process';
import { describeStoreContract, sleep } from './store-contract';
import { testPool } from '../support/pg-pool';

let server: PostgresDatabase;
let stores: PgStore[] = [];
let pools: Pool[] = [];
let tables = 0;

async function closeStores(): Promise<void> {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
}

beforeAll(async () => {
  server = await postgresDatabase();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await Promise.all(pools.map((p) => p.end()));
  stores = [];
  pools = [];
});

/** A store on a table of its own (migrated), closed by afterEach. */
async function open(options: { table?: string; commandTimeoutMs?: number } = {}): Promise<PgStore> {
  const store = new PgStore({
    connectionString: server.url,
    table: options.table ?? `t_${++tables}`,
    commandTimeoutMs: options.commandTimeoutMs ?? 5000,
  });
  stores.push(store);
  await store.migrate();
  return store;
}

/** A pool for looking at the tables directly. */
function rawPool(): Pool {
  const pool = testPool(server.url, 2);
  pools.push(pool);
  return pool;
}

// Each test gets a table of its own: they share the server but no keys.
describeStoreContract('PgStore', async () => {
  const store = new PgStore({
    connectionString: server.url,
    table: `contract_${++tables}`,
    commandTimeoutMs: 5000,
  });
  await store.migrate();
  return store;
});

describe('PgStore', () => {
  it('migrate() is idempotent, safe to run from several instances at once, and creates the table migrationSql prints', async () => {
    const a = await open({ table: 'shared_migrate' });
    const b = new PgStore({ connectionString: server.url, table: 'shared_migrate' });
    stores.push(b);
    await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
    expect(a.migrationSql).toContain('CREATE TABLE IF NOT EXISTS shared_migrate');
    const { rows } = await rawPool().query(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'shared_migrate' ORDER BY ordinal_position",
    );
    expect(rows).toEqual([
      { column_name: 'key', data_type: 'text' },
      { column_name: 'value', data_type: 'bytea' },
      { column_name: 'expires_at', data_type: 'timestamp with time zone' },
    ]);
  });

  it('several instances on one table share entries; a claim taken by one is refused to the other', async () => {
    const a = await open({ table: 'shared_rows' });
    const b = await open({ table: 'shared_rows' });
    expect(await a.putIfAbsent('k', Buffer.from('from a'), 60_000)).toBe(true);
    expect(await b.get('k')).toEqual(Buffer.from('from a'));
    expect(await b.putIfAbsent('k', Buffer.from('from b'), 60_000)).toBe(false);
    expect(await b.put('k', Buffer.from('by b'), 60_000, { expect: Buffer.from('from a') })).toBe(
      true,
    );
    expect(await a.del('k', { expect: Buffer.from('from a') })).toBe(false);
    expect(await a.del('k', { expect: Buffer.from('by b') })).toBe(true);
  });

  it('100 parallel putIfAbsent from two pools on one key: exactly one wins', async () => {
    const a = await open({ table: 'race_two' });
    const b = await open({ table: 'race_two' });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 === 0 ? a : b).putIfAbsent('race', Buffer.from([i]), 60_000),
      ),
    );
    expect(results.filter((won) => won)).toHaveLength(1);
    expect(await a.get('race')).toEqual(Buffer.from([results.indexOf(true)]));
  });

  it('a pool of your own: the store uses it and close() leaves it open', async () => {
    const pool = rawPool();
    const store = new PgStore({ pool, table: 'own_pool' });
    await store.migrate();
    expect(await store.putIfAbsent('k', Buffer.from('v'), 60_000)).toBe(true);
    await store.close();
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM own_pool');
    expect(rows[0].n).toBe(1);
    await expect(store.get('k')).rejects.toMatchObject({ code: 'Unavailable' });
  });

  it('sweep() deletes lapsed rows in batches and leaves live ones; a row locked by a transaction is skipped, not waited for', async () => {
    const store = new PgStore({
      connectionString: server.url,
      table: 'sweep_rows',
      sweepBatch: 7,
      sweepEveryMs: 0,
    });
    stores.push(store);
    await store.migrate();
    for (let i = 0; i < 30; i++) await store.put(`gone-${i}`, Buffer.from('x'), 20);
    await store.put('live', Buffer.from('x'), 60_000);
    await store.put('locked', Buffer.from('x'), 20);
    await sleep(100);
    const holder = await rawPool().connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM sweep_rows WHERE key = 'locked' FOR UPDATE");
      // A claim meanwhile does not wait for the sweep, and the sweep does not wait for the lock.
      const [swept, claimed] = await Promise.all([
        store.sweep(),
        store.putIfAbsent('gone-3', Buffer.from('new'), 60_000),
      ]);
      expect(claimed).toBe(true);
      expect(swept).toBeGreaterThanOrEqual(29);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    const { rows } = await rawPool().query('SELECT key FROM sweep_rows ORDER BY key');
    expect(rows.map((r: { key: string }) => r.key)).toEqual(['gone-3', 'live', 'locked']);
    expect(await store.sweep()).toBe(1);
  });

  it('the database down: every operation fails Unavailable within commandTimeoutMs, naming host, port and the driver error', async () => {
    const port = await freePort();
    const store = new PgStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/shop`,
      commandTimeoutMs: 2000,
    });
    stores.push(store);
    for (const call of [
      () => store.get('k'),
      () => store.putIfAbsent('k', Buffer.from('v'), 1000),
      () => store.put('k', Buffer.from('v'), 1000, { expect: Buffer.from('c') }),
      () => store.del('k'),
      () => store.ping(),
    ]) {
      const started = Date.now();
      const err = (await call().catch((e: unknown) => e)) as CacheError;
      expect(err).toBeInstanceOf(CacheError);
      expect(err.code).toBe('Unavailable');
      expect(err.message).toContain(`PgStore 127.0.0.1:${port}/shop`);
      expect(err.message).toContain('ECONNREFUSED');
      expect(err.cause).toBeDefined();
      expect(Date.now() - started).toBeLessThan(2000 + 1500);
    }
  });

  it('a database stopped and started again: Unavailable meanwhile, and the store heals by itself', async () => {
    const own = await startPostgres();
    try {
      const store = new PgStore({ connectionString: own.url, commandTimeoutMs: 800 });
      stores.push(store);
      await store.migrate();
      await store.put('k', Buffer.from('v'), 60_000);
      await own.halt();
      const err = (await store.get('k').catch((e: unknown) => e)) as CacheError;
      expect(err.code).toBe('Unavailable');
      await own.restart();
      let got: Buffer | null | undefined;
      for (const deadline = Date.now() + 15_000; got === undefined && Date.now() < deadline;) {
        got = await store.get('k').catch(() => undefined);
        if (got === undefined) await sleep(100);
      }
      expect(got).toEqual(Buffer.from('v'));
    } finally {
      await own.stop();
    }
  }, 90_000);

  it('a database that accepts the connection and never answers: Unavailable within commandTimeoutMs, saying so', async () => {
    // Accepts and never answers; its accepted sockets are destroyed at the end (close() alone
    // would leave them open in this worker).
    const accepted = new Set<net.Socket>();
    const silent = net.createServer((socket) => void accepted.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const store = new PgStore({
        connectionString: `postgres://postgres@127.0.0.1:${port}/shop`,
        commandTimeoutMs: 600,
      });
      stores.push(store);
      const started = Date.now();
      const err = (await store
        .putIfAbsent('k', Buffer.from('v'), 1000)
        .catch((e: unknown) => e)) as CacheError;
      expect(err.code).toBe('Unavailable');
      expect(err.message).toMatch(
        new RegExp(
          `PgStore 127.0.0.1:${port}/shop: putIfAbsent "k" failed: .*(timeout|no answer)`,
          'i',
        ),
      );
      expect(Date.now() - started).toBeLessThan(600 + 1500);
    } finally {
      await closeStores();
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });

  it('bad options are refused with InvalidArgument naming the option; a NUL in a key is refused', async () => {
    const bad = [
      () => new PgStore({} as never),
      () => new PgStore({ connectionString: '' }),
      () => new PgStore({ connectionString: server.url, table: 'Robert"); DROP' }),
      () => new PgStore({ connectionString: server.url, commandTimeoutMs: 0 }),
      () => new PgStore({ connectionString: server.url, sweepBatch: 1.5 }),
      () => new PgStore({ pool: {} as Pool }),
    ];
    for (const make of bad) {
      expect(make).toThrow(CacheError);
      expect(make).toThrow(/PgStore: /);
    }
    const store = await open();
    await expect(store.get('a\0b')).rejects.toMatchObject({ code: 'InvalidArgument' });
  });

  it('a space on PgStore keeps its maxBytes: one byte more stores nothing', async () => {
    const s = Space('pg-small', { ttlSeconds: 60, maxBytes: 4 }).open(await open());
    expect(await s.putIfAbsent('fits', Buffer.alloc(4))).toBe(true);
    expect(await s.putIfAbsent('big', Buffer.alloc(5))).toBe(false);
  });
});
