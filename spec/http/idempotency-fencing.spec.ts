import { IsInt, IsString } from 'class-validator';
import type { Pool } from 'pg';
import { App, Body, Controller, Idempotent, Post, Returns, Status, Ctx } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, RedisStore, Space } from 'fw-http/cache';
import { postgresDatabase, type PostgresDatabase } from '../support/postgres-database';
import { testPool } from '../support/pg-pool';
import { startRedis, type RedisServer } from '../support/redis';

// Fencing: a claim lost to a stall (the process paused past its lease) aborts the
// handler's signal and says so in the log; on an atomic route the transaction holds the key instead.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The whole process stops for `ms`, as in a long GC pause or a SIGSTOP: no timer runs meanwhile. */
const stall = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

async function post(url: string, key: string) {
  const res = await fetch(`${url}/transfers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ to: 'bob', amount: 5 }),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
  };
}

describe('fencing: a lost lease', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it('two instances on one Redis, lease 300 ms, the first stalls 900 ms: its claim is lost, its signal aborted and the loss logged; the second runs and its answer is kept', async () => {
    const Leased = Space('leased', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });
    const runs: string[] = [];
    const seen: { aborted: boolean; reason: unknown }[] = [];
    let aStarted!: () => void;
    const started = new Promise<void>((r) => (aStarted = r));
    const instance = async (name: string) => {
      @Controller()
      class Transfers {
        @Post('/transfers')
        @Idempotent(Leased)
        @Returns(Status(201, Object))
        async create(@Body() t: Transfer, c: Ctx) {
          runs.push(name);
          if (name === 'A') {
            aStarted();
            await new Promise((r) => setImmediate(r)); // the claim is being renewed from here on
            stall(900);
            await sleep(600); // carries on after the pause: renewal finds the claim gone meanwhile
            seen.push({ aborted: c.signal.aborted, reason: c.signal.reason });
          }
          return { by: name, to: t.to };
        }
      }
      const store = new RedisStore({ url: redis.url, commandTimeoutMs: 2000 });
      const lines: string[] = [];
      const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
        .controllers(Transfers)
        .provide(Leased.open(store));
      const { url } = await app.listen({ port: 0 });
      return { url, lines, close: async () => (await app.close(), await store.close()) };
    };
    const a = await instance('A');
    const b = await instance('B');
    try {
      const first = post(a.url, 'pay-1');
      await started; // A holds the claim; the stall starts on the next turn, this process with it
      // B's client retries a 409 (A's claim live) as a client would, until B may run.
      const second = (async () => {
        for (let i = 0; ; i++) {
          const res = await post(b.url, 'pay-1');
          if (res.status !== 409 || i === 30) return res;
          await sleep(100);
        }
      })();
      const [fromA, fromB] = await Promise.all([first, second]);
      expect(runs).toEqual(['A', 'B']);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.aborted).toBe(true);
      expect(String(seen[0]!.reason)).toMatch(
        /claim on Idempotency-Key .*pay-1.* was lost while the handler ran/,
      );
      expect(
        a.lines.some((l) => l.startsWith('error:') && l.includes('was lost while the handler ran')),
      ).toBe(true);
      expect([fromA.status, fromB.status]).toEqual([201, 201]);
      expect(JSON.parse(fromB.body)).toEqual({ by: 'B', to: 'bob' });
      // B's answer is the one kept: a retry anywhere replays it; A's could not be kept over B's.
      const retry = await post(b.url, 'pay-1');
      expect([retry.status, retry.replayed, retry.body]).toEqual([201, 'true', fromB.body]);
      expect(a.lines.some((l) => l.includes('sent but not kept'))).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  }, 30_000);
});

describe('fencing on an atomic route: the claim is checked at the commit', () => {
  let server: PostgresDatabase;
  let pool: Pool;
  beforeAll(async () => {
    server = await postgresDatabase();
    pool = testPool(server.url, 2);
    await pool.query('CREATE TABLE ledger (id serial PRIMARY KEY, to_account text, amount int)');
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  it('two instances on one Postgres, lease 300 ms, the first stalls 900 ms inside its transaction: the second takes the key over, the first commits nothing (503 LeaseLost), one ledger row, one answer', async () => {
    const Leased = Space('atomic-leased', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });
    const runs: string[] = [];
    const seen: boolean[] = [];
    let aStarted!: () => void;
    const started = new Promise<void>((r) => (aStarted = r));
    const instance = async (name: string) => {
      @Controller()
      class Transfers {
        @Post('/transfers')
        // The deadline outlasts the stall: the lease, checked at the commit, decides.
        @Idempotent(Leased, { atomic: true, deadlineMs: 5000 })
        @Returns(Status(201, Object))
        async create(@Body() t: Transfer, tx: Tx, c: Ctx) {
          runs.push(name);
          const { rows } = await tx.query<{ id: number }>(
            'INSERT INTO ledger (to_account, amount) VALUES ($1, $2) RETURNING id',
            [t.to, t.amount],
          );
          if (name === 'A') {
            aStarted();
            await new Promise((r) => setImmediate(r));
            stall(900);
            await sleep(300);
            seen.push(c.signal.aborted);
          }
          return { by: name, id: rows[0]!.id };
        }
      }
      const store = new PgStore({ connectionString: server.url, table: 'fw_fence' });
      await store.migrate();
      const app = new App({ log: () => {} }).controllers(Transfers).provide(Leased.open(store));
      const { url } = await app.listen({ port: 0 });
      return { url, close: async () => (await app.close(), await store.close()) };
    };
    const a = await instance('A');
    const b = await instance('B');
    try {
      const first = post(a.url, 'pay-2');
      await started; // A's transaction is open, its claim's lease about to lapse in the stall
      const second = post(b.url, 'pay-2');
      const [fromA, fromB] = await Promise.all([first, second]);
      expect(runs).toEqual(['A', 'B']);
      expect(seen).toEqual([true]); // A learns its lease is lost as it resumes
      // A's commit found the claim B's: its insert rolled back, 503 with Retry-After.
      expect([fromA.status, fromA.retryAfter]).toEqual([503, '1']);
      expect(fromB.status).toBe(201);
      expect(JSON.parse(fromB.body).by).toBe('B');
      const retry = await post(b.url, 'pay-2');
      expect([retry.status, retry.replayed, retry.body]).toEqual([201, 'true', fromB.body]);
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM ledger');
      expect(rows[0].n).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
