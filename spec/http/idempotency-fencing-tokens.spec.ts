import http from 'node:http';
import { IsInt, IsString } from 'class-validator';
import { App, Body, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, RedisStore, Space } from 'fw-http/cache';
import { postgresDatabase, type PostgresDatabase } from '../support/postgres-database';
import { startRedis, type RedisServer } from '../support/redis';

// Fencing tokens are minted when the claim is won, by the store's clock where it keeps one: a
// request routed early whose body comes late claims later, and holds the larger token. The
// conditional write the guide shows (`UPDATE … SET fence = $token WHERE fence < $token`) is
// modelled in memory by `Fenced`.

/** The whole process stops for `ms`, as in a long GC pause or a SIGSTOP: no timer runs meanwhile. */
const stall = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

/** A row written only by a token larger than the one that last wrote it. */
class Fenced {
  fence = 0n;
  readonly landed: string[] = [];
  readonly refused: string[] = [];

  write(by: string, token: bigint): void {
    if (token > this.fence) {
      this.fence = token;
      this.landed.push(by);
    } else this.refused.push(by);
  }
}

const BODY = JSON.stringify({ to: 'bob', amount: 5 });

/** A POST /transfers whose head is sent now and whose body is sent by `send()`. */
function lateBody(url: string, key: string) {
  const req = http.request(`${url}/transfers`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(BODY),
      'idempotency-key': key,
    },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { send: () => req.end(BODY), answered };
}

describe('fencing tokens are minted by the claim', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await redis?.stop();
  });

  it("two instances on one Redis, lease 300 ms: B's request is routed first but its body comes after A's handler stalled 900 ms; B claims later and holds the larger token, so A's late conditional write is refused and only B's lands", async () => {
    const Leased = Space('fence-late-body', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });
    const row = new Fenced();
    const tokens = new Map<string, bigint>();
    let routedB!: () => void;
    const bRouted = new Promise<void>((r) => (routedB = r));
    let stalledA!: () => void;
    const aStalled = new Promise<void>((r) => (stalledA = r));
    let wroteB!: () => void;
    const bWrote = new Promise<void>((r) => (wroteB = r));

    const instance = async (name: 'A' | 'B') => {
      @Controller()
      class Transfers {
        @Post('/transfers')
        // `by` runs as the request is routed, before its body is read.
        @Idempotent(Leased, { by: () => (name === 'B' && routedB(), 'acct-1') })
        @Returns(Status(201, Object))
        async create(@Body() t: Transfer, c: Ctx) {
          const token = c.idempotency!.token;
          tokens.set(name, token);
          if (name === 'A') {
            await new Promise((r) => setImmediate(r));
            stall(900); // past the lease: A's claim lapses in Redis meanwhile
            stalledA();
            await bWrote;
          }
          row.write(name, token);
          if (name === 'B') wroteB();
          return { by: name, to: t.to };
        }
      }
      const store = new RedisStore({ url: redis.url, commandTimeoutMs: 2000 });
      const app = new App({ log: () => {} }).controllers(Transfers).provide(Leased.open(store));
      const { url } = await app.listen({ port: 0 });
      return { url, close: async () => (await app.close(), await store.close()) };
    };
    const a = await instance('A');
    const b = await instance('B');
    try {
      const fromB = lateBody(b.url, 'pay-1');
      await bRouted; // B is routed: the token used to be minted here
      const fromA = fetch(`${a.url}/transfers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'pay-1' },
        body: BODY,
      });
      await aStalled;
      fromB.send(); // B's body, after A's lease lapsed: B claims the key now
      expect(await fromB.answered).toBe(201);
      expect((await fromA).status).toBe(201);
      expect(row.landed).toEqual(['B']);
      expect(row.refused).toEqual(['A']);
      expect(tokens.get('B')!).toBeGreaterThan(tokens.get('A')!);
      expect(row.fence).toBe(tokens.get('B'));
    } finally {
      await a.close();
      await b.close();
    }
  }, 30_000);
});

describe("fencing tokens on Postgres: one space's atomic and non-atomic routes", () => {
  let server: PostgresDatabase;
  beforeAll(async () => {
    server = await postgresDatabase();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("a key's tokens grow whichever route claims it: plain, atomic, plain, atomic (each run but the last failing, so the key is claimed again)", async () => {
    const Orders = Space('fence-mixed', { ttlSeconds: 60, maxBytes: 4096 });
    const seen: Array<[string, bigint]> = [];
    let runs = 0;
    @Controller()
    class Transfers {
      @Post('/plain')
      @Idempotent(Orders)
      @Returns(Status(201, Object))
      plain(@Body() _t: Transfer, c: Ctx) {
        seen.push(['plain', c.idempotency!.token]);
        if (++runs < 4) throw new Error('fails: the key is given back');
        return { ok: true };
      }

      @Post('/atomic')
      @Idempotent(Orders, { atomic: true })
      @Returns(Status(201, Object))
      async atomic(@Body() _t: Transfer, tx: Tx, c: Ctx) {
        await tx.query('SELECT 1');
        seen.push(['atomic', c.idempotency!.token]);
        if (++runs < 4) throw new Error('fails: the transaction is rolled back');
        return { ok: true };
      }
    }
    const store = new PgStore({ connectionString: server.url, table: 'fw_fence_mixed' });
    await store.migrate();
    const app = new App({ log: () => {} }).controllers(Transfers).provide(Orders.open(store));
    const { url } = await app.listen({ port: 0 });
    try {
      const statuses: number[] = [];
      for (const path of ['/plain', '/atomic', '/plain', '/atomic']) {
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'order-7' },
          body: BODY,
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([500, 500, 500, 201]);
      expect(seen.map(([route]) => route)).toEqual(['plain', 'atomic', 'plain', 'atomic']);
      for (let i = 1; i < seen.length; i++) expect(seen[i]![1]).toBeGreaterThan(seen[i - 1]![1]);
      // On the clock's scale (ms × 4096), not a transaction id's.
      expect(seen[1]![1]).toBeGreaterThan(BigInt(Date.now() - 60_000) * 4096n);
    } finally {
      await app.close();
      await store.close();
    }
  }, 60_000);
});
