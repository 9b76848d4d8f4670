import { CacheError, MemoryStore, Space } from 'fw/cache';
import { describeStoreContract, sleep } from './store-contract';

describeStoreContract('MemoryStore', () => new MemoryStore({ bytes: 1024 * 1024 }));

describe('MemoryStore', () => {
  const overhead = MemoryStore.entryOverheadBytes;
  /** What one entry counts against the budget. */
  const cost = (key: string, valueBytes: number): number => Buffer.byteLength(key) + valueBytes + overhead;

  it('CACHE-09 when the budget is full the least recently used entry goes, and a recently read one stays', async () => {
    const store = new MemoryStore({ bytes: 3 * cost('a', 100) });
    await store.put('a', Buffer.alloc(100, 1), 60_000);
    await store.put('b', Buffer.alloc(100, 2), 60_000);
    await store.put('c', Buffer.alloc(100, 3), 60_000);
    expect(store.bytesUsed).toBe(3 * cost('a', 100));
    expect(await store.get('a')).toEqual(Buffer.alloc(100, 1)); // a is now the most recently used
    await store.put('d', Buffer.alloc(100, 4), 60_000);
    expect(await store.get('b')).toBeNull();
    expect(await store.get('a')).toEqual(Buffer.alloc(100, 1));
    expect(await store.get('c')).toEqual(Buffer.alloc(100, 3));
    expect(await store.get('d')).toEqual(Buffer.alloc(100, 4));
    expect(store.bytesUsed).toBeLessThanOrEqual(store.bytes);
  });

  it('CACHE-09 the budget counts bytes, not entries: one large entry evicts as many small ones as it needs', async () => {
    const budget = 4 * cost('k0', 50) + 10;
    const store = new MemoryStore({ bytes: budget });
    for (const key of ['k0', 'k1', 'k2', 'k3']) await store.put(key, Buffer.alloc(50), 60_000);
    expect(store.bytesUsed).toBe(4 * cost('k0', 50));
    // Costs three small entries and 5 bytes more, with 10 bytes free: the three oldest go, k3 stays.
    const bigValue = 3 * cost('k0', 50) + 5 - cost('big', 0);
    expect(await store.putIfAbsent('big', Buffer.alloc(bigValue, 9), 60_000)).toBe(true);
    expect(await store.get('k0')).toBeNull();
    expect(await store.get('k1')).toBeNull();
    expect(await store.get('k2')).toBeNull();
    expect(await store.get('k3')).toEqual(Buffer.alloc(50));
    expect(await store.get('big')).toEqual(Buffer.alloc(bigValue, 9));
    expect(store.bytesUsed).toBeLessThanOrEqual(budget);
  });

  it('CACHE-09 key bytes count too, as UTF-8', async () => {
    const store = new MemoryStore({ bytes: 10_000 });
    await store.put('é', Buffer.alloc(10), 60_000);
    expect(store.bytesUsed).toBe(2 + 10 + overhead);
    await store.put('é', Buffer.alloc(3), 60_000);
    expect(store.bytesUsed).toBe(2 + 3 + overhead);
    await store.del('é');
    expect(store.bytesUsed).toBe(0);
  });

  it('CACHE-09 an entry larger than the whole budget is refused and evicts nothing', async () => {
    const budget = 2 * cost('a', 10);
    const store = new MemoryStore({ bytes: budget });
    await store.put('a', Buffer.alloc(10), 60_000);
    await store.put('b', Buffer.alloc(10), 60_000);
    const tooBig = Buffer.alloc(budget - cost('x', 0) + 1);
    expect(await store.put('x', tooBig, 60_000)).toBe(false);
    expect(await store.putIfAbsent('x', tooBig, 60_000)).toBe(false);
    expect(await store.put('a', tooBig, 60_000)).toBe(false);
    expect(await store.get('x')).toBeNull();
    expect(await store.get('a')).toEqual(Buffer.alloc(10));
    expect(await store.get('b')).toEqual(Buffer.alloc(10));
    // Exactly the whole budget fits.
    expect(await store.put('x', Buffer.alloc(budget - cost('x', 0)), 60_000)).toBe(true);
    expect(store.bytesUsed).toBe(budget);
  });

  it('CACHE-09 an expired entry gives its bytes back when it is read', async () => {
    const store = new MemoryStore({ bytes: 10_000 });
    await store.put('gone', Buffer.alloc(100), 30);
    await store.put('kept', Buffer.alloc(100), 60_000);
    await sleep(80);
    expect(store.bytesUsed).toBe(2 * cost('gone', 100));
    expect(await store.get('gone')).toBeNull();
    expect(store.bytesUsed).toBe(cost('kept', 100));
  });

  it('CACHE-10 peek answers at once what get answers: a hit, a miss, an expired entry, a closed store', async () => {
    const store = new MemoryStore({ bytes: 1 << 16 });
    await store.put('a', Buffer.from('kept'), 60_000);
    await store.put('gone', Buffer.from('soon'), 20);
    expect(store.peek('a')).toEqual(Buffer.from('kept'));
    expect(store.peek('a')).toBe(await store.get('a')); // the kept bytes themselves, read-only by contract
    expect(store.peek('never')).toBeNull();
    await sleep(40);
    expect(store.peek('gone')).toBeNull();
    expect(await store.get('gone')).toBeNull();
    const space = Space('peeked', { ttlSeconds: 60, maxBytes: 64 }).open(store);
    await space.put('k', Buffer.from('v'));
    expect(space.peek('k')).toEqual(Buffer.from('v'));
    await store.close();
    expect(() => store.peek('a')).toThrow(CacheError);
    expect(() => space.peek('k')).toThrow(expect.objectContaining({ code: 'Unavailable' }));
  });

  it('CACHE-10 a space over a store without peek answers undefined: ask get', async () => {
    const inner = new MemoryStore({ bytes: 1 << 16 });
    const remote = { get: (k: string) => inner.get(k), putIfAbsent: inner.putIfAbsent.bind(inner), put: inner.put.bind(inner), del: inner.del.bind(inner), close: () => inner.close() };
    const space = Space('remote', { ttlSeconds: 60, maxBytes: 64 }).open(remote);
    await space.put('k', Buffer.from('v'));
    expect(space.peek('k')).toBeUndefined();
    expect(await space.get('k')).toEqual(Buffer.from('v'));
  });

  it('CACHE-10 MemoryStore, the default store, is built with a byte budget and works with no other setup', async () => {
    const store = new MemoryStore({ bytes: 64 * 1024 * 1024 });
    expect(store.bytes).toBe(64 * 1024 * 1024);
    const orders = Space('orders', { ttlSeconds: 86400, maxBytes: 64 * 1024 }).open(store);
    expect(await orders.putIfAbsent('key', Buffer.from('claim'))).toBe(true);
    expect(await orders.get('key')).toEqual(Buffer.from('claim'));
    for (const bytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryStore({ bytes })).toThrow(CacheError);
    }
    await store.close();
  });
});
