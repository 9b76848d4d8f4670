import { App, Controller, Idempotent, Param, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space, type Store } from 'fw-http/cache';
import { cli } from '../support/redis-process';
import { startRedis, type RedisServer } from '../support/redis';

// The idempotency step's rarer paths on a real Redis, for a route without `by` (one
// caller: no per-caller budget to drop), each answer pinned.

const Small = Space('small', { ttlSeconds: 60, maxBytes: 300 });

describe('a route without `by` on Redis: lost race, claim failure, over-size answer', () => {
  let redis: RedisServer;
  let store: RedisStore;
  /** Answers `get` with null once when set: the record appears between the lookup and the claim. */
  let missNext = false;
  let runs = 0;
  let app: App;
  const lines: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    store = new RedisStore({ url: redis.url, commandTimeoutMs: 1000 });
    const racing: Store = {
      get: (k) => (missNext ? ((missNext = false), Promise.resolve(null)) : store.get(k)),
      putIfAbsent: (k, v, t) => store.putIfAbsent(k, v, t),
      put: (k, v, t, o) => store.put(k, v, t, o),
      del: (k, o) => store.del(k, o),
      close: async () => {},
    };
    @Controller()
    class One {
      @Post('/one/{size}')
      @Idempotent(Small)
      @Returns(Status(201, Object))
      make(@Param('size') size: string) {
        runs++;
        return { runs, pad: 'x'.repeat(Number(size)) };
      }
    }
    app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
      .controllers(One)
      .provide(Small.open(racing));
  });
  afterAll(async () => {
    await store.close();
    await redis.stop();
  });
  beforeEach(() => {
    runs = 0;
  });
  const post = (key: string, size = 1) =>
    app.inject({ method: 'POST', url: `/one/${size}`, headers: { 'idempotency-key': key } });

  it('the lost race finds a kept answer: the answer is its replay (201, Idempotent-Replayed), never 409, never a run', async () => {
    expect((await post('race')).status).toBe(201);
    missNext = true;
    const lost = await post('race');
    expect([lost.status, lost.headers['idempotent-replayed'], lost.json()]).toEqual([
      201,
      'true',
      { runs: 1, pad: 'x' },
    ]);
    expect(runs).toBe(1);
  });

  it('a claim refused by a full Redis (OOM under noeviction) is 503 StoreFull with Retry-After: 1, the handler not run; room again, it runs', async () => {
    await cli(redis.port, 'config', 'set', 'maxmemory', '1');
    try {
      const full = await post('full');
      expect([full.status, full.headers['retry-after']]).toEqual([503, '1']);
      expect(full.json()).toEqual({ error: 'idempotency store full', status: 503 });
      expect(runs).toBe(0);
    } finally {
      await cli(redis.port, 'config', 'set', 'maxmemory', '0');
    }
    expect((await post('full')).status).toBe(201);
    expect(runs).toBe(1);
  });

  it('an answer over maxBytes is sent, not kept, its claim released: the retry runs again', async () => {
    const big = await post('big', 1000);
    expect(big.status).toBe(201);
    const again = await post('big', 1000);
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(runs).toBe(2);
    await new Promise((r) => setImmediate(r));
    expect(
      lines.filter((l) => l.includes("larger than the space's maxBytes (300): sent, not kept")),
    ).toHaveLength(2);
  });
});
