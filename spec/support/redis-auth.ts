import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { CacheError, RedisStore, type RedisStoreOptions } from 'fw-http/cache';

// What the specs of RedisStore's credentials, TLS options and Cluster share (and cacheError, the
// fw/cache argument checks).

/** A RedisStore maker for a spec file: each store it makes is closed after the test that made it. */
export function closingStores(): (options: RedisStoreOptions) => RedisStore {
  let stores: RedisStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });
  return (options) => {
    const store = new RedisStore(options);
    stores.push(store);
    return store;
  };
}

/** Resolves once `store` answers PING, trying for up to 10 s (connecting is not what is tested). */
export async function connected(store: RedisStore): Promise<void> {
  for (const deadline = Date.now() + 10_000; ;) {
    try {
      return await store.ping();
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/** The CacheError `run` throws or rejects with; fails the test when it succeeds. */
export async function cacheError(run: () => unknown): Promise<CacheError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(CacheError);
    return err as CacheError;
  }
  throw new Error('expected a CacheError, the call succeeded');
}

/** Everything an error shows when logged, its causes and their fields included. */
export const shown = (err: unknown): string => `${String(err)}\n${inspect(err, { depth: 20 })}`;

/** get, the claim (putIfAbsent) and compare-and-set, on keys spread over every master. */
export async function shortContract(store: RedisStore): Promise<void> {
  const keys = Array.from({ length: 12 }, (_, i) => `k${i}-${randomUUID()}`);
  for (const key of keys) {
    expect(await store.get(key)).toBeNull();
    expect(await store.putIfAbsent(key, Buffer.from('one'), 60_000)).toBe(true);
    expect(await store.putIfAbsent(key, Buffer.from('two'), 60_000)).toBe(false);
    expect(await store.put(key, Buffer.from('three'), 60_000, { expect: Buffer.from('two') })).toBe(
      false,
    );
    expect(await store.put(key, Buffer.from('three'), 60_000, { expect: Buffer.from('one') })).toBe(
      true,
    );
    expect(await store.get(key)).toEqual(Buffer.from('three'));
  }
}
