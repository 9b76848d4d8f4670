import {
  App,
  Controller,
  Ctx,
  Idempotent,
  Param,
  Post,
  Returns,
  Status,
  type IdempotencyInfo,
} from 'fw-http';
import { MemoryStore, PgStore, Space } from 'fw-http/cache';
import { Client, FetchError, Target, type OpenTarget } from 'fw-http/fetch';
import { postgresDatabase, type PostgresDatabase } from '../support/postgres-database';
import { testPool } from '../support/pg-pool';

// Derived Idempotency-Keys on outbound calls and c.idempotency.

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

describe('derived Idempotency-Keys on outbound calls', () => {
  it('calls to a target with idempotencyKeys carry keys derived from the request (space, caller, key) and the call: a rerun sends the same keys and the upstream runs each once', async () => {
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

  it('another caller or another key derives other keys; a call naming its own Idempotency-Key keeps it', async () => {
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

  it('Target refuses an idempotencyKeys that is not a boolean', () => {
    expect(() => Target('t', { idempotencyKeys: 'yes' as unknown as boolean })).toThrow(FetchError);
  });
});

describe('the fencing token of an atomic route', () => {
  let pg: PostgresDatabase;
  beforeAll(async () => {
    pg = await postgresDatabase();
  }, 60_000);
  afterAll(() => pg?.stop());

  it("on an atomic route c.idempotency.token is the database's clock as the claim was written (µs × 4.096): it grows with every claim", async () => {
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
      const { rows } = await pool.query(
        'SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS us',
      );
      expect((BigInt(rows[0].us as string) * 4096n) / 1000n > tokens[2]!).toBe(true);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});

// Derived keys follow each call's identity: the enclosing c.step, the target,
// the method and the path template, counted within that identity. A step read back on a rerun, or
// a branch taken on one run only, moves no other call's key.
describe('derived keys follow the call, not its position', () => {
  const Reserves = Space('reserves', { ttlSeconds: 60, maxBytes: 4096 });
  const Checks = Space('checks', { ttlSeconds: 60, maxBytes: 4096 });
  const Warehouse = Target('warehouse', { idempotencyKeys: true });
  const Fraud = Target('fraud', { idempotencyKeys: true });

  /** An fw upstream whose three idempotent routes (each its own space) list every effect they make. */
  async function upstream(effects: string[]): Promise<{ app: App; url: string }> {
    @Controller()
    class Upstream {
      @Post('/charges') @Idempotent(Charges) @Returns(Status(201, Object)) charge(c: Ctx) {
        effects.push('charge');
        return { id: `ch-${c.idempotency!.key.slice(0, 6)}` };
      }
      @Post('/reserve/{sku}')
      @Idempotent(Reserves)
      @Returns(Status(201, Object))
      reserve(@Param('sku') sku: string) {
        effects.push(`reserve ${sku}`);
        return {};
      }
      @Post('/checks') @Idempotent(Checks) @Returns(Status(201, Object)) check() {
        effects.push('check');
        return {};
      }
    }
    const app = new App({ log: () => {} })
      .controllers(Upstream)
      .provide(Charges.open(new MemoryStore({ bytes: 1 << 20 })))
      .provide(Reserves.open(new MemoryStore({ bytes: 1 << 20 })))
      .provide(Checks.open(new MemoryStore({ bytes: 1 << 20 })));
    const { url } = await app.listen({ port: 0 });
    return { app, url };
  }

  /** A shop whose POST /pay runs `handle`; each test sends it the same key until it answers 201. */
  async function withShop(
    handle: (c: Ctx, t: { bank: OpenTarget; warehouse: OpenTarget; fraud: OpenTarget }) => unknown,
    run: (pay: () => Promise<number>, effects: string[]) => Promise<void>,
  ): Promise<void> {
    const effects: string[] = [];
    const up = await upstream(effects);
    const client = new Client();
    const targets = {
      bank: Bank.open(client, { base: up.url }),
      warehouse: Warehouse.open(client, { base: up.url }),
      fraud: Fraud.open(client, { base: up.url }),
    };
    @Controller()
    class Shop {
      @Post('/pay') @Idempotent(Payments) @Returns(Status(201, Object)) async pay(c: Ctx) {
        await handle(c, targets);
        return {};
      }
    }
    const shop = new App({ log: () => {} })
      .controllers(Shop)
      .provide(client)
      .provide(Payments.open(new MemoryStore({ bytes: 1 << 20 })));
    try {
      const pay = async () =>
        (await shop.inject({ method: 'POST', url: '/pay', headers: { 'idempotency-key': 'o-1' } }))
          .status;
      await run(pay, effects);
    } finally {
      await shop.close();
      await up.app.close();
    }
  }

  it('a step read back on a rerun moves no later call: the reserve after it is made once', async () => {
    let crash = true;
    await withShop(
      async (c, { bank, warehouse }) => {
        await c.step('charge', async () => (await bank.postJson(c, '/charges', {}, {})).json());
        await warehouse.postJson(c, '/reserve/{sku}', { sku: 'a' }, { qty: 1 });
        if (crash) throw new Error('crashed after the reserve');
      },
      async (pay, effects) => {
        expect(await pay()).toBe(500);
        crash = false;
        expect(await pay()).toBe(201);
        expect(effects).toEqual(['charge', 'reserve a']);
      },
    );
  });

  it('a branch taken on one run and not the next moves no other call: the charge is made once', async () => {
    let flag = true;
    await withShop(
      async (c, { bank, fraud }) => {
        if (flag) await fraud.postJson(c, '/checks', {}, {});
        await bank.postJson(c, '/charges', {}, {});
        if (flag) throw new Error('crashed after the charge');
      },
      async (pay, effects) => {
        expect(await pay()).toBe(500);
        flag = false;
        expect(await pay()).toBe(201);
        expect(effects).toEqual(['check', 'charge']);
      },
    );
  });

  it('calls of one identity count within it: a loop over /reserve/{sku} sends one key per turn, the same turns on a rerun', async () => {
    let crash = true;
    await withShop(
      async (c, { bank, warehouse }) => {
        for (const sku of ['a', 'b', 'c']) {
          await warehouse.postJson(c, '/reserve/{sku}', { sku }, { qty: 1 });
          if (sku === 'a') await bank.postJson(c, '/charges', {}, {});
        }
        if (crash) throw new Error('crashed after the loop');
      },
      async (pay, effects) => {
        expect(await pay()).toBe(500);
        crash = false;
        expect(await pay()).toBe(201);
        expect(effects).toEqual(['reserve a', 'charge', 'reserve b', 'reserve c']);
      },
    );
  });

  it('a call inside a step is counted within the step: steps run side by side keep their keys whichever calls first', async () => {
    let run = 0;
    await withShop(
      async (c, { bank }) => {
        run++;
        // The first run charges for y first, the rerun for x first: each step's charge keeps its key.
        const first = run === 1 ? 'y' : 'x';
        let sent!: () => void;
        const firstSent = new Promise<void>((r) => (sent = r));
        const charge = (who: string) =>
          c.step(who, async () => {
            if (who !== first) await firstSent;
            const res = await bank.postJson(c, '/charges', {}, { who });
            sent();
            if (run === 1) throw new Error(`crashed in step ${who}, before its record`);
            return res.status;
          });
        const settled = await Promise.allSettled([charge('x'), charge('y')]);
        if (run === 1) throw new Error('both steps failed');
        expect(settled).toEqual([
          { status: 'fulfilled', value: 201 },
          { status: 'fulfilled', value: 201 },
        ]);
      },
      async (pay, effects) => {
        expect(await pay()).toBe(500);
        expect(await pay()).toBe(201);
        expect(effects).toEqual(['charge', 'charge']);
      },
    );
  });
});
