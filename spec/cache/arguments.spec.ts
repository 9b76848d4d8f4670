import { MemoryStore, OpenSpace, RedisStore, Space, type Store } from 'fw-http/cache';
import { cacheError } from '../support/redis-auth';
import { sleep } from './store-contract';

// Found by mutation testing (npm run mutate): what fw/cache refuses, and what its errors say.

describe('fw/cache arguments and error messages', () => {
  it('CacheError is named CacheError', async () => {
    const err = await cacheError(() => new MemoryStore({ bytes: 0 }));
    expect(err.name).toBe('CacheError');
    expect(err.code).toBe('InvalidArgument');
    expect(err.message).toBe('MemoryStore: bytes must be a whole number of bytes from 1, got 0');
  });

  it('Space refuses each bad option with a message naming the space and the option', async () => {
    expect((await cacheError(() => Space('', { ttlSeconds: 1, maxBytes: 1 }))).message).toBe(
      'Space: name must be a non-empty string, got ""',
    );
    expect(
      (await cacheError(() => Space(7 as never, { ttlSeconds: 1, maxBytes: 1 }))).message,
    ).toContain('got 7');
    expect((await cacheError(() => Space('s', undefined as never))).message).toContain(
      'Space "s": ttlSeconds',
    );
    for (const ttlSeconds of [Number.NaN, Number.POSITIVE_INFINITY, '5' as never]) {
      expect((await cacheError(() => Space('s', { ttlSeconds, maxBytes: 1 }))).message).toContain(
        'Space "s": ttlSeconds must be a positive number of seconds',
      );
    }
    expect((await cacheError(() => Space('s', { ttlSeconds: 1, maxBytes: -1 }))).message).toBe(
      'Space "s": maxBytes must be a whole number of bytes from 0, got -1',
    );
    expect((await cacheError(() => Space('s', { ttlSeconds: 1 } as never))).message).toContain(
      'maxBytes',
    );
    // Zero is a space that keeps nothing, not a mistake.
    expect(Space('s', { ttlSeconds: 1, maxBytes: 0 }).maxBytes).toBe(0);
    expect(
      (
        await cacheError(() =>
          Space('s', { ttlSeconds: 1, maxBytes: 1, leaseMs: Number.POSITIVE_INFINITY }),
        )
      ).message,
    ).toContain('leaseMs');
    for (const maxBytesPerCaller of [-1, 1.5, Number.POSITIVE_INFINITY, '9' as never]) {
      expect(
        (await cacheError(() => Space('s', { ttlSeconds: 1, maxBytes: 1, maxBytesPerCaller })))
          .message,
      ).toContain('Space "s": maxBytesPerCaller must be a whole number of bytes from 1, got');
    }
  });

  it('open() without a store is refused naming what is missing', async () => {
    const S = Space('s', { ttlSeconds: 1, maxBytes: 1 });
    expect((await cacheError(() => S.open(null as never))).message).toBe(
      'Space "s": open() was given no store (missing get, putIfAbsent, put, del)',
    );
    expect((await cacheError(() => S.open({ get: async () => null } as never))).message).toContain(
      '(missing putIfAbsent, put, del)',
    );
  });

  it('a value or an expect that is not a Buffer is refused with InvalidArgument, naming the key', async () => {
    const store = new MemoryStore({ bytes: 1 << 16 });
    await store.put('k', Buffer.from('v'), 1000);
    expect((await cacheError(() => store.put('k', 'text' as never, 1000))).message).toBe(
      'cache key "k": value must be a Buffer',
    );
    expect((await cacheError(() => store.putIfAbsent('n', 'text' as never, 1000))).code).toBe(
      'InvalidArgument',
    );
    expect(
      (await cacheError(() => store.put('k', Buffer.from('w'), 1000, { expect: 'v' as never })))
        .message,
    ).toBe('cache key "k": expect must be a Buffer');
    expect((await cacheError(() => store.del('k', { expect: 'v' as never }))).message).toBe(
      'cache key "k": expect must be a Buffer',
    );
    expect(await store.get('k')).toEqual(Buffer.from('v'));
    const space = Space('s', { ttlSeconds: 60, maxBytes: 64 }).open(store);
    expect((await cacheError(() => space.put('key', 'text' as never))).message).toBe(
      'cache key "s/key": value must be a Buffer',
    );
  });

  it('a closed MemoryStore names the key (or the ping) it was asked for', async () => {
    const store = new MemoryStore({ bytes: 1 << 16 });
    await store.close();
    expect((await cacheError(() => store.get('k'))).message).toBe('MemoryStore: closed (key "k")');
    expect((await cacheError(() => store.ping())).message).toBe(
      'MemoryStore: closed (key "(ping)")',
    );
  });

  it("a program's own store failing leaves an opened space as Unavailable naming the space, the operation and the key, with the cause, whether it rejects or throws at once", async () => {
    const boom = new Error('boom');
    const rejecting: Store = {
      get: () => Promise.reject(boom),
      putIfAbsent: () => Promise.reject(boom),
      put: () => Promise.reject(boom),
      del: () => Promise.reject(boom),
      close: async () => {},
    };
    const fail = (): never => {
      throw boom;
    };
    const throwing: Store = {
      get: fail,
      putIfAbsent: fail,
      put: fail,
      del: fail,
      close: async () => {},
    };
    for (const store of [rejecting, throwing]) {
      const space = Space('s', { ttlSeconds: 60, maxBytes: 64 }).open(store);
      const calls: [string, () => unknown][] = [
        ['get', () => space.get('k')],
        ['putIfAbsent', () => space.putIfAbsent('k', Buffer.from('v'))],
        ['put', () => space.put('k', Buffer.from('v'))],
        ['del', () => space.del('k')],
      ];
      for (const [op, call] of calls) {
        const err = await cacheError(call);
        expect(err.code).toBe('Unavailable');
        expect(err.message).toBe(`Space "s": ${op} "k" failed: boom`);
        expect(err.cause).toBe(boom);
      }
    }
  });

  it('an opened space takes put(key, value, ttlMs, opts) in the Store order: the TTL applies, and options in its place are refused', async () => {
    const store = new MemoryStore({ bytes: 1 << 16 });
    const space = Space('s', { ttlSeconds: 60, maxBytes: 64 }).open(store);
    expect(await space.put('k', Buffer.from('v'), 50, {})).toBe(true);
    await sleep(120);
    expect(await space.get('k')).toBeNull();
    const err = await cacheError(() =>
      space.put('k', Buffer.from('v'), { expect: Buffer.from('v') } as never),
    );
    expect(err.code).toBe('InvalidArgument');
    expect(err.message).toContain('cache key "s/k"');
  });

  it('probe reads one key of its own space when the store has no ping, and answers false when the store never answers', async () => {
    const read: string[] = [];
    const base = {
      putIfAbsent: async () => true,
      put: async () => true,
      del: async () => true,
      close: async () => {},
    };
    const space = Space('s', { ttlSeconds: 60, maxBytes: 64 }).open({
      ...base,
      get: async (k: string) => (read.push(k), null),
    });
    expect(await space.probe()).toBe(true);
    expect(read).toEqual(['1:s:\0probe']);
    const silent = Space('s', { ttlSeconds: 60, maxBytes: 64 }).open({
      ...base,
      get: () => new Promise<null>(() => {}),
    });
    const started = Date.now();
    expect(await silent.probe()).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(OpenSpace.PROBE_DEADLINE_MS - 50);
  });
});

describe('MemoryStore room for held entries', () => {
  const cost = (key: string, valueBytes: number): number =>
    Buffer.byteLength(key) + valueBytes + MemoryStore.entryOverheadBytes;

  it("a compare-and-set over a held entry in a full store reuses that entry's room", async () => {
    const store = new MemoryStore({ bytes: 2 * cost('a', 100) });
    expect(await store.putIfAbsent('a', Buffer.alloc(100, 1), 60_000)).toBe(true);
    expect(await store.putIfAbsent('b', Buffer.alloc(100, 2), 60_000)).toBe(true);
    expect(
      await store.put('a', Buffer.alloc(100, 3), 60_000, { expect: Buffer.alloc(100, 1) }),
    ).toBe(true);
    expect(await store.get('a')).toEqual(Buffer.alloc(100, 3));
    expect(store.bytesUsed).toBe(2 * cost('a', 100));
  });

  it('reading a held entry does not put it in the eviction order: plain writes after the read never evict it', async () => {
    const store = new MemoryStore({ bytes: 4 * cost('p0', 100) });
    expect(await store.putIfAbsent('held', Buffer.alloc(100, 7), 60_000)).toBe(true);
    await store.put('p0', Buffer.alloc(100), 60_000);
    expect(await store.get('held')).toEqual(Buffer.alloc(100, 7));
    for (let i = 1; i < 20; i++) {
      await store.put(`p${i}`, Buffer.alloc(100), 60_000);
      expect(await store.get('held')).toEqual(Buffer.alloc(100, 7));
    }
    expect(store.bytesUsed).toBeLessThanOrEqual(store.bytes);
  });
});

describe('RedisStore arguments and messages (no server needed)', () => {
  it('refuses a missing url or a bad commandTimeoutMs before connecting', async () => {
    expect((await cacheError(() => new RedisStore(undefined as never))).message).toBe(
      'RedisStore: url must be a non-empty string such as redis://127.0.0.1:6379',
    );
    expect((await cacheError(() => new RedisStore({ url: '' }))).code).toBe('InvalidArgument');
    for (const commandTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5' as never]) {
      expect(
        (await cacheError(() => new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs })))
          .message,
      ).toBe(
        `RedisStore: commandTimeoutMs must be a positive number of ms, got ${typeof commandTimeoutMs === 'string' ? '"5"' : String(commandTimeoutMs)}`,
      );
    }
  });

  it('with nothing listening an operation fails Unavailable within commandTimeoutMs, naming the url without its password, the key and the last error', async () => {
    const store = new RedisStore({
      url: 'redis://user:s3cret@127.0.0.1:1/0',
      commandTimeoutMs: 300,
    });
    try {
      await sleep(150); // a connection attempt fails first, so its error is the last one
      const err = await cacheError(() => store.get('k'));
      expect(err.code).toBe('Unavailable');
      expect(err.message).not.toContain('s3cret');
      expect(err.message).toContain(
        'RedisStore redis://user:***@127.0.0.1:1/0: get "k" failed: no answer within 300 ms (last error: ',
      );
      expect(err.cause).toBeInstanceOf(Error);
    } finally {
      await store.close();
      await store.close(); // twice is fine
    }
    const closed = await cacheError(() => store.put('k', Buffer.from('v'), 1000));
    expect(closed.message).toContain('put "k" failed: the store is closed');
  });

  it('close() while an operation waits for the connection fails it at once: the store is closed', async () => {
    const store = new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 5000 });
    const started = Date.now();
    const waiting = cacheError(() => store.del('k', { expect: Buffer.from('v') }));
    await sleep(20);
    await store.close();
    const err = await waiting;
    expect(err.message).toContain('del "k" failed: the store is closed');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
