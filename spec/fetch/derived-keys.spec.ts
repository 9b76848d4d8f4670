import {
  App,
  Controller,
  Ctx,
  Idempotent,
  Post,
  Returns,
  Status,
  type IdempotencyInfo,
} from 'fw-http';
import { MemoryStore, PgStore, Space } from 'fw-http/cache';
import { Client, FetchError, Target } from 'fw-http/fetch';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// Derived Idempotency-Keys on outbound calls and c.idempotency (issue 23, part 3).

const Charges = Space('charges', { ttlSeconds: 60, maxBytes: 4096 });
const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096 });
const Bank = Target('bank', { idempotencyKeys: true });
const Plain = Target('plain');

/** The upstream: an idempotent route that records every Idempotency-Key it is sent and counts runs per key. */
function bankApp(seen: string[], runs: Map<string, number>): App {
  @Controller()
  class BankRoutes {
    @Post('/charges') @Idempotent(Charges) @Returns(Status(201, Object)) charge(c: Ctx) {
      const key = c.idempotency!.key;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return { charged: key };
    }
    @Post('/echo') @Returns(Status(201, Object)) echo() {
      return {};
    }
  }
  return new App({ log: () => {} })
    .controllers(BankRoutes)
    .provide(Charges.open(new MemoryStore({ bytes: 1 << 20 })))
    .use(async (c, next) => {
      seen.push(String(c.header('idempotency-key')));
      await next();
    });
}

describe('I23.3 derived Idempotency-Keys on outbound calls', () => {
  it('I23.3 calls to a target with idempotencyKeys carry keys derived from (space, caller, key, call number): a rerun sends the same keys and the upstream runs each once', async () => {
    const seen: string[] = [];
    const runs = new Map<string, number>();
    const bank = bankApp(seen, runs);
    const { url: bankUrl } = await bank.listen({ port: 0 });
    const client = new Client();
    const target = Bank.open(client, { base: bankUrl });
    const plain = Plain.open(client, { base: bankUrl });
    let crash = true;
    const infos: IdempotencyInfo[] = [];
    @Controller()
    class Shop {
      @Post('/pay')
      @Idempotent(Payments, { by: (c) => String(c.header('x-account')) })
      @Returns(Status(201, Object))
      async pay(c: Ctx) {
        infos.push(c.idempotency!);
        const a = (await target.postJson(c, '/charges', {}, { n: 1 })).json();
        const b = (await target.postJson(c, '/charges', {}, { n: 2 })).json();
        await plain.postJson(c, '/echo', {}, {});
        if (crash) throw new Error('killed after both charges');
        return { a, b };
      }
    }
    const shop = new App({ log: () => {} })
      .controllers(Shop)
      .provide(client)
      .provide(target)
      .provide(Payments.open(new MemoryStore({ bytes: 1 << 20 })));
    try {
      const pay = () =>
        shop.inject({
          method: 'POST',
          url: '/pay',
          headers: { 'idempotency-key': '"order-7"', 'x-account': 'alice' },
        });
      expect((await pay()).status).toBe(500);
      crash = false;
      const second = await pay();
      expect(second.status).toBe(201);
      // Two keyed calls per run, the plain target's call without a key; the rerun repeats the keys.
      expect(seen).toHaveLength(6);
      const [k1, k2, none, r1, r2, none2] = seen;
      expect([none, none2]).toEqual(['null', 'null']);
      expect(k1).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(k1).not.toBe(k2);
      expect([r1, r2]).toEqual([k1, k2]);
      expect([...runs.values()]).toEqual([1, 1]);
      expect(second.json()).toEqual({ a: { charged: k1 }, b: { charged: k2 } });
      // c.idempotency: the key as normalised (quotes off), the caller, a token that grows.
      expect(infos.map((i) => [i.space, i.caller, i.key])).toEqual([
        ['payments', 'alice', 'order-7'],
        ['payments', 'alice', 'order-7'],
      ]);
      expect(infos[1]!.token > infos[0]!.token).toBe(true);
    } finally {
      await shop.close();
      await bank.close();
    }
  });

  it('I23.3 another caller or another key derives other keys; a call naming its own Idempotency-Key keeps it', async () => {
    const seen: string[] = [];
    const bank = bankApp(seen, new Map());
    const { url } = await bank.listen({ port: 0 });
    const client = new Client();
    const target = Bank.open(client, { base: url });
    @Controller()
    class Shop {
      @Post('/pay')
      @Idempotent(Payments, { by: (c) => String(c.header('x-account')) })
      @Returns(Status(201, Object))
      async pay(c: Ctx) {
        await target.postJson(c, '/echo', {}, {});
        await target.postJson(
          c,
          '/echo',
          {},
          {},
          { headers: [{ name: 'Idempotency-Key', value: 'mine' }] },
        );
        return {};
      }
    }
    const shop = new App({ log: () => {} })
      .controllers(Shop)
      .provide(client)
      .provide(Payments.open(new MemoryStore({ bytes: 1 << 20 })));
    try {
      for (const [account, key] of [
        ['alice', 'k'],
        ['bob', 'k'],
        ['alice', 'k2'],
      ])
        expect(
          (
            await shop.inject({
              method: 'POST',
              url: '/pay',
              headers: { 'idempotency-key': key!, 'x-account': account! },
            })
          ).status,
        ).toBe(201);
      const derived = seen.filter((_, i) => i % 2 === 0);
      expect(new Set(derived).size).toBe(3);
      expect(seen.filter((_, i) => i % 2 === 1)).toEqual(['mine', 'mine', 'mine']);
    } finally {
      await shop.close();
      await bank.close();
    }
  });

  it('I23.3 Target refuses an idempotencyKeys that is not a boolean', () => {
    expect(() => Target('t', { idempotencyKeys: 'yes' as unknown as boolean })).toThrow(FetchError);
  });
});

describe('I23.3 the fencing token of an atomic route', () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(() => pg?.stop());

  it('I23.3 on an atomic route c.idempotency.token is the claim transaction id: it grows with every claim', async () => {
    const store = new PgStore({ connectionString: pg.url });
    await store.migrate();
    const tokens: bigint[] = [];
    @Controller()
    class C {
      @Post('/t') @Idempotent(Payments, { atomic: true }) @Returns(Status(201, Object)) t(c: Ctx) {
        tokens.push(c.idempotency!.token);
        return {};
      }
    }
    const app = new App({ log: () => {} }).controllers(C).provide(Payments.open(store));
    const pool = testPool(pg.url, 1);
    try {
      for (const key of ['a', 'b', 'c'])
        await app.inject({ method: 'POST', url: '/t', headers: { 'idempotency-key': key } });
      expect(tokens).toHaveLength(3);
      expect(tokens[1]! > tokens[0]! && tokens[2]! > tokens[1]!).toBe(true);
      const { rows } = await pool.query('SELECT txid_current()::text AS now');
      expect(BigInt(rows[0].now as string) > tokens[2]!).toBe(true);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
