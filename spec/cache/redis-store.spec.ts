import Redis from 'ioredis';
import { CacheError, RedisStore, Space } from 'fw-http/cache';
import { startRedis, type RedisServer } from '../support/redis';
import { describeStoreContract, sleep } from './store-contract';

let server: RedisServer;
let stores: RedisStore[] = [];
let prefixes = 0;

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

/** A store that afterEach closes, so a failing test leaves no socket open. */
function open(url: string, keyPrefix = ''): RedisStore {
  const store = new RedisStore({ url, keyPrefix });
  stores.push(store);
  return store;
}

// Each test gets its own prefix, so tests share the server but no keys.
describeStoreContract(
  'RedisStore',
  () => new RedisStore({ url: server.url, keyPrefix: `contract-${++prefixes}:` }),
);

describe('RedisStore', () => {
  it('CACHE-11 several instances pointed at one Redis share entries', async () => {
    const a = open(server.url, 'shared:');
    const b = open(server.url, 'shared:');
    expect(await a.putIfAbsent('k', Buffer.from('from a'), 60_000)).toBe(true);
    expect(await b.get('k')).toEqual(Buffer.from('from a'));
    expect(await b.putIfAbsent('k', Buffer.from('from b'), 60_000)).toBe(false);
    expect(await b.put('k', Buffer.from('by b'), 60_000, { expect: Buffer.from('from a') })).toBe(
      true,
    );
    expect(await a.get('k')).toEqual(Buffer.from('by b'));
    expect(await a.del('k', { expect: Buffer.from('from a') })).toBe(false);
    expect(await a.del('k', { expect: Buffer.from('by b') })).toBe(true);
    expect(await b.get('k')).toBeNull();
  });

  it('CACHE-11 only instances with the same keyPrefix share entries', async () => {
    const shop = open(server.url, 'shop:');
    const blog = open(server.url, 'blog:');
    await shop.put('k', Buffer.from('shop'), 60_000);
    expect(await blog.get('k')).toBeNull();
    expect(await blog.putIfAbsent('k', Buffer.from('blog'), 60_000)).toBe(true);
    expect(await shop.get('k')).toEqual(Buffer.from('shop'));
  });

  it('CACHE-11 an entry outlives the program that wrote it: a new instance after the first closed reads it', async () => {
    const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 1024 });
    const first = new RedisStore({ url: server.url, keyPrefix: 'restart:' });
    expect(await Orders.open(first).putIfAbsent('key-1', Buffer.from([0xff, 0x00, 0x01]))).toBe(
      true,
    );
    await first.close();
    const next = open(server.url, 'restart:');
    expect(await Orders.open(next).get('key-1')).toEqual(Buffer.from([0xff, 0x00, 0x01]));
  });

  it('CACHE-11 with persistence on, entries survive a redis-server restart and the store reconnects by itself', async () => {
    const durable = await startRedis({ appendonly: true });
    try {
      // Connecting is part of the first put's deadline: give it room on a loaded machine (CI saw
      // the default second run out); what this test checks is what survives the restart.
      const store = new RedisStore({ url: durable.url, commandTimeoutMs: 5000 });
      stores.push(store);
      await store.put('kept', Buffer.from('survives'), 60_000);
      await store.put('brief', Buffer.from('expires'), 300);
      await durable.restart();
      let got: Buffer | null | undefined;
      for (const deadline = Date.now() + 15_000; got === undefined && Date.now() < deadline;) {
        try {
          got = await store.get('kept');
        } catch (err) {
          expect((err as CacheError).code).toBe('Unavailable');
          await sleep(100);
        }
      }
      expect(got).toEqual(Buffer.from('survives'));
      await sleep(400);
      // The TTL was kept through the restart too.
      expect(await store.get('brief')).toBeNull();
    } finally {
      await durable.stop();
    }
  });

  it('CACHE-12 100 parallel putIfAbsent from two connections on one key: exactly one wins', async () => {
    const a = open(server.url, 'claim:');
    const b = open(server.url, 'claim:');
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 === 0 ? a : b).putIfAbsent('race', Buffer.from([i]), 60_000),
      ),
    );
    expect(results.filter((won) => won)).toHaveLength(1);
    expect(await a.get('race')).toEqual(Buffer.from([results.indexOf(true)]));
  });

  it('CACHE-12 putIfAbsent is one SET key value PX ttl NX; compare-and-set and compare-and-delete are one script call each', async () => {
    const raw = new Redis(server.url);
    const monitor = await raw.monitor();
    try {
      // MONITOR also lists what a script runs inside Redis, with source "lua"; keep what clients sent.
      const sent: string[][] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source !== 'lua') sent.push(args);
      });
      const store = open(server.url, 'mon:');
      await store.putIfAbsent('k', Buffer.from('claim'), 60_000);
      await store.put('k', Buffer.from('record'), 60_000, { expect: Buffer.from('claim') });
      await store.del('k', { expect: Buffer.from('record') });
      // MONITOR lines may trail the replies: wait for a marker sent last.
      await store.get('marker');
      const deadline = Date.now() + 2000;
      while (!sent.some((args) => args.includes('mon:marker')) && Date.now() < deadline)
        await sleep(10);
      const onKey = sent.filter((args) => args.includes('mon:k'));
      expect(onKey.map((args) => args[0].toLowerCase())).toEqual([
        'set',
        expect.stringMatching(/^(evalsha|eval)$/),
        expect.stringMatching(/^(evalsha|eval)$/),
      ]);
      expect(onKey[0]).toEqual(['set', 'mon:k', 'claim', 'PX', '60000', 'NX']);
    } finally {
      monitor.disconnect();
      raw.disconnect();
    }
  });

  it('OPEN-59 with Redis down every operation rejects with CacheError Unavailable within 2 s, and never hangs', async () => {
    const doomed = await startRedis();
    const store = open(doomed.url, 'down:');
    const never = open(doomed.url, 'down:'); // built while up, first used while down
    const orders = Space('orders', { ttlSeconds: 60, maxBytes: 1024 }).open(store);
    expect(await store.putIfAbsent('k', Buffer.from('claim'), 60_000)).toBe(true);
    await doomed.stop();
    const fresh = open(doomed.url, 'down:'); // built while down
    const calls: Array<[string, () => unknown]> = [
      ['get', () => store.get('k')],
      ['putIfAbsent', () => store.putIfAbsent('k', Buffer.from('x'), 60_000)],
      ['put', () => store.put('k', Buffer.from('x'), 60_000)],
      [
        'put expect',
        () => store.put('k', Buffer.from('x'), 60_000, { expect: Buffer.from('claim') }),
      ],
      ['del', () => store.del('k')],
      ['del expect', () => store.del('k', { expect: Buffer.from('claim') })],
      ['space get', () => orders.get('k')],
      ['space putIfAbsent', () => orders.putIfAbsent('k', Buffer.from('x'))],
      ['first use while down', () => never.get('k')],
      ['built while down', () => fresh.putIfAbsent('k', Buffer.from('x'), 60_000)],
    ];
    const outcomes = await Promise.all(
      calls.map(async ([name, call]) => {
        const started = Date.now();
        try {
          await call();
          return { name, error: null, ms: Date.now() - started };
        } catch (error) {
          return { name, error, ms: Date.now() - started };
        }
      }),
    );
    for (const { name, error, ms } of outcomes) {
      expect({ name, isCacheError: error instanceof CacheError }).toEqual({
        name,
        isCacheError: true,
      });
      expect({ name, code: (error as CacheError).code }).toEqual({ name, code: 'Unavailable' });
      expect({ name, fast: ms < 2000 }).toEqual({ name, fast: true });
    }
    expect((outcomes[0].error as CacheError).message).toContain('"k"');
    expect((outcomes[6].error as CacheError).message).toContain('6:orders:k');
  });

  it('OPEN-59 fails closed: a claim that failed Unavailable while Redis was down does not land when it comes back', async () => {
    const flaky = await startRedis({ appendonly: true });
    try {
      const store = open(flaky.url);
      expect(await store.putIfAbsent('warm', Buffer.from('up'), 60_000)).toBe(true);
      await flaky.halt();
      const err = await store.putIfAbsent('claim', Buffer.from('late'), 60_000).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CacheError);
      expect((err as CacheError).code).toBe('Unavailable');
      await flaky.restart();
      // Wait for the store to be back, then look: a queued command would have been sent by now.
      const deadline = Date.now() + 5000;
      let back = false;
      while (!back && Date.now() < deadline) {
        back = await store.get('warm').then(
          (v) => v !== null,
          () => false,
        );
        if (!back) await sleep(100);
      }
      expect(back).toBe(true);
      await sleep(200);
      expect(await store.get('claim')).toBeNull();
      expect(await store.putIfAbsent('claim', Buffer.from('retry'), 60_000)).toBe(true);
    } finally {
      await flaky.stop();
    }
  });

  // Found by mutation testing (npm run mutate).
  it('with no keyPrefix the key is stored as given', async () => {
    const raw = new Redis(server.url);
    try {
      const store = new RedisStore({ url: server.url });
      stores.push(store);
      await store.put('bare-key', Buffer.from('v'), 60_000);
      expect(await raw.getBuffer('bare-key')).toEqual(Buffer.from('v'));
    } finally {
      raw.disconnect();
    }
  });

  it('CACHE-12 a Redis at maxmemory under noeviction refuses writes as CacheError Full, not Unavailable', async () => {
    const full = await startRedis();
    const raw = new Redis(full.url);
    try {
      const store = open(full.url);
      expect(await store.putIfAbsent('before', Buffer.from('v'), 60_000)).toBe(true);
      await raw.config('SET', 'maxmemory-policy', 'noeviction');
      await raw.config('SET', 'maxmemory', '1');
      const err = await store.putIfAbsent('claim', Buffer.from('v'), 60_000).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CacheError);
      expect((err as CacheError).code).toBe('Full');
      expect((err as CacheError).message).toContain('putIfAbsent "claim" failed: OOM');
      expect(await store.get('before')).toEqual(Buffer.from('v'));
    } finally {
      raw.disconnect();
      await full.stop();
    }
  });
});
