import { IsInt, IsString } from 'class-validator';
import type { Pool } from 'pg';
import {
  App,
  Body,
  Controller,
  EventStream,
  Idempotent,
  Post,
  RefusalError,
  Returns,
  Status,
  type Ctx,
} from 'fw-http';
import { Tx, type Isolation } from 'fw-http/atomic';
import { MemoryStore, PgStore, Space, type SpaceDecl } from 'fw-http/cache';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// Atomic idempotent routes: on a space opened on a PgStore, the claim, the
// handler's writes and the kept answer commit in one transaction, against a real Postgres.

class Transfer {
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
  await pool.query('CREATE TABLE ledger (id serial PRIMARY KEY, to_account text, amount int)');
  await pool.query('CREATE TABLE counter (id int PRIMARY KEY, n int)');
  await pool.query('INSERT INTO counter VALUES (1, 0)');
}, 60_000);
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await pool.query('TRUNCATE ledger');
});
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Hooks {
  /** Runs inside the handler, after its ledger insert, before it answers. */
  readonly during?: (tx: Tx, body: Transfer) => Promise<void>;
  readonly isolation?: Isolation;
  readonly leaseMs?: number;
  readonly deadlineMs?: number;
}

/** An app with POST /transfers atomic on a fresh space over a PgStore; `runs` counts handler runs. */
async function transfersApp(hooks: Hooks = {}) {
  const store = new PgStore({ connectionString: server.url, table: 'fw_store' });
  await store.migrate();
  const Transfers = Space(`transfers-${++spaces}`, {
    ttlSeconds: 60,
    maxBytes: 4096,
    ...(hooks.leaseMs === undefined ? {} : { leaseMs: hooks.leaseMs }),
  });
  const runs = { n: 0 };
  @Controller()
  class Transfers_ {
    @Post('/transfers')
    @Idempotent(Transfers, {
      atomic: true,
      ...(hooks.isolation === undefined ? {} : { isolation: hooks.isolation }),
      ...(hooks.deadlineMs === undefined ? {} : { deadlineMs: hooks.deadlineMs }),
    })
    @Returns(Status(201, Object))
    async create(@Body() t: Transfer, tx: Tx) {
      runs.n++;
      const { rows } = await tx.query<{ id: number }>(
        'INSERT INTO ledger (to_account, amount) VALUES ($1, $2) RETURNING id',
        [t.to, t.amount],
      );
      await hooks.during?.(tx, t);
      return { id: rows[0]!.id, to: t.to, amount: t.amount };
    }
  }
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(Transfers_)
    .provide(Transfers.open(store));
  const { url } = await app.listen({ port: 0 });
  cleanups.push(async () => {
    await app.close();
    await store.close();
  });
  return { url, runs, lines, Transfers };
}

async function post(url: string, key: string, body: object = { to: 'bob', amount: 5 }) {
  const res = await fetch(`${url}/transfers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
  };
}

const ledgerRows = async () =>
  (await pool.query('SELECT count(*)::int AS n FROM ledger')).rows[0].n as number;
const keptRows = async () =>
  (await pool.query('SELECT count(*)::int AS n FROM fw_store')).rows[0].n as number;

describe('atomic idempotent routes on PgStore', () => {
  it('the handler writes through its Tx; its row and the kept answer commit together; a retry replays and writes nothing', async () => {
    const { url, runs } = await transfersApp();
    const before = await keptRows();
    const first = await post(url, 'k1');
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const again = await post(url, 'k1');
    expect(again).toEqual({ ...first, replayed: 'true' });
    expect(runs.n).toBe(1);
    expect(await ledgerRows()).toBe(1);
    expect(await keptRows()).toBe(before + 1);
  });

  it('the handler throws after its write: nothing is committed (no row, no claim), and the retry runs on a clean slate', async () => {
    let fail = true;
    const { url, runs } = await transfersApp({
      during: async () => {
        if (fail) throw new Error('the bank is down');
      },
    });
    const before = await keptRows();
    expect((await post(url, 'k2')).status).toBe(500);
    expect(await ledgerRows()).toBe(0);
    expect(await keptRows()).toBe(before);
    fail = false;
    const retry = await post(url, 'k2');
    expect(retry.status).toBe(201);
    expect(retry.replayed).toBeNull();
    expect(runs.n).toBe(2);
    expect(await ledgerRows()).toBe(1);
  });

  it('a concurrent duplicate waits on the key row and gets the committed answer: one run, one row', async () => {
    const { url, runs } = await transfersApp({ during: async () => void (await sleep(400)) });
    const [a, b] = await Promise.all([post(url, 'k3'), sleep(100).then(() => post(url, 'k3'))]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body).toBe(a.body);
    expect([a.replayed, b.replayed].sort()).toEqual([null, 'true'].sort());
    expect(runs.n).toBe(1);
    expect(await ledgerRows()).toBe(1);
  });

  it('a duplicate that waits longer than the lease gets 409 with Retry-After: 1, and the first still commits once', async () => {
    const { url, runs } = await transfersApp({
      during: async () => void (await sleep(2500)),
      // A lease long enough to be renewed on a loaded machine; the duplicate waits as long (waitMs).
      leaseMs: 1000,
      // The handler outlasts the lease on purpose: its own deadline (default the lease) is set past it.
      deadlineMs: 5000,
    });
    const first = post(url, 'k4');
    await sleep(300);
    const dup = await post(url, 'k4');
    expect(dup.status).toBe(409);
    expect(dup.retryAfter).toBe('1');
    expect((await first).status).toBe(201);
    expect((await post(url, 'k4')).replayed).toBe('true');
    expect(runs.n).toBe(1);
    expect(await ledgerRows()).toBe(1);
  });

  it('a key reused with another body gets 422 and writes nothing', async () => {
    const { url } = await transfersApp();
    expect((await post(url, 'k5')).status).toBe(201);
    expect((await post(url, 'k5', { to: 'eve', amount: 500 })).status).toBe(422);
    expect(await ledgerRows()).toBe(1);
  });

  it('a serialization failure (40001) is retried: the handler runs again and both transfers commit once', async () => {
    let arrived = 0;
    const { url, runs } = await transfersApp({
      isolation: 'serializable',
      during: async (tx) => {
        await tx.query('SELECT n FROM counter WHERE id = 1');
        arrived++;
        // Both first attempts read before either writes: the second to update cannot serialize.
        for (let i = 0; i < 50 && arrived < 2; i++) await sleep(20);
        await tx.query('UPDATE counter SET n = n + 1 WHERE id = 1');
      },
    });
    const n0 = (await pool.query('SELECT n FROM counter')).rows[0].n as number;
    const [a, b] = await Promise.all([post(url, 'k6a'), post(url, 'k6b')]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(runs.n).toBe(3);
    expect((await pool.query('SELECT n FROM counter')).rows[0].n).toBe(n0 + 2);
    expect(await ledgerRows()).toBe(2);
  });

  it('serialization failures on every attempt: 3 attempts, then 503 TransactionConflict with Retry-After: 1, nothing committed', async () => {
    const { url, runs, lines } = await transfersApp({
      during: async (tx) => {
        await tx.query(
          "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$",
        );
      },
    });
    const res = await post(url, 'k7');
    expect(res.status).toBe(503);
    expect(res.retryAfter).toBe('1');
    expect(runs.n).toBe(3);
    expect(await ledgerRows()).toBe(0);
    await sleep(20);
    expect(lines.some((l) => /atomic transaction failed 3 times \(SQLSTATE 40001\)/.test(l))).toBe(
      true,
    );
  });

  it('the database down: 503 idempotency store unavailable, the handler not run', async () => {
    const own = await startPostgres();
    const store = new PgStore({ connectionString: own.url, commandTimeoutMs: 1000 });
    await store.migrate();
    const S = Space('down', { ttlSeconds: 60, maxBytes: 1024 });
    let runs = 0;
    @Controller()
    class C {
      @Post('/t') @Idempotent(S, { atomic: true }) @Returns(Status(201, Object)) t(tx: Tx) {
        runs++;
        return { tx: tx instanceof Tx };
      }
    }
    const app = new App({ log: () => {} }).controllers(C).provide(S.open(store));
    try {
      const ok = await app.inject({
        method: 'POST',
        url: '/t',
        headers: { 'idempotency-key': 'a' },
      });
      expect(ok.status).toBe(201);
      expect(ok.json()).toEqual({ tx: true });
      await own.halt();
      const down = await app.inject({
        method: 'POST',
        url: '/t',
        headers: { 'idempotency-key': 'b' },
      });
      expect(down.status).toBe(503);
      expect(down.body).toContain('idempotency store unavailable');
      expect(runs).toBe(1);
    } finally {
      await store.close();
      await own.stop();
    }
  }, 60_000);
});

describe('refusals of atomic routes', () => {
  function refusals(make: (S: SpaceDecl) => Function, open: (S: SpaceDecl) => object): string[] {
    const S = Space(`r-${++spaces}`, { ttlSeconds: 60, maxBytes: 1024 });
    try {
      new App({ log: () => {} }).controllers(make(S)).provide(open(S)).build();
    } catch (e) {
      expect(e).toBeInstanceOf(RefusalError);
      return [...(e as RefusalError).problems];
    }
    throw new Error('the app was built');
  }
  const memory = (S: SpaceDecl) => S.open(new MemoryStore({ bytes: 1 << 20 }));

  it('atomic: true on a space whose store is not a PgStore is refused naming the route and the store', () => {
    const problems = refusals((S) => {
      @Controller()
      class C {
        @Post('/m') @Idempotent(S, { atomic: true }) @Returns(Status(201, Object)) m() {
          return {};
        }
      }
      return C;
    }, memory);
    expect(problems).toEqual([
      expect.stringMatching(
        /^POST \/m .*atomic: true needs a space opened on a PgStore \(space "r-\d+" is on MemoryStore\)/,
      ),
    ]);
  });

  it('a Tx parameter on a route that is not atomic is refused, idempotent or not', () => {
    const problems = refusals((S) => {
      @Controller()
      class C {
        @Post('/i') @Idempotent(S) @Returns(Status(201, Object)) i(tx: Tx) {
          return { tx: String(tx) };
        }
        @Post('/p') @Returns(Status(201, Object)) p(tx: Tx) {
          return { tx: String(tx) };
        }
      }
      return C;
    }, memory);
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(p).toMatch(/a Tx parameter needs an atomic route/);
  });

  it('atomic on a streaming answer is refused', () => {
    const store = new PgStore({ connectionString: 'postgres://127.0.0.1:1/x', sweepEveryMs: 0 });
    cleanups.push(() => store.close());
    const problems = refusals(
      (S) => {
        @Controller()
        class C {
          @Post('/e') @Idempotent(S, { atomic: true }) @Returns(EventStream) e(c: Ctx): void {
            c.events().close();
          }
        }
        return C;
      },
      (S) => S.open(store),
    );
    expect(problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/atomic: true cannot stream its answer/)]),
    );
  });
});
