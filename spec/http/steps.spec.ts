import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, RedisStore, Space, type Store } from 'fw-http/cache';
import { recordKey } from '../../lib/http/features/idempotency/read-key';
import { MAX_STEP_NAME, stepKey } from '../../lib/http/request/step';
import { cli } from '../support/redis-process';
import { startRedis, type RedisServer } from '../support/redis';

// Recovery points: `c.step(name, fn)` on an idempotent route records fn's result in the
// route's space before handing it back; a rerun of the same key reads it instead of running fn.

const Orders = Space('orders', { ttlSeconds: 120, maxBytes: 200 });

interface Runs {
  charge: number;
  ship: number;
  /** Throw after the first step, as a crash between the two steps would stop the handler. */
  failAfterCharge: boolean;
}

function shop(store: Store, runs: Runs, lines: string[]): App {
  @Controller()
  class Shop {
    @Post('/orders')
    @Idempotent(Orders)
    @Returns(Status(201, Object))
    async place(c: Ctx) {
      const charge = await c.step('charge', () => {
        runs.charge++;
        return { id: `ch_${runs.charge}_${Math.random().toString(36).slice(2)}`, at: new Date(0) };
      });
      if (runs.failAfterCharge) throw new Error('crashed between the steps');
      const ship = await c.step('ship', async () => ++runs.ship);
      return { charge, ship };
    }
  }
  return new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(Shop)
    .provide(Orders.open(store));
}

const post = (app: App, key: string) =>
  app.inject({ method: 'POST', url: '/orders', headers: { 'idempotency-key': key } });

function twoSteps(name: string, open: () => Promise<{ store: Store; stop(): Promise<void> }>) {
  describe(`c.step on ${name}`, () => {
    let store: Store;
    let stop: () => Promise<void>;
    beforeAll(async () => ({ store, stop } = await open()));
    afterAll(async () => {
      await store.close();
      await stop();
    });

    it('a handler that fails after step one: the rerun skips step one, reads its result back, and runs step two once', async () => {
      const runs: Runs = { charge: 0, ship: 0, failAfterCharge: true };
      const lines: string[] = [];
      const app = shop(store, runs, lines);
      const failed = await post(app, 'two-steps');
      expect(failed.status).toBe(500);
      expect([runs.charge, runs.ship]).toEqual([1, 0]);
      runs.failAfterCharge = false;
      const rerun = await post(app, 'two-steps');
      expect(rerun.status).toBe(201);
      const body = rerun.json() as { charge: { id: string; at: string }; ship: number };
      expect([runs.charge, runs.ship]).toEqual([1, 1]);
      expect(body.charge.id).toMatch(/^ch_1_/);
      // Read back as JSON gives it: the Date is its string, on the first run as on the rerun.
      expect(body).toEqual({
        charge: { id: body.charge.id, at: '1970-01-01T00:00:00.000Z' },
        ship: 1,
      });
      // The answer is kept: a retry replays it, no step runs.
      const replay = await post(app, 'two-steps');
      expect([replay.status, replay.headers['idempotent-replayed'], replay.json()]).toEqual([
        201,
        'true',
        body,
      ]);
      expect([runs.charge, runs.ship]).toEqual([1, 1]);
    });

    it('another key runs its steps afresh (a step record belongs to one request)', async () => {
      const runs: Runs = { charge: 0, ship: 0, failAfterCharge: false };
      const app = shop(store, runs, []);
      expect((await post(app, 'k-a')).status).toBe(201);
      expect((await post(app, 'k-b')).status).toBe(201);
      expect([runs.charge, runs.ship]).toEqual([2, 2]);
    });
  });
}

let redis: RedisServer | null = null;
twoSteps('MemoryStore', async () => ({
  store: new MemoryStore({ bytes: 1 << 20 }),
  stop: async () => {},
}));
twoSteps('RedisStore', async () => {
  redis = await startRedis();
  const r = redis;
  return { store: new RedisStore({ url: r.url, keyPrefix: 'steps:' }), stop: () => r.stop() };
});

describe('where a step is recorded and its limits', () => {
  let server: RedisServer;
  let store: RedisStore;
  beforeAll(async () => {
    server = await startRedis();
    store = new RedisStore({ url: server.url });
  });
  afterAll(async () => {
    await store.close();
    await server.stop();
  });

  it("the record is the step's JSON under (record key, step name) in the route's space, with the space's TTL, written before the handler goes on", async () => {
    let seenInStore: string | null = 'unread';
    const storeKey = `6:orders:${stepKey(recordKey('', 'where'), 'charge')}`;
    @Controller()
    class Where {
      @Post('/where')
      @Idempotent(Orders)
      @Returns(Status(201, Object))
      async place(c: Ctx) {
        const v = await c.step('charge', () => ({ amount: 5 }));
        seenInStore = await cli(server.port, 'GET', storeKey);
        return v;
      }
    }
    const app = new App({ log: () => {} }).controllers(Where).provide(Orders.open(store));
    const res = await app.inject({
      method: 'POST',
      url: '/where',
      headers: { 'idempotency-key': 'where' },
    });
    expect([res.status, res.json()]).toEqual([201, { amount: 5 }]);
    expect(seenInStore).toBe('{"v":{"amount":5}}');
    const ttl = Number(await cli(server.port, 'PTTL', storeKey));
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
  });

  it("a result over the space's maxBytes is handed back but not recorded (logged: a rerun runs it again); one at maxBytes is recorded", async () => {
    // '{"v":"…"}' is 8 bytes around the string: a string of maxBytes - 8 fills it exactly.
    let runs = 0;
    let size = 0;
    let failAfter = true;
    const lines: string[] = [];
    @Controller()
    class Big {
      @Post('/big')
      @Idempotent(Orders)
      @Returns(Status(201, Object))
      async place(c: Ctx) {
        const v = await c.step('big', () => (runs++, 'x'.repeat(size)));
        if (failAfter) throw new Error('after the step');
        return { n: v.length };
      }
    }
    const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
      .controllers(Big)
      .provide(Orders.open(store));
    const send = (key: string) =>
      app.inject({ method: 'POST', url: '/big', headers: { 'idempotency-key': key } });
    size = Orders.maxBytes - 8 + 1;
    expect((await send('over')).status).toBe(500);
    expect(
      lines.some((l) =>
        l.includes(
          `step "big" ran but was not recorded (its result is ${Orders.maxBytes + 1} bytes, over the space's maxBytes ${Orders.maxBytes}): a rerun of this request runs it again`,
        ),
      ),
    ).toBe(true);
    failAfter = false;
    expect((await send('over')).status).toBe(201);
    expect(runs).toBe(2);
    runs = 0;
    size = Orders.maxBytes - 8;
    failAfter = true;
    expect((await send('at')).status).toBe(500);
    failAfter = false;
    const at = await send('at');
    expect([at.status, at.json(), runs]).toEqual([201, { n: Orders.maxBytes - 8 }, 1]);
  });

  it('a step name used twice in one request, an empty one or one over 100 characters is the program’s mistake: 500, logged; 100 characters pass', async () => {
    /** One request whose handler runs step `name` (twice when asked); its status and log. */
    async function run(name: string, twice = false): Promise<[number, string]> {
      const lines: string[] = [];
      @Controller()
      class Names {
        @Post('/names')
        @Idempotent(Orders)
        @Returns(Status(201, Object))
        async place(c: Ctx) {
          await c.step(name, () => 1);
          if (twice) await c.step(name, () => 2);
          return { ok: true };
        }
      }
      const app = new App({ log: (l) => lines.push(l) })
        .controllers(Names)
        .provide(Orders.open(store));
      const res = await app.inject({
        method: 'POST',
        url: '/names',
        headers: { 'idempotency-key': `n-${name.length}-${String(twice)}` },
      });
      // The error line is written after the answer.
      for (let i = 0; i < 100 && res.status === 500 && lines.length === 0; i++)
        await new Promise((r) => setTimeout(r, 20));
      return [res.status, lines.join('\n')];
    }
    expect((await run('x'.repeat(MAX_STEP_NAME)))[0]).toBe(201);
    const [long, longLog] = await run('x'.repeat(MAX_STEP_NAME + 1));
    expect(long).toBe(500);
    expect(longLog).toContain(
      `c.step name must be a non-empty string of at most ${MAX_STEP_NAME} characters, got ${MAX_STEP_NAME + 1} characters`,
    );
    const [empty, emptyLog] = await run('');
    expect([empty, emptyLog]).toEqual([500, expect.stringContaining('got 0 characters')]);
    const [twice, twiceLog] = await run('charge', true);
    expect([twice, twiceLog]).toEqual([
      500,
      expect.stringContaining('c.step \\"charge\\" ran twice in one request'),
    ]);
  });

  it('outside an idempotent route c.step just runs fn every time (no key, no rerun to recognise), its result through JSON', async () => {
    let runs = 0;
    @Controller()
    class Plain {
      @Post('/plain')
      @Returns(Status(201, Object))
      async place(c: Ctx) {
        return { at: await c.step('stamp', () => (runs++, new Date(0))) };
      }
    }
    const app = new App({ log: () => {} }).controllers(Plain);
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ method: 'POST', url: '/plain' });
      expect([res.status, res.json()]).toEqual([201, { at: '1970-01-01T00:00:00.000Z' }]);
    }
    expect(runs).toBe(2);
  });

  it('the store failing when a step is looked up: 503 idempotency store unavailable, fn not run', async () => {
    const inner = new MemoryStore({ bytes: 1 << 20 });
    // The real store, failing only the step's lookup (the claim before it succeeds).
    const failing: Store = {
      get: (k) => (k.includes('step:') ? Promise.reject(new Error('down')) : inner.get(k)),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: (k, v, t, o) => inner.put(k, v, t, o),
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    let runs = 0;
    @Controller()
    class Down {
      @Post('/down')
      @Idempotent(Orders)
      @Returns(Status(201, Object))
      async place(c: Ctx) {
        return { v: await c.step('charge', () => ++runs) };
      }
    }
    const app = new App({ log: () => {} }).controllers(Down).provide(Orders.open(failing));
    const res = await app.inject({
      method: 'POST',
      url: '/down',
      headers: { 'idempotency-key': 'd' },
    });
    expect([res.status, res.json(), runs]).toEqual([
      503,
      { error: 'idempotency store unavailable', status: 503 },
      0,
    ]);
  });
});
