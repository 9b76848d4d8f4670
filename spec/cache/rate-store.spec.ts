import { performance } from 'node:perf_hooks';
import { MemoryRateStore, RedisStore, type RateStore } from 'fw-http/cache';
import { startRedis, type RedisServer } from '../support/redis';
import { describeRateStoreContract, rule, sleep } from './rate-store-contract';

let server: RedisServer;
let prefixes = 0;
const stores: RedisStore[] = [];

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  while (stores.length) await stores.pop()!.close();
});

function redis(keyPrefix: string, commandTimeoutMs = 1000): RedisStore {
  const store = new RedisStore({ url: server.url, keyPrefix, commandTimeoutMs });
  stores.push(store);
  return store;
}

describeRateStoreContract(
  'MemoryRateStore',
  () => new MemoryRateStore(),
  (s) => (s as MemoryRateStore).close(),
);
describeRateStoreContract(
  'RedisStore',
  () => new RedisStore({ url: server.url, keyPrefix: `rate-contract-${++prefixes}:` }),
  (s) => (s as RedisStore).close(),
);

describe('MemoryRateStore', () => {
  it('resetMs is never past the window, even where start + span - now is a hair over the span in floating point (CI saw 60001)', () => {
    const store = new MemoryRateStore();
    const now = 12_345.7054; // now + 60000 - now === 60000.000000000007
    expect(Math.ceil(now + 60_000 - now)).toBe(60_001);
    const fixed = rule({ max: 3, windowMs: 60_000 });
    expect(store.countAt(fixed, 'k', now).resetMs).toBe(60_000);
    expect(store.countAt(fixed, 'k', now).resetMs).toBe(60_000);
    store.countAt(fixed, 'k', now);
    // Over: the wait is the rest of the window, no more.
    expect(store.countAt(fixed, 'k', now)).toEqual({
      waitMs: 60_000,
      remaining: 0,
      resetMs: 60_000,
    });
  });

  it("keeps at most maxKeys keys per rule: a new one past it is admitted in the least recently seen key's place, and count says evicted", async () => {
    const store = new MemoryRateStore();
    const r = rule({ max: 1, maxKeys: 2 });
    expect(await store.hit(r, 'a')).toBe(0);
    expect(await store.hit(r, 'b')).toBe(0);
    expect(await store.hit(r, 'a')).toBeGreaterThan(0);
    expect(await store.count(r, 'c')).toMatchObject({ waitMs: 0, remaining: 0, evicted: 1 });
    expect(await store.count(r, 'a')).toEqual({
      waitMs: expect.any(Number),
      remaining: 0,
      resetMs: expect.any(Number),
    });
    expect((await store.count(r, 'c')).waitMs).toBeGreaterThan(0);
    // 'b' was forgotten: it starts afresh, in the place of 'a'.
    expect(await store.count(r, 'b')).toMatchObject({ waitMs: 0, evicted: 1 });
  });

  it('take answers at once at a given time; a sliding rule at its edge', () => {
    const store = new MemoryRateStore();
    const r = rule({ max: 4, windowMs: 1_000, window: 'sliding' });
    const t0 = Math.ceil(performance.now() / 1_000) * 1_000 + 1_000;
    for (let i = 0; i < 4; i++) expect(store.take(r, 'a', t0 + 100 + i)).toBe(0);
    expect(store.take(r, 'a', t0 + 500)).toBe(750);
    expect(store.take(r, 'a', t0 + 1_250)).toBe(0);
  });

  it('refuses two different rules under one name, and every call after close', async () => {
    const store = new MemoryRateStore();
    expect(await store.hit({ name: 'n', max: 1, windowMs: 1_000, window: 'fixed' }, 'a')).toBe(0);
    await expect(
      store.hit({ name: 'n', max: 2, windowMs: 1_000, window: 'fixed' }, 'a'),
    ).rejects.toMatchObject({
      code: 'InvalidArgument',
      message: /two different rules are named "n"/,
    });
    await store.close();
    await expect(
      store.hit({ name: 'n', max: 1, windowMs: 1_000, window: 'fixed' }, 'a'),
    ).rejects.toMatchObject({ code: 'Unavailable' });
  });
});

describe('RedisStore as a RateStore', () => {
  it('FAIL-27 two stores (two connections) racing on one key admit exactly max between them', async () => {
    const a = redis('race:');
    const b = redis('race:');
    for (const window of ['fixed', 'sliding'] as const) {
      const r = rule({ window, max: 10 });
      const waits = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).hit(r, 'k')),
      );
      expect(waits.filter((w) => w === 0)).toHaveLength(10);
    }
  });

  it('is one key per (rule, key) with a TTL, under the store prefix: nothing is left behind', async () => {
    const store = redis('ttl:');
    const r = rule({ max: 1, windowMs: 60_000 });
    const s = rule({ max: 1, windowMs: 60_000, window: 'sliding' });
    await store.hit(r, '10.0.0.1');
    await store.hit(s, '10.0.0.1');
    const { default: Redis } = await import('ioredis');
    const raw = new Redis(server.url);
    try {
      const keys = (await raw.keys('ttl:*')).sort();
      expect(keys).toEqual([
        `ttl:rate:f60000:${r.name.length}:${r.name}:10.0.0.1`,
        `ttl:rate:s60000:${s.name.length}:${s.name}:10.0.0.1`,
      ]);
      for (const k of keys) {
        const ttl = await raw.pttl(k);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(120_000);
      }
    } finally {
      raw.disconnect();
    }
  });

  it('fails Unavailable within commandTimeoutMs while Redis is down, and counts again once it is back', async () => {
    const store: RateStore = redis('down:', 200);
    const r = rule({ max: 1 });
    expect(await store.hit(r, 'a')).toBe(0);
    await server.halt();
    try {
      await expect(store.hit(r, 'b')).rejects.toMatchObject({ code: 'Unavailable' });
    } finally {
      await server.restart();
    }
    let wait: number | null = null;
    for (let i = 0; i < 40 && wait === null; i++) {
      await sleep(100);
      wait = await store.hit(r, 'c').catch(() => null);
    }
    expect(wait).toBe(0);
    expect(await store.hit(r, 'c')).toBeGreaterThan(0);
  });
});
