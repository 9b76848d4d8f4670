import { IsInt, IsString } from 'class-validator';
import http from 'node:http';
import type { Pool } from 'pg';
import { App, Body, Controller, Idempotent, Post, RefusalError, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, Space } from 'fw-http/cache';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';
import { startBlackholeProxy } from '../support/blackhole-proxy';

// Atomic routes under a failing database: a failure of the database under the handler is 503 with
// Retry-After (the handler's own errors stay its own), every statement has a deadline of fw's,
// a client gone cancels the running statement, and a full pool is named as such.

class Payment {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

let server: PostgresServer;
let pool: Pool;
let spaces = 0;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startPostgres();
  pool = testPool(server.url, 4);
  await pool.query('CREATE TABLE payments (id serial PRIMARY KEY, to_account text, amount int)');
  await pool.query('CREATE TABLE accounts (name text PRIMARY KEY)');
  await pool.query("INSERT INTO accounts VALUES ('taken')");
}, 60_000);
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await pool.query('TRUNCATE payments');
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Options {
  /** Runs inside the handler, after its insert, before it answers. */
  readonly during?: (tx: Tx, body: Payment) => Promise<void>;
  readonly deadlineMs?: number;
  /** Where the store connects (default the test server). */
  readonly url?: string;
  readonly poolSize?: number;
  readonly commandTimeoutMs?: number;
}

/** POST /payments atomic on a fresh space over a PgStore of its own; `runs` counts handler runs. */
async function paymentsApp(o: Options = {}) {
  const store = new PgStore({
    connectionString: o.url ?? server.url,
    sweepEveryMs: 0,
    ...(o.poolSize === undefined ? {} : { poolSize: o.poolSize }),
    ...(o.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: o.commandTimeoutMs }),
  });
  await store.migrate();
  const Payments = Space(`payments-${++spaces}`, { ttlSeconds: 60, maxBytes: 4096 });
  const runs = { n: 0 };
  @Controller()
  class Payments_ {
    @Post('/payments')
    @Idempotent(Payments, {
      atomic: true,
      ...(o.deadlineMs === undefined ? {} : { deadlineMs: o.deadlineMs }),
    })
    @Returns(Status(201, Object))
    async create(@Body() p: Payment, tx: Tx) {
      runs.n++;
      const { rows } = await tx.query<{ id: number }>(
        'INSERT INTO payments (to_account, amount) VALUES ($1, $2) RETURNING id',
        [p.to, p.amount],
      );
      await o.during?.(tx, p);
      return { id: rows[0]!.id };
    }
  }
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(Payments_)
    .provide(Payments.open(store))
    .health({ cacheMs: 0 });
  const { url } = await app.listen({ port: 0 });
  cleanups.push(async () => {
    await app.close();
    await store.close();
  });
  return { url, runs, lines };
}

async function post(url: string, key: string, body: object = { to: 'bob', amount: 5 }) {
  const res = await fetch(`${url}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
}

const committed = async () =>
  (await pool.query('SELECT count(*)::int AS n FROM payments')).rows[0].n as number;
const pidOf = async (tx: Tx) =>
  (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
/** Backends running a statement that contains `text` (other than this look itself). */
const running = async (text: string) =>
  (
    await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
      [`%${text}%`],
    )
  ).rows[0].n as number;

/** Waits (a bounded poll) until `check` holds; false when it never did within `ms`. */
async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(25))
    if (await check()) return true;
  return check();
}

describe('a database failure under an atomic handler', () => {
  it("the handler's own backend terminated mid-handler: 503 DatabaseUnavailable with Retry-After, nothing committed, a retry succeeds", async () => {
    let kill = true;
    const { url, runs, lines } = await paymentsApp({
      during: async (tx) => {
        if (!kill) return;
        await pool.query('SELECT pg_terminate_backend($1)', [await pidOf(tx)]);
        await tx.query('SELECT 1');
      },
    });
    const res = await post(url, 'p1');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(res.body).toMatch(/the database failed while the request ran/);
    expect(await committed()).toBe(0);
    expect(
      await until(
        async () => lines.some((l) => /the database failed under the handler/.test(l)),
        1000,
      ),
    ).toBe(true);
    kill = false;
    const retry = await post(url, 'p1');
    expect(retry.status).toBe(201);
    expect(runs.n).toBe(2);
    expect(await committed()).toBe(1);
  });

  it('a handler that turns the lost connection into an error of its own still answers 503: the database failed', async () => {
    const { url } = await paymentsApp({
      during: async (tx) => {
        await pool.query('SELECT pg_terminate_backend($1)', [await pidOf(tx)]);
        await tx.query('SELECT 1').catch(() => {
          throw new Error('could not record the payment');
        });
      },
    });
    const res = await post(url, 'p2');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(await committed()).toBe(0);
  });

  it("a constraint violation stays the handler's failure (500), nothing committed", async () => {
    const { url } = await paymentsApp({
      during: async (tx) => void (await tx.query("INSERT INTO accounts VALUES ('taken')")),
    });
    const res = await post(url, 'p3');
    expect(res.status).toBe(500);
    expect(res.retryAfter).toBeNull();
    expect(await committed()).toBe(0);
  });
});

describe("an atomic route's deadline", () => {
  it('a statement past deadlineMs: 503 DatabaseDeadline with Retry-After, the statement cancelled on the server, nothing committed', async () => {
    const { url, lines } = await paymentsApp({
      deadlineMs: 300,
      during: async (tx) => void (await tx.query('SELECT pg_sleep(5), 1 AS deadline_probe')),
    });
    const res = await post(url, 'd1');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(res.body).toMatch(/the database did not answer in time/);
    expect(
      await until(async () => lines.some((l) => /past its deadline of 300 ms/.test(l)), 1000),
    ).toBe(true);
    expect(await until(async () => (await running('deadline_probe')) === 0, 2000)).toBe(true);
    expect(await committed()).toBe(0);
  });

  it('a connection that goes silent mid-handler is cut at the deadline: 503, nothing committed', async () => {
    const proxy = await startBlackholeProxy({ host: '127.0.0.1', port: server.port });
    cleanups.push(() => proxy.close());
    const { url } = await paymentsApp({
      url: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      deadlineMs: 500,
      during: async (tx) => {
        proxy.blackhole();
        await tx.query('SELECT 1');
      },
    });
    const res = await post(url, 'd2');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(res.body).toMatch(/the database did not answer in time/);
    // The destroyed connection closes the server's side too: its transaction rolls back.
    expect(await until(async () => (await running('INSERT INTO payments')) === 0, 2000)).toBe(true);
    expect(await committed()).toBe(0);
  });
});

describe('cancellation', () => {
  it('a client that disconnects during pg_sleep(5): the backend query is cancelled and nothing is committed', async () => {
    const { url, runs } = await paymentsApp({
      deadlineMs: 30_000,
      during: async (tx) => void (await tx.query('SELECT pg_sleep(5), 1 AS gone_probe')),
    });
    const req = http.request(`${url}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'c1' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ to: 'bob', amount: 5 }));
    expect(await until(async () => (await running('gone_probe')) === 1, 5000)).toBe(true);
    req.destroy();
    expect(await until(async () => (await running('gone_probe')) === 0, 1000)).toBe(true);
    expect(runs.n).toBe(1);
    expect(await committed()).toBe(0);
  });
});

describe('pool exhaustion', () => {
  it('no connection while every one is in use: 503 PoolExhausted with Retry-After, logged with the pool size and waiters; /healthz still 200', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const { url, lines } = await paymentsApp({
      poolSize: 1,
      commandTimeoutMs: 300,
      during: () => {
        entered();
        return held;
      },
    });
    const first = post(url, 'e1');
    await inside; // the pool's one connection is the first request's transaction
    const second = await post(url, 'e2');
    // The database is up: a busy pool is not a dead store.
    const health = await fetch(`${url}/healthz`);
    release();
    expect(health.status).toBe(200);
    expect(second.status).toBe(503);
    expect(second.body).toMatch(/every database connection is in use/);
    expect(second.retryAfter).toBe('1');
    expect(
      await until(async () => lines.some((l) => /all 1 in use, \d+ waiting/.test(l)), 1000),
    ).toBe(true);
    expect(lines.some((l) => /idempotency store unavailable/.test(l))).toBe(false);
    expect((await first).status).toBe(201);
  });
});

describe('deadlineMs at startup', () => {
  function refusals(deadlineMs: unknown, atomic: boolean): string[] {
    const store = new PgStore({ connectionString: server.url, sweepEveryMs: 0 });
    cleanups.push(() => store.close());
    const S = Space(`r-${++spaces}`, { ttlSeconds: 60, maxBytes: 1024 });
    @Controller()
    class C {
      @Post('/r')
      @Idempotent(S, { atomic, deadlineMs: deadlineMs as number })
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

  it('deadlineMs must be above 0 and at most 2^31 − 1 ms, and needs atomic: true', () => {
    expect(refusals(0, true)).toEqual([
      expect.stringMatching(/deadlineMs must be a number of ms above 0/),
    ]);
    expect(refusals(2 ** 31, true)).toEqual([
      expect.stringMatching(/to 2147483647, got 2147483648/),
    ]);
    expect(refusals('5s', true)).toHaveLength(1);
    expect(refusals(2 ** 31 - 1, true)).toEqual([]);
    expect(refusals(1000, false)).toEqual([expect.stringMatching(/deadlineMs needs atomic: true/)]);
  });
});
