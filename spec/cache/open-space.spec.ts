import { CacheError, MemoryStore, Space, type Store } from 'fw-http/cache';

// What an opened space works out from its store, read directly: the budgets and gauges the
// idempotency step and the app's health and metrics rely on. (Found by the mutation run of the
// stores' shared code: these were only ever reached through whole apps.)

/** A store of a program's own: a Map behind the four operations, answering with promises. */
function ownStore(extra: Partial<Store> = {}): Store {
  const m = new Map<string, Buffer>();
  return {
    get: async (k) => m.get(k) ?? null,
    putIfAbsent: async (k, v) => (m.has(k) ? false : (m.set(k, v), true)),
    put: async (k, v) => (m.set(k, v), true),
    del: async (k) => m.delete(k),
    close: async () => {},
    ...extra,
  };
}

let spaces = 0;
const space = (options: Partial<Parameters<typeof Space>[1]> = {}) =>
  Space(`s${++spaces}`, { ttlSeconds: 60, maxBytes: 1000, ...options });

describe('OpenSpace', () => {
  it('keyOf is <name length>:<name>:<key>, the key a store is asked for', async () => {
    const decl = Space('orders', { ttlSeconds: 60, maxBytes: 100 });
    const seen: string[] = [];
    const store = ownStore({ get: async (k) => (seen.push(k), null) });
    const open = decl.open(store);
    expect(open.keyOf('k1')).toBe('6:orders:k1');
    await open.get('k1');
    await open.get('k1');
    await open.get('k2');
    expect(seen).toEqual(['6:orders:k1', '6:orders:k1', '6:orders:k2']);
    expect(open.store).toBe(store);
  });

  it('on a MemoryStore: the store, its fill and its per-entry cost are known; elsewhere none', () => {
    const memory = new MemoryStore({ bytes: 1 << 20 });
    const onMemory = space().open(memory);
    expect(onMemory.memoryStore).toBe(memory);
    expect(onMemory.fill()).toBe(0);
    memory.put('x', Buffer.alloc(1000), 60_000);
    expect(onMemory.fill()).toBeCloseTo(memory.bytesUsed / memory.bytes, 12);
    expect(onMemory.fill()).toBeGreaterThan(0);
    expect(onMemory.entryOverheadBytes).toBe(MemoryStore.entryOverheadBytes);
    expect(MemoryStore.entryOverheadBytes).toBeGreaterThan(0);
    const elsewhere = space().open(ownStore());
    expect(elsewhere.memoryStore).toBeNull();
    expect(elsewhere.fill()).toBeNull();
    expect(elsewhere.entryOverheadBytes).toBe(0);
  });

  it('maxBytesPerCaller: as declared; on a MemoryStore its bytes / (16 × spaces on it), at least two of the largest records; elsewhere max(16 MiB, 64 × maxBytes)', () => {
    expect(space({ maxBytesPerCaller: 12_345 }).open(ownStore()).maxBytesPerCaller).toBe(12_345);
    expect(space({ maxBytes: 1000 }).open(ownStore()).maxBytesPerCaller).toBe(16 * 1024 * 1024);
    expect(space({ maxBytes: 1 << 20 }).open(ownStore()).maxBytesPerCaller).toBe(64 << 20);
    // Two spaces on one 64 MiB store: each caller gets 64 MiB / 32.
    const memory = new MemoryStore({ bytes: 64 << 20 });
    const a = space({ maxBytes: 1000 }).open(memory);
    space({ maxBytes: 1000 }).open(memory);
    expect(a.maxBytesPerCaller).toBe(Math.floor((64 << 20) / 32));
    // A small store: the floor of two of the largest records (and their overhead) wins.
    const small = new MemoryStore({ bytes: 10_000 });
    const b = space({ maxBytes: 4000 }).open(small);
    expect(b.maxBytesPerCaller).toBe(2 * (4000 + 1024 + MemoryStore.entryOverheadBytes));
    // Worked out once: later spaces on the store do not change it.
    space().open(small);
    expect(b.maxBytesPerCaller).toBe(2 * (4000 + 1024 + MemoryStore.entryOverheadBytes));
  });

  it('claimsInOne when the store has putIfAbsentOrGet; claimWithToken refuses an oversized claim unasked and names the space and key when the store fails', async () => {
    expect(space().open(new MemoryStore({ bytes: 1 << 20 })).claimsInOne).toBe(false);
    let asked = 0;
    const failing = space({ maxBytes: 10 }).open(
      ownStore({
        putIfAbsentOrGet: () => {
          asked++;
          throw new Error('socket closed');
        },
      }),
    );
    expect(failing.claimsInOne).toBe(true);
    expect(failing.claimWithToken('k', Buffer.alloc(11))).toBe(false);
    expect(asked).toBe(0);
    let err: unknown;
    try {
      void failing.claimWithToken('k', Buffer.alloc(10));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CacheError);
    expect((err as CacheError).code).toBe('Unavailable');
    expect((err as CacheError).message).toMatch(
      /^Space "s\d+": putIfAbsentOrGet "k" failed: socket closed$/,
    );
    const later = space().open(
      ownStore({ putIfAbsentOrGet: async () => Promise.reject(new Error('reset')) }),
    );
    await expect(later.claimWithToken('j', Buffer.from('c'))).rejects.toThrow(
      /putIfAbsentOrGet "j" failed: reset/,
    );
    // A CacheError from the store leaves as it is.
    const own = new CacheError('Full', 'no room');
    const full = space().open(ownStore({ putIfAbsent: () => Promise.reject(own) }));
    await expect(full.putIfAbsent('k', Buffer.from('v'))).rejects.toBe(own);
  });

  it('warnings: none from a store that cannot tell or fails to; its lines otherwise', async () => {
    expect(await space().open(ownStore()).warnings()).toEqual([]);
    expect(
      await space()
        .open(ownStore({ warnings: () => Promise.reject(new Error('down')) }))
        .warnings(),
    ).toEqual([]);
    expect(
      await space()
        .open(ownStore({ warnings: async () => ['maxmemory-policy is allkeys-lru'] }))
        .warnings(),
    ).toEqual(['maxmemory-policy is allkeys-lru']);
  });

  it('problem: the store\'s own error, "no answer" past the deadline, null when it answers', async () => {
    expect(await space().open(ownStore()).problem()).toBeNull();
    expect(
      await space()
        .open(ownStore({ ping: () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:1')) }))
        .problem(),
    ).toBe('ECONNREFUSED 127.0.0.1:1');
    const silent = space().open(ownStore({ ping: () => new Promise<void>(() => {}) }));
    expect(await silent.problem()).toBe('no answer');
    expect(await silent.probe()).toBe(false);
  });
});

describe('Space', () => {
  it("keep is 'declared' by default, one of the three modes, else refused naming it", () => {
    expect(space().keep).toBe('declared');
    for (const keep of ['success', 'declared', 'all'] as const)
      expect(space({ keep }).keep).toBe(keep);
    expect(() => space({ keep: 'sometimes' as never })).toThrow(
      /^Space "s\d+": keep must be one of 'success', 'declared', 'all', got "sometimes"$/,
    );
    expect(() => space({ keep: 'sometimes' as never })).toThrow(CacheError);
  });

  it('keyDocs: a path or an http(s) URL, kept as given; anything that could break the Link header refused', () => {
    expect(space({ keyDocs: '/docs/keys' }).keyDocs).toBe('/docs/keys');
    expect(space({ keyDocs: 'https://example.com/k' }).keyDocs).toBe('https://example.com/k');
    expect(space().keyDocs).toMatch(/^(https?:\/\/|\/)/);
    for (const bad of ['docs', '/a b', '/a>b', 'ftp://x', 42 as never]) {
      let err: unknown;
      try {
        space({ keyDocs: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CacheError);
      expect((err as CacheError).code).toBe('InvalidArgument');
      expect((err as CacheError).message).toMatch(
        /^Space "s\d+": keyDocs must be an http\(s\) URL or a path starting with \/, without spaces, quotes or angle brackets, got /,
      );
    }
  });
});
