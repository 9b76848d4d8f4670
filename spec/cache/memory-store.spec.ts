import { CacheError, MemoryStore, Space } from 'fw-http/cache';
import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { heapAfterGc, openDescriptors } from '../support/hostile';
import { describeStoreContract, sleep } from './store-contract';

describeStoreContract('MemoryStore', () => new MemoryStore({ bytes: 1024 * 1024 }));

describe('MemoryStore', () => {
  const overhead = MemoryStore.entryOverheadBytes;
  /** What one entry counts against the budget. */
  const cost = (key: string, valueBytes: number): number =>
    Buffer.byteLength(key) + valueBytes + overhead;

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

  it('get answers at once (no promise): a hit, a miss, an expired entry, a closed store', async () => {
    const store = new MemoryStore({ bytes: 1 << 16 });
    store.put('a', Buffer.from('kept'), 60_000);
    store.put('gone', Buffer.from('soon'), 20);
    expect(store.get('a')).toEqual(Buffer.from('kept'));
    expect(store.get('a')).toBe(store.get('a')); // the kept bytes themselves, read-only by contract
    expect(store.get('never')).toBeNull();
    await sleep(40);
    expect(store.get('gone')).toBeNull();
    const space = Space('peeked', { ttlSeconds: 60, maxBytes: 64 }).open(store);
    expect(space.put('k', Buffer.from('v'))).toBe(true);
    expect(space.get('k')).toEqual(Buffer.from('v'));
    await store.close();
    expect(() => store.get('a')).toThrow(CacheError);
    expect(() => space.get('k')).toThrow(expect.objectContaining({ code: 'Unavailable' }));
  });

  it('a space over a store that answers with promises answers with promises, and its failures reject Unavailable', async () => {
    const inner = new MemoryStore({ bytes: 1 << 16 });
    const remote = {
      get: async (k: string) => inner.get(k),
      putIfAbsent: async (k: string, v: Buffer, t: number) => inner.putIfAbsent(k, v, t),
      put: async (k: string, v: Buffer, t: number) => inner.put(k, v, t),
      del: async (k: string) => inner.del(k),
      close: () => inner.close(),
    };
    const space = Space('remote', { ttlSeconds: 60, maxBytes: 64 }).open(remote);
    const put = space.put('k', Buffer.from('v'));
    expect(put).toBeInstanceOf(Promise);
    expect(await put).toBe(true);
    const got = space.get('k');
    expect(got).toBeInstanceOf(Promise);
    expect(await got).toEqual(Buffer.from('v'));
    await inner.close();
    await expect(space.get('k')).rejects.toMatchObject({ code: 'Unavailable' });
  });

  it('CACHE-10 MemoryStore is the built-in default store: built from its byte budget alone, in this process (no descriptor opened), it serves an idempotent route with no other setup', async () => {
    const before = openDescriptors();
    const store = new MemoryStore({ bytes: 64 * 1024 * 1024 });
    expect(store.bytes).toBe(64 * 1024 * 1024);
    for (const bytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryStore({ bytes })).toThrow(CacheError);
    }
    const Orders = Space('orders', { ttlSeconds: 86400, maxBytes: 64 * 1024 });
    let runs = 0;
    @Controller()
    class Shop {
      @Post('/orders')
      @Idempotent(Orders, { by: () => 'one' })
      @Returns(Status(201, Object))
      create() {
        return { n: ++runs };
      }
    }
    const app = new App({ log: () => {} }).controllers(Shop).provide(Orders.open(store));
    const send = () =>
      app.inject({ method: 'POST', url: '/orders', headers: { 'idempotency-key': 'k' } });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(runs).toBe(1);
    // Entirely in the process: nothing to connect to, nothing opened.
    expect(openDescriptors()).toBe(before);
    expect(store.bytesUsed).toBeGreaterThan(0);
    await store.close();
  });

  it('IDEM-26 an entry written by putIfAbsent is held: a flood of other writes never evicts it; with no room left a claim fails CacheError Full and plain entries still come and go', async () => {
    const store = new MemoryStore({ bytes: 8 * cost('claim-0', 100) });
    for (let i = 0; i < 4; i++)
      expect(await store.putIfAbsent(`claim-${i}`, Buffer.alloc(100, i), 60_000)).toBe(true);
    // A compare-and-set of a claim (a kept answer replacing it, a lease renewal) stays held.
    expect(
      await store.put('claim-0', Buffer.alloc(100, 9), 60_000, { expect: Buffer.alloc(100, 0) }),
    ).toBe(true);
    for (let i = 0; i < 100; i++) await store.put(`plain-${i}`, Buffer.alloc(100), 60_000);
    expect(await store.get('claim-0')).toEqual(Buffer.alloc(100, 9));
    for (let i = 1; i < 4; i++) expect(await store.get(`claim-${i}`)).toEqual(Buffer.alloc(100, i));
    // Claims may push plain entries out, never held ones.
    for (let i = 4; i < 8; i++)
      expect(await store.putIfAbsent(`claim-${i}`, Buffer.alloc(100, i), 60_000)).toBe(true);
    const err = await Promise.resolve()
      .then(() => store.putIfAbsent('claim-8', Buffer.alloc(100), 60_000))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(CacheError);
    expect((err as CacheError).code).toBe('Full');
    expect((err as CacheError).message).toContain('claim-8');
    for (let i = 0; i < 8; i++) expect(await store.get(`claim-${i}`)).not.toBeNull();
    // A plain write with no room is simply not kept.
    expect(await store.put('plain-x', Buffer.alloc(100), 60_000)).toBe(false);
    // Deleting or expiring a held entry gives its room back.
    expect(await store.del('claim-7')).toBe(true);
    expect(await store.putIfAbsent('claim-8', Buffer.alloc(100), 60_000)).toBe(true);
  });

  it('CACHE-07 held entries that lapsed unread give their room back to a new claim', async () => {
    const store = new MemoryStore({ bytes: 4 * cost('claim-0', 100) });
    for (let i = 0; i < 4; i++)
      expect(await store.putIfAbsent(`claim-${i}`, Buffer.alloc(100, i), 40)).toBe(true);
    await sleep(80);
    expect(await store.putIfAbsent('claim-4', Buffer.alloc(100), 60_000)).toBe(true);
    expect(await store.putIfAbsent('claim-5', Buffer.alloc(100), 60_000)).toBe(true);
    expect(store.bytesUsed).toBe(2 * cost('claim-0', 100));
  });

  it('CACHE-09 the budget is what entries really cost: filling it grows heap + external after GC by at most 1.25 times the budget', async () => {
    // Entries the size of idempotency claims and small kept answers (the worst case: overhead dominates), then larger ones.
    for (const valueBytes of [0, 16, 200, 2000]) {
      const budget = 8 * 1024 * 1024;
      const heap0 = await heapAfterGc();
      const ext0 = process.memoryUsage().external;
      const store = new MemoryStore({ bytes: budget });
      const value = Buffer.alloc(valueBytes, 1);
      let i = 0;
      while (store.bytesUsed < budget - 4096)
        await store.put(`6:orders:5:alice:key-${String(i++).padStart(20, '0')}`, value, 600_000);
      const grown = (await heapAfterGc()) - heap0 + process.memoryUsage().external - ext0;
      expect({ valueBytes, within: grown <= 1.25 * budget }).toEqual({ valueBytes, within: true });
      expect(store.bytesUsed).toBeLessThanOrEqual(budget);
      await store.close();
    }
  });
});

describe('writes answered at once, entries rewritten in place', () => {
  const cost = (key: string, valueBytes: number): number =>
    Buffer.byteLength(key) + valueBytes + MemoryStore.entryOverheadBytes;

  it('an opened space files every key under its own prefix: the empty key, and one key asked several times in a row', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const a = Space('a', { ttlSeconds: 60, maxBytes: 100 }).open(store);
    const b = Space('b', { ttlSeconds: 60, maxBytes: 100 }).open(store);
    expect(a.get('')).toBeNull();
    expect(await a.putIfAbsent('', Buffer.from('A'))).toBe(true);
    expect(await b.get('')).toBeNull();
    expect(await store.get('1:a:')).toEqual(Buffer.from('A'));
    expect(await a.put('k', Buffer.from('1'))).toBe(true);
    expect(await a.put('k', Buffer.from('2'), undefined, { expect: Buffer.from('1') })).toBe(true);
    expect(await b.putIfAbsent('k', Buffer.from('3'))).toBe(true);
    expect([a.get('k'), b.get('k'), a.get('')]).toEqual([
      Buffer.from('2'),
      Buffer.from('3'),
      Buffer.from('A'),
    ]);
  });

  it('a value rewritten under its key counts once, at its new size, held or not, and a held one is never evicted after', async () => {
    const store = new MemoryStore({ bytes: cost('k', 100) + cost('x', 10) });
    expect(await store.put('k', Buffer.alloc(50), 60_000)).toBe(true);
    expect(await store.put('k', Buffer.alloc(100), 60_000)).toBe(true);
    expect(store.bytesUsed).toBe(cost('k', 100));
    expect(await store.put('k', Buffer.alloc(20), 60_000)).toBe(true);
    expect(await store.put('k', Buffer.alloc(30), 60_000, { expect: Buffer.alloc(20) })).toBe(true);
    expect(store.bytesUsed).toBe(cost('k', 30));
    // 'k' is held now: filling the store evicts plain entries only.
    expect(await store.put('x', Buffer.alloc(10), 60_000)).toBe(true);
    expect(await store.put('y', Buffer.alloc(70), 60_000)).toBe(true);
    expect(await store.get('x')).toBeNull();
    expect(await store.get('k')).toEqual(Buffer.alloc(30));
    expect(store.bytesUsed).toBe(cost('k', 30) + cost('y', 70));
    expect(await store.del('k')).toBe(true);
    expect(store.bytesUsed).toBe(cost('y', 70));
  });

  it('a key peeked absent and written since is not absent to putIfAbsent, whoever wrote it', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    expect(store.get('k')).toBeNull();
    expect(await store.put('k', Buffer.from('1'), 60_000)).toBe(true);
    expect(await store.putIfAbsent('k', Buffer.from('2'), 60_000)).toBe(false);
    expect(store.get('j')).toBeNull();
    expect(await store.putIfAbsent('j', Buffer.from('3'), 60_000)).toBe(true);
    expect(await store.putIfAbsent('j', Buffer.from('4'), 60_000)).toBe(false);
    expect(store.get('h')).toBeNull();
    expect(store.get('g')).toBeNull(); // another key peeked since: 'h' is looked up again
    expect(await store.putIfAbsent('h', Buffer.from('5'), 60_000)).toBe(true);
    expect([store.get('k'), store.get('j'), store.get('h')]).toEqual([
      Buffer.from('1'),
      Buffer.from('3'),
      Buffer.from('5'),
    ]);
  });

  it('a value is handed over: a Buffer that is the whole of its memory is kept as it is, a view into a larger one (or one of at most 64 bytes) by its own copy', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const whole = Buffer.allocUnsafeSlow(100).fill('abc');
    store.putIfAbsent('p', whole, 60_000);
    expect(store.get('p')).toBe(whole); // no copy: the caller handed it over
    const small = Buffer.alloc(64, 'abc');
    store.putIfAbsent('s', small, 60_000);
    expect(store.get('s')).not.toBe(small);
    expect(store.get('s')).toEqual(Buffer.alloc(64, 'abc'));
    const pooled = Buffer.from('abc'); // a slice of Node's shared 8 KiB pool
    expect(pooled.buffer.byteLength).toBeGreaterThan(3);
    store.put('q', pooled, 60_000);
    const kept = store.get('q')!;
    expect(kept).toEqual(Buffer.from('abc'));
    expect(kept).not.toBe(pooled);
    expect(kept.buffer.byteLength).toBe(3); // the pool is not kept alive by the entry
    pooled.fill(0x7a);
    expect(store.get('q')).toEqual(Buffer.from('abc'));
  });
});

describe('MemoryStore room and recency (survivors of the stores mutation run)', () => {
  // One entry: a 1-byte key, 100 bytes, and the per-entry overhead.
  const ENTRY = 1 + 100 + MemoryStore.entryOverheadBytes;
  const v = (fill: number) => Buffer.alloc(100, fill);
  const ttl = 60_000;

  it('with room to spare nothing is evicted', () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    store.put('a', v(1), ttl);
    store.put('b', v(2), ttl);
    expect(store.get('a')).toEqual(v(1));
    expect(store.get('b')).toEqual(v(2));
  });

  it('a read moves an entry out of the middle of the recency list: eviction then takes the others first', () => {
    const store = new MemoryStore({ bytes: 3 * ENTRY });
    store.put('a', v(1), ttl);
    store.put('b', v(2), ttl);
    store.put('c', v(3), ttl);
    expect(store.get('b')).toEqual(v(2)); // now the most recent: c, then a, are older
    store.put('d', v(4), ttl); // evicts a
    store.put('e', v(5), ttl); // evicts c, not b
    expect([store.get('a'), store.get('c')]).toEqual([null, null]);
    expect(store.get('b')).toEqual(v(2));
    expect(store.get('d')).toEqual(v(4));
    expect(store.get('e')).toEqual(v(5));
  });

  it('reading a claim does not make it evictable: values go first, the claim stays', () => {
    const store = new MemoryStore({ bytes: 2 * ENTRY });
    expect(store.putIfAbsent('k', v(9), ttl)).toBe(true);
    expect(store.get('k')).toEqual(v(9));
    store.put('a', v(1), ttl);
    store.put('b', v(2), ttl); // no room: a goes, never the claim
    expect(store.get('k')).toEqual(v(9));
    expect(store.get('a')).toBeNull();
    expect(store.get('b')).toEqual(v(2));
  });

  it("a claim finds room by evicting cached values; a keep over its own claim reuses the claim's room", () => {
    const store = new MemoryStore({ bytes: 2 * ENTRY });
    store.put('a', v(1), ttl);
    store.put('b', v(2), ttl);
    // Full of evictable values: the claim (held) takes a's room.
    expect(store.putIfAbsent('k', v(9), ttl)).toBe(true);
    expect(store.get('a')).toBeNull();
    expect(store.putIfAbsent('j', v(8), ttl)).toBe(true);
    // Now full of held entries: a keep over k's claim fits in the room the claim leaves.
    expect(store.put('k', v(7), ttl, { expect: v(9) })).toBe(true);
    expect(store.get('k')).toEqual(v(7));
    // A new claim does not fit: nothing evictable is left.
    expect(() => store.putIfAbsent('x', v(6), ttl)).toThrow(CacheError);
  });
});
