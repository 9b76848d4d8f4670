import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { App, Controller, Ctx, Idempotent, Post, RefusalError, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// Atomic routes in phases: the claim commits first with its lease, the handler's transaction opens
// at its first tx.query, and the writes commit with the answer after a check that the claim is
// still this request's. Nothing of the database is held while the handler waits on the outside.

let server: PostgresServer;
let pool: Pool;
let spaces = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startPostgres();
  pool = testPool(server.url, 4);
  await pool.query('CREATE TABLE orders (id serial PRIMARY KEY, sku text)');
}, 60_000);
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await pool.query('TRUNCATE orders');
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A slow upstream on a real socket: answers 201 after `delayMs`, recording each Idempotency-Key. */
async function upstream(delayMs: number) {
  const keys: string[] = [];
  const srv = http.createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']));
    req.resume();
    setTimeout(() => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'), delayMs);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => srv.close(() => r())));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, keys };
}

const Warehouse = Target('warehouse', { idempotencyKeys: true });

interface Setup {
  /** The handler, given its request, transaction and the warehouse. */
  readonly handler: (c: Ctx, tx: Tx, reserve: (c: Ctx) => Promise<unknown>) => Promise<unknown>;
  readonly delayMs?: number;
  readonly poolSize?: number;
  readonly leaseMs?: number;
  readonly options?: {
    holdTransaction?: boolean;
    waitMs?: number;
    maxWaiters?: number;
    isolation?: 'serializable';
    deadlineMs?: number;
  };
}

/** An app with atomic POST /orders on a PgStore of its own; `runs` counts handler runs. */
async function ordersApp(s: Setup) {
  const up = await upstream(s.delayMs ?? 0);
  const store = new PgStore({
    connectionString: server.url,
    sweepEveryMs: 0,
    poolSize: s.poolSize ?? 10,
  });
  await store.migrate();
  const Orders = Space(`orders-${++spaces}`, {
    ttlSeconds: 60,
    maxBytes: 4096,
    ...(s.leaseMs === undefined ? {} : { leaseMs: s.leaseMs }),
  });
  const client = new Client();
  const warehouse = Warehouse.open(client, { base: up.url });
  const reserve = (c: Ctx) => warehouse.postJson(c, '/reserve', {}, {});
  const runs = { n: 0 };
  @Controller()
  class OrdersRoutes {
    @Post('/orders')
    @Idempotent(Orders, { atomic: true, ...s.options })
    @Returns(Status(201, Object))
    async create(c: Ctx, tx: Tx) {
      runs.n++;
      return s.handler(c, tx, reserve);
    }
  }
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(OrdersRoutes)
    .provide(client)
    .provide(warehouse)
    .provide(Orders.open(store));
  const { url } = await app.listen({ port: 0 });
  cleanups.push(async () => {
    await app.close();
    await store.close();
  });
  return { url, runs, lines, up, store };
}

async function post(url: string, key: string) {
  const res = await fetch(`${url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: '{}',
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    replayed: res.headers.get('idempotent-replayed'),
    body: await res.text(),
  };
}

const placed = async () =>
  (await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n as number;
const insert = (tx: Tx) =>
  tx.query<{ id: number }>("INSERT INTO orders (sku) VALUES ('tea') RETURNING id");
/** The app's connections that are in a transaction now (its pool is named fw-http PgStore). */
const inTransaction = async () =>
  (
    await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'fw-http PgStore' AND state LIKE 'idle in transaction%'",
    )
  ).rows[0].n as number;

/** Reserve at the warehouse first, then the order row: the shape the guide recommends. */
const reserveThenInsert: Setup['handler'] = async (c, tx, reserve) => {
  await reserve(c);
  const { rows } = await insert(tx);
  return { id: rows[0]!.id };
};

describe('phases: nothing of the database held across the outside world', () => {
  it('an outbound call before the first tx.query holds no connection: 8 orders with a pool of 2 and a 300 ms upstream are all 201', async () => {
    const { url, up } = await ordersApp({
      handler: reserveThenInsert,
      delayMs: 300,
      poolSize: 2,
    });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(url, `o-${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await placed()).toBe(8);
    expect(up.keys).toHaveLength(8);
  });

  it('while the handler waits on the upstream, no connection of the app is in a transaction', async () => {
    const { url } = await ordersApp({ handler: reserveThenInsert, delayMs: 800 });
    const going = post(url, 'watch-1');
    await sleep(300);
    expect(await inTransaction()).toBe(0);
    expect((await going).status).toBe(201);
  });

  it('an outbound call while the transaction is open is refused: 500 TransactionHeld, logged naming the route, nothing committed', async () => {
    const { url, lines, up } = await ordersApp({
      handler: async (c, tx, reserve) => {
        await insert(tx);
        await reserve(c);
        return {};
      },
    });
    const res = await post(url, 'held-1');
    expect(res.status).toBe(500);
    expect(up.keys).toHaveLength(0);
    expect(await placed()).toBe(0);
    expect(
      lines.some((l) =>
        /POST \/orders.*an outbound call while the atomic transaction is open/.test(l),
      ),
    ).toBe(true);
    // Refused, not kept: the key is free again and the same request fails the same way.
    expect((await post(url, 'held-1')).status).toBe(500);
  });

  it('c.step while the transaction is open is refused the same way', async () => {
    const { url, lines } = await ordersApp({
      handler: async (c, tx) => {
        await insert(tx);
        await c.step('late', () => 1);
        return {};
      },
    });
    expect((await post(url, 'step-1')).status).toBe(500);
    expect(await placed()).toBe(0);
    expect(lines.some((l) => /c\.step "late" while the atomic transaction is open/.test(l))).toBe(
      true,
    );
  });

  it('holdTransaction: true lets the handler call out with its transaction open (and holds a connection meanwhile)', async () => {
    const { url, up } = await ordersApp({
      options: { holdTransaction: true },
      delayMs: 600,
      handler: async (c, tx, reserve) => {
        const { rows } = await insert(tx);
        await reserve(c);
        return { id: rows[0]!.id };
      },
    });
    const going = post(url, 'hold-1');
    await sleep(300);
    expect(await inTransaction()).toBe(1);
    expect((await going).status).toBe(201);
    expect(await placed()).toBe(1);
    expect(up.keys).toHaveLength(1);
  });

  it('tx.query inside c.step is refused (500 QueryInStep): the step kept outside would outlive its rolled-back write', async () => {
    const { url } = await ordersApp({
      handler: async (c, tx) => {
        await c.step('charge', async () => (await insert(tx)).rows[0]!.id);
        return {};
      },
    });
    const res = await post(url, 'in-step-1');
    expect(res.status).toBe(500);
    expect(await placed()).toBe(0);
  });

  it('a step before the first query is recorded: a rerun after a failure reads it back, and the order commits once', async () => {
    let charged = 0;
    let fail = true;
    const { url } = await ordersApp({
      handler: async (c, tx) => {
        const charge = await c.step('charge', () => ++charged);
        const { rows } = await insert(tx);
        if (fail) throw new Error('crashed after the insert');
        return { id: rows[0]!.id, charge };
      },
    });
    expect((await post(url, 'rerun-1')).status).toBe(500);
    expect(await placed()).toBe(0);
    fail = false;
    const second = await post(url, 'rerun-1');
    expect(second.status).toBe(201);
    expect(JSON.parse(second.body).charge).toBe(1);
    expect(charged).toBe(1);
    expect(await placed()).toBe(1);
  });
});

describe('the claim checked at the commit', () => {
  it('a claim taken by another run while the handler waited: nothing committed, 503 LeaseLost with Retry-After', async () => {
    const { url, store, lines } = await ordersApp({
      delayMs: 500,
      handler: reserveThenInsert,
    });
    const going = post(url, 'taken-1');
    await sleep(200);
    // Another run's claim over this one's (as after a lapsed lease taken over by another instance).
    const took = await pool.query(
      `UPDATE ${store.migrationSql.match(/TABLE IF NOT EXISTS (\S+)/)![1]} SET value = 'another run' WHERE key LIKE '%taken-1%'`,
    );
    expect(took.rowCount).toBe(1);
    const res = await going;
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(await placed()).toBe(0);
    expect(lines.some((l) => /no longer this run's at its commit/.test(l))).toBe(true);
  });
});

describe('a lost lease cancels the running statement', () => {
  it('the claim lost while a statement runs in the transaction: the statement is cancelled on the server, nothing committed, 503 LeaseLost', async () => {
    const { url, store } = await ordersApp({
      leaseMs: 300,
      options: { deadlineMs: 10_000 },
      handler: async (_c, tx) => {
        await insert(tx);
        await tx.query('SELECT pg_sleep(5), 1 AS lost_lease_probe');
        return {};
      },
    });
    const going = post(url, 'lost-1');
    await sleep(150);
    const table = store.migrationSql.match(/TABLE IF NOT EXISTS (\S+)/)![1];
    await pool.query(`UPDATE ${table} SET value = 'another run' WHERE key LIKE '%lost-1%'`);
    const res = await going;
    expect([res.status, res.retryAfter]).toEqual([503, '1']);
    expect(JSON.parse(res.body).error).toMatch(/claim/);
    expect(await placed()).toBe(0);
    // This spec file's database only (other files share the cluster), and the cancel is the
    // server's to carry out: it may still be finishing when the 503 is read.
    const sleeping = async (): Promise<number> =>
      (
        await pool.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%lost_lease_probe%' AND query NOT LIKE '%pg_stat_activity%' AND state = 'active'",
        )
      ).rows[0].n;
    for (let i = 0; i < 50 && (await sleeping()) > 0; i++) await sleep(20);
    expect(await sleeping()).toBe(0);
  });
});

describe('duplicates wait off the pool', () => {
  it('12 duplicates of one key with a pool of 2 and a 400 ms upstream: only 201s, one handler run, one order, the upstream called once', async () => {
    const { url, runs, up } = await ordersApp({
      handler: reserveThenInsert,
      delayMs: 400,
      poolSize: 2,
    });
    const results = await Promise.all(Array.from({ length: 12 }, () => post(url, 'dup-1')));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(results.filter((r) => r.replayed === 'true')).toHaveLength(11);
    expect(new Set(results.map((r) => r.body)).size).toBe(1);
    expect(runs.n).toBe(1);
    expect(await placed()).toBe(1);
    expect(up.keys).toHaveLength(1);
  });

  it('past waitMs a duplicate gets 409 with Retry-After, and the first still commits once', async () => {
    const { url } = await ordersApp({
      handler: reserveThenInsert,
      delayMs: 600,
      options: { waitMs: 100 },
    });
    const first = post(url, 'wait-1');
    await sleep(100);
    const dup = await post(url, 'wait-1');
    expect(dup.status).toBe(409);
    expect(dup.retryAfter).toBe('1');
    expect((await first).status).toBe(201);
    expect(await placed()).toBe(1);
  });

  it('maxWaiters: one more duplicate than may wait gets 409 at once; the one waiting gets the replay', async () => {
    const { url } = await ordersApp({
      handler: reserveThenInsert,
      delayMs: 500,
      options: { maxWaiters: 1 },
    });
    const first = post(url, 'cap-1');
    await sleep(100);
    const waiting = post(url, 'cap-1');
    await sleep(100);
    const refused = await post(url, 'cap-1');
    expect(refused.status).toBe(409);
    expect(refused.retryAfter).toBe('1');
    expect((await first).status).toBe(201);
    expect((await waiting).replayed).toBe('true');
  });

  it('a duplicate of a first request that failed runs the request itself once the key is given back', async () => {
    let fail = true;
    const { url, runs } = await ordersApp({
      delayMs: 300,
      handler: async (c, tx, reserve) => {
        await reserve(c);
        if (fail) {
          fail = false;
          throw new Error('first run fails');
        }
        return { id: (await insert(tx)).rows[0]!.id };
      },
    });
    const first = post(url, 'given-back-1');
    await sleep(100);
    const dup = await post(url, 'given-back-1');
    expect((await first).status).toBe(500);
    expect(dup.status).toBe(201);
    expect(runs.n).toBe(2);
    expect(await placed()).toBe(1);
  });
});

describe('a transaction tried again', () => {
  it('a serialization failure reruns the handler with the same derived outbound keys', async () => {
    let attempt = 0;
    const { url, up } = await ordersApp({
      options: { isolation: 'serializable' },
      handler: async (c, tx, reserve) => {
        await reserve(c);
        await insert(tx);
        if (++attempt < 3)
          await tx.query(
            "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$",
          );
        return {};
      },
    });
    expect((await post(url, 'retry-1')).status).toBe(201);
    expect(up.keys).toHaveLength(3);
    expect(new Set(up.keys).size).toBe(1);
    expect(await placed()).toBe(1);
  });
});

describe('refusals of the phase options', () => {
  function refusals(options: Record<string, unknown>): string[] {
    const store = new PgStore({ connectionString: server.url, sweepEveryMs: 0 });
    cleanups.push(() => store.close());
    const S = Space(`r-${++spaces}`, { ttlSeconds: 60, maxBytes: 1024 });
    @Controller()
    class C {
      @Post('/r')
      @Idempotent(S, options)
      @Returns(Status(201, Object))
      r() {
        return {};
      }
    }
    try {
      new App({ log: () => {} }).controllers(C).provide(S.open(store)).build();
      return [];
    } catch (e) {
      expect(e).toBeInstanceOf(RefusalError);
      return [...(e as RefusalError).problems];
    }
  }

  it('holdTransaction, waitMs and maxWaiters need atomic: true and values of their kind', () => {
    expect(refusals({ waitMs: 10 })).toEqual([
      expect.stringMatching(/POST \/r .*: @Idempotent waitMs needs atomic: true/),
    ]);
    expect(refusals({ atomic: true, holdTransaction: 'yes' })).toEqual([
      expect.stringMatching(/holdTransaction must be true or false/),
    ]);
    expect(refusals({ atomic: true, waitMs: -1 })).toEqual([
      expect.stringMatching(/waitMs must be a number of ms from 0/),
    ]);
    expect(refusals({ atomic: true, maxWaiters: 1.5 })).toEqual([
      expect.stringMatching(/maxWaiters must be a whole number/),
    ]);
    expect(refusals({ atomic: true, waitMs: 0, maxWaiters: 0, holdTransaction: true })).toEqual([]);
  });
});
