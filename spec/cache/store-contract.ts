import { CacheError, OpenSpace, Space, type Store } from 'fw-http/cache';

/** Real waits, never fake timers: the Redis store keeps time on the Redis server. */
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

const bytes = (...b: number[]): Buffer => Buffer.from(b);
const text = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Resolves to the error a call throws or rejects with (a store may answer at once), failing the test when it answers. */
async function rejection(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to reject, it resolved');
}

/**
 * The one contract every store passes (CACHE-13): `MemoryStore` and `RedisStore` run it from
 * their own spec files. `makeStore` is called before each test and must give a store that shares
 * no keys with the one before it; the store is closed after the test. `ours: false` leaves out what
 * fw's own stores promise beyond the contract (refusing bad TTLs, failing every call after close),
 * for a program's own store.
 */
export function describeStoreContract(
  name: string,
  makeStore: () => Store | Promise<Store>,
  { ours = true }: { ours?: boolean } = {},
): void {
  // Not registered at all for a program's own store: those are not part of the contract.
  const ourIt = ours ? it : (_name: string, _fn: () => Promise<void>) => undefined;
  describe(`CACHE-13 store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('CACHE-05 get, putIfAbsent, put and del answer at once or with a promise (one or the other for all four) and take a TTL where one applies', async () => {
      const calls: unknown[] = [
        store.putIfAbsent('k', text('a'), 1000),
        store.put('k2', text('b'), 1000),
        store.get('k'),
        store.del('k2'),
      ];
      const promised = calls.map((call) => call instanceof Promise);
      expect(new Set(promised).size).toBe(1);
      expect(await Promise.all(calls)).toEqual([true, true, text('a'), true]);
    });

    ourIt(
      'CACHE-05 a TTL that is not a positive number is refused with InvalidArgument naming the key',
      async () => {
        for (const ttl of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
          const err = await rejection(() => store.putIfAbsent('ttl-key', text('v'), ttl));
          expect(err).toBeInstanceOf(CacheError);
          expect((err as CacheError).code).toBe('InvalidArgument');
          expect((err as CacheError).message).toContain('ttl-key');
        }
        expect(await store.get('ttl-key')).toBeNull();
      },
    );

    it('CACHE-06 100 parallel putIfAbsent on one key: exactly one wins and its value is kept', async () => {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => store.putIfAbsent('race', bytes(i), 10_000)),
      );
      expect(results.filter((won) => won)).toHaveLength(1);
      expect(await store.get('race')).toEqual(bytes(results.indexOf(true)));
    });

    it('CACHE-06 putIfAbsent on a live key answers false and leaves the value as it was', async () => {
      expect(await store.putIfAbsent('k', text('first'), 10_000)).toBe(true);
      expect(await store.putIfAbsent('k', text('second'), 10_000)).toBe(false);
      expect(await store.get('k')).toEqual(text('first'));
    });

    it('CACHE-07 an entry is gone after its TTL: get misses it and putIfAbsent succeeds again', async () => {
      expect(await store.putIfAbsent('short', text('v1'), 50)).toBe(true);
      expect(await store.get('short')).toEqual(text('v1'));
      await sleep(150);
      expect(await store.get('short')).toBeNull();
      expect(await store.putIfAbsent('short', text('v2'), 10_000)).toBe(true);
      expect(await store.get('short')).toEqual(text('v2'));
    });

    it('CACHE-07 put sets a fresh TTL: a rewritten entry lives for the new TTL, not the old one', async () => {
      await store.put('k', text('old'), 50);
      await store.put('k', text('new'), 10_000);
      await sleep(150);
      expect(await store.get('k')).toEqual(text('new'));
      await store.put('k', text('brief'), 50);
      await sleep(150);
      expect(await store.get('k')).toBeNull();
    });

    it('CACHE-08 del removes an entry, and a later putIfAbsent on that key succeeds', async () => {
      expect(await store.putIfAbsent('k', text('v'), 10_000)).toBe(true);
      expect(await store.del('k')).toBe(true);
      expect(await store.get('k')).toBeNull();
      expect(await store.del('k')).toBe(false);
      expect(await store.putIfAbsent('k', text('again'), 10_000)).toBe(true);
      expect(await store.get('k')).toEqual(text('again'));
    });

    it('OPEN-11 put with expect writes only over the expected bytes', async () => {
      expect(await store.put('k', text('new'), 10_000, { expect: text('claim') })).toBe(false);
      expect(await store.get('k')).toBeNull();
      await store.put('k', text('claim'), 10_000);
      expect(await store.put('k', text('new'), 10_000, { expect: text('other') })).toBe(false);
      expect(await store.get('k')).toEqual(text('claim'));
      expect(await store.put('k', text('record'), 10_000, { expect: text('claim') })).toBe(true);
      expect(await store.get('k')).toEqual(text('record'));
    });

    it('OPEN-11 del with expect removes only the expected bytes', async () => {
      await store.put('k', text('mine'), 10_000);
      expect(await store.del('k', { expect: text('theirs') })).toBe(false);
      expect(await store.get('k')).toEqual(text('mine'));
      expect(await store.del('k', { expect: text('mine') })).toBe(true);
      expect(await store.get('k')).toBeNull();
      expect(await store.del('k', { expect: text('mine') })).toBe(false);
    });

    it('OPEN-11 a holder whose claim expired and was re-taken can neither delete nor overwrite the new holder', async () => {
      const claimA = text('claim-A');
      const claimB = text('claim-B');
      expect(await store.putIfAbsent('k', claimA, 50)).toBe(true);
      await sleep(150);
      expect(await store.putIfAbsent('k', claimB, 10_000)).toBe(true);
      expect(await store.del('k', { expect: claimA })).toBe(false);
      expect(await store.put('k', text('A record'), 10_000, { expect: claimA })).toBe(false);
      expect(await store.get('k')).toEqual(claimB);
    });

    it('IDEM-26 a compare-and-set of a claim onto itself renews its lease: it outlives the first TTL, and a rival claim stays refused', async () => {
      // A 600 ms lease renewed every 150 ms: a busy machine may be late by most of a lease.
      const claim = text('claim-A');
      expect(await store.putIfAbsent('lease', claim, 600)).toBe(true);
      for (let i = 0; i < 8; i++) {
        await sleep(150);
        expect(await store.put('lease', claim, 600, { expect: claim })).toBe(true);
      }
      // 1.2 s after the claim, twice its first lease.
      expect(await store.putIfAbsent('lease', text('claim-B'), 10_000)).toBe(false);
      expect(await store.get('lease')).toEqual(claim);
      await sleep(1_000);
      expect(await store.put('lease', claim, 600, { expect: claim })).toBe(false); // lapsed: nothing to renew
      expect(await store.putIfAbsent('lease', text('claim-B'), 10_000)).toBe(true);
    });

    ourIt(
      'HEALTH-02 ping answers while the store is open and fails Unavailable after close',
      async () => {
        await expect(store.ping!()).resolves.toBeUndefined();
        await store.close();
        const err = await rejection(() => store.ping!());
        expect((err as CacheError).code).toBe('Unavailable');
      },
    );

    it('CACHE-01 values are bytes: non-UTF-8 bytes and the empty value round-trip exactly', async () => {
      const odd = bytes(0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0d, 0x0a, 0x00);
      await store.put('odd', odd, 10_000);
      expect(await store.get('odd')).toEqual(odd);
      expect(await store.putIfAbsent('empty', Buffer.alloc(0), 10_000)).toBe(true);
      const empty = await store.get('empty');
      expect(empty).not.toBeNull();
      expect(empty).toHaveLength(0);
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await store.put('all', all, 10_000);
      expect(await store.get('all')).toEqual(all);
    });

    it('CACHE-01 expect compares bytes exactly, not as text', async () => {
      await store.put('k', bytes(0xff, 0xfe, 0x00), 10_000);
      // Both decode to the same replacement characters as UTF-8; only a byte comparison tells them apart.
      expect(await store.del('k', { expect: bytes(0xff, 0xfd, 0x00) })).toBe(false);
      expect(await store.del('k', { expect: bytes(0xff, 0xfe) })).toBe(false);
      expect(
        await store.put('k', text('x'), 10_000, { expect: bytes(0xff, 0xfe, 0x00, 0x00) }),
      ).toBe(false);
      expect(await store.get('k')).toEqual(bytes(0xff, 0xfe, 0x00));
      expect(await store.del('k', { expect: bytes(0xff, 0xfe, 0x00) })).toBe(true);
    });

    it('CACHE-01 a value is handed over: the store answers the bytes given, and a view into a larger buffer is kept by its bytes alone', async () => {
      const pool = text('..abc..');
      await store.put('k', pool.subarray(2, 5), 10_000);
      expect(await store.get('k')).toEqual(text('abc'));
      expect((await store.get('k'))!.length).toBe(3);
      const claim = Buffer.from(text('claim'));
      await store.putIfAbsent('c', claim, 10_000);
      expect(await store.get('c')).toEqual(text('claim'));
    });

    ourIt('OPEN-59 after close() every operation rejects with CacheError Unavailable', async () => {
      await store.close();
      const calls = [
        () => store.get('k'),
        () => store.putIfAbsent('k', text('v'), 1000),
        () => store.put('k', text('v'), 1000),
        () => store.del('k'),
      ];
      for (const call of calls) {
        const err = await rejection(call);
        expect(err).toBeInstanceOf(CacheError);
        expect((err as CacheError).code).toBe('Unavailable');
      }
    });

    describe('spaces on this store', () => {
      it('CACHE-01 Space(name, { ttlSeconds, maxBytes }) declares a frozen space of bytes', () => {
        const Orders = Space('orders', { ttlSeconds: 86400, maxBytes: 64 * 1024 });
        expect(Orders.name).toBe('orders');
        expect(Orders.ttlSeconds).toBe(86400);
        expect(Orders.maxBytes).toBe(64 * 1024);
        expect(Object.isFrozen(Orders)).toBe(true);
        for (const bad of [
          () => Space('', { ttlSeconds: 1, maxBytes: 1 }),
          () => Space('s', { ttlSeconds: 0, maxBytes: 1 }),
          () => Space('s', { ttlSeconds: 1, maxBytes: -1 }),
          () => Space('s', { ttlSeconds: 1, maxBytes: 1.5 }),
        ]) {
          expect(bad).toThrow(CacheError);
        }
        expect(() => Space('pay', { ttlSeconds: -1, maxBytes: 1 })).toThrow(
          /Space "pay": ttlSeconds/,
        );
      });

      it('CACHE-04 space.open(store) gives an OpenSpace that knows its declaration', async () => {
        const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 1024 });
        const opened = Orders.open(store);
        expect(opened).toBeInstanceOf(OpenSpace);
        expect(opened.space).toBe(Orders);
        expect(opened.ttlSeconds).toBe(60);
        expect(await opened.putIfAbsent('key-1', text('claim'))).toBe(true);
        expect(await opened.get('key-1')).toEqual(text('claim'));
        // The Store argument order: the TTL (undefined for the space's) before the options.
        expect(
          await opened.put('key-1', text('record'), undefined, { expect: text('claim') }),
        ).toBe(true);
        expect(await opened.get('key-1')).toEqual(text('record'));
        expect(await opened.put('key-1', text('x'), undefined, { expect: text('claim') })).toBe(
          false,
        );
        expect(await opened.put('key-1', text('record'), 60_000, { expect: text('record') })).toBe(
          true,
        );
        expect(await opened.del('key-1', { expect: text('claim') })).toBe(false);
        expect(await opened.del('key-1', { expect: text('record') })).toBe(true);
        expect(await opened.get('key-1')).toBeNull();
      });

      it('CACHE-04 an opened space takes the TTL third, as a Store does: an options object (or a bad number) in its place is refused, whatever the store', async () => {
        const opened = Space('order', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        expect(await opened.putIfAbsent('k', text('claim'))).toBe(true);
        const calls = [
          () => opened.put('k', text('record'), { expect: text('claim') } as unknown as number),
          () => opened.put('k', text('record'), 0),
          () => opened.putIfAbsent('j', text('claim'), Number.NaN),
        ];
        for (const call of calls) {
          const err = await rejection(call);
          expect(err).toBeInstanceOf(CacheError);
          expect((err as CacheError).code).toBe('InvalidArgument');
          expect((err as CacheError).message).toMatch(
            /cache key "order\/[kj]": TTL must be a positive number/,
          );
        }
        expect(await opened.get('k')).toEqual(text('claim'));
        expect(await opened.get('j')).toBeNull();
      });

      it('CACHE-05 an opened space has the contract: get, putIfAbsent, put, del answering as its store does, and a maxBytes property', async () => {
        const opened = Space('s', { ttlSeconds: 60, maxBytes: 10 }).open(store);
        // Checked by tsc: an opened space fits wherever a store's four operations are expected.
        const asStore: Omit<Store, 'close'> = opened;
        expect(asStore).toBe(opened);
        expect(opened.maxBytes).toBe(10);
        const calls: unknown[] = [
          opened.putIfAbsent('a', text('1')),
          opened.put('b', text('2')),
          opened.get('a'),
          opened.del('b'),
        ];
        const promised = calls.map((call) => call instanceof Promise);
        expect(new Set(promised).size).toBe(1);
        expect(await Promise.all(calls)).toEqual([true, true, text('1'), true]);
      });

      it('CACHE-04 two spaces on one store keep the same key apart, even with names built to collide', async () => {
        const a = Space('a', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        const ab = Space('a:b', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        const other = Space('b', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        // Joined naively, space "a" key "b:c" and space "a:b" key "c" are both "a:b:c".
        expect(await a.putIfAbsent('b:c', text('from a'))).toBe(true);
        expect(await ab.putIfAbsent('c', text('from a:b'))).toBe(true);
        expect(await other.putIfAbsent('b:c', text('from b'))).toBe(true);
        expect(await a.get('b:c')).toEqual(text('from a'));
        expect(await ab.get('c')).toEqual(text('from a:b'));
        expect(await other.get('b:c')).toEqual(text('from b'));
        expect(await store.get('b:c')).toBeNull();
        await a.del('b:c');
        expect(await a.get('b:c')).toBeNull();
        expect(await other.get('b:c')).toEqual(text('from b'));
      });

      it('CACHE-03 a value of exactly maxBytes is kept; one byte more stores nothing and answers false (OPEN-59)', async () => {
        const s = Space('small', { ttlSeconds: 60, maxBytes: 8 }).open(store);
        expect(await s.putIfAbsent('fits', Buffer.alloc(8, 1))).toBe(true);
        expect(await s.get('fits')).toEqual(Buffer.alloc(8, 1));
        expect(await s.putIfAbsent('big', Buffer.alloc(9, 1))).toBe(false);
        expect(await s.get('big')).toBeNull();
        expect(await s.put('big', Buffer.alloc(9, 1))).toBe(false);
        expect(await s.get('big')).toBeNull();
        // An oversized write leaves what was there, including a claim waiting to be replaced.
        expect(
          await s.put('fits', Buffer.alloc(9, 2), undefined, { expect: Buffer.alloc(8, 1) }),
        ).toBe(false);
        expect(await s.get('fits')).toEqual(Buffer.alloc(8, 1));
      });

      it('CACHE-02 an entry lives ttlSeconds by default; an explicit ttlMs gives a shorter lease', async () => {
        // A TTL the six awaits below cannot outlast on a busy machine.
        const brief = Space('brief', { ttlSeconds: 1, maxBytes: 100 }).open(store);
        const long = Space('long', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        await brief.putIfAbsent('k', text('v'));
        await brief.put('p', text('v'));
        await long.putIfAbsent('kept', text('v'));
        await long.putIfAbsent('lease', text('claim'), 50);
        await long.put('leased-put', text('v'), 50, {});
        await long.put('leased-put-no-options', text('v'), 50);
        expect(await brief.get('k')).toEqual(text('v'));
        await sleep(1_300);
        expect(await brief.get('k')).toBeNull();
        expect(await brief.get('p')).toBeNull();
        expect(await long.get('lease')).toBeNull();
        expect(await long.get('leased-put')).toBeNull();
        expect(await long.get('leased-put-no-options')).toBeNull();
        expect(await long.get('kept')).toEqual(text('v'));
        expect(await brief.putIfAbsent('k', text('again'))).toBe(true);
      });

      ourIt(
        'HEALTH-02 an opened space is probed by app.health(): named space:<name>, its probe true while the store answers and false once it is closed',
        async () => {
          const opened = Space('probed', { ttlSeconds: 60, maxBytes: 10 }).open(store);
          expect(opened.name).toBe('space:probed');
          expect(await opened.probe()).toBe(true);
          await store.close();
          expect(await opened.probe()).toBe(false);
        },
      );

      it('CACHE-06 100 parallel putIfAbsent on one key of a space: exactly one wins', async () => {
        const s = Space('race', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) => s.putIfAbsent('k', bytes(i))),
        );
        expect(results.filter((won) => won)).toHaveLength(1);
      });
    });

    describe('fencing tokens of an idempotent claim', () => {
      it("a claim won answers a token, a claim refused none; a key's tokens grow in claim order, the claim before released, kept and lapsed, or lapsed", async () => {
        const s = Space('fence', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        const tokens: bigint[] = [];
        const won = async (key: string, claim: string, ttlMs = 60_000): Promise<void> => {
          const token = await s.claimWithToken(key, text(claim), ttlMs);
          expect(typeof token).toBe('bigint');
          tokens.push(token as bigint);
        };
        await won('k', 'one');
        expect(typeof (await s.claimWithToken('k', text('rival'), 60_000))).not.toBe('bigint');
        await won('other', 'x'); // another key between: its claims do not hold k's back
        expect(await s.del('k', { expect: text('one') })).toBe(true); // released
        await won('k', 'two');
        expect(await s.put('k', text('kept'), 40, { expect: text('two') })).toBe(true);
        await sleep(80); // the kept answer lapsed
        await won('k', 'three', 40);
        await sleep(80); // the claim lapsed
        await won('k', 'four');
        const ofK = [tokens[0]!, ...tokens.slice(2)];
        for (let i = 1; i < ofK.length; i++) expect(ofK[i]!).toBeGreaterThan(ofK[i - 1]!);
      });

      it('a token is on the clock scale, milliseconds since 1970 × 4096 and a part below: above a token of the earlier scale minted before it, within a second of the time it was minted', async () => {
        const s = Space('fence-scale', { ttlSeconds: 60, maxBytes: 100 }).open(store);
        // The largest token of the earlier scale (ms × 4096 + a count) this millisecond could mint.
        const earlier = BigInt(Date.now()) * 4096n + 4095n;
        await sleep(2);
        const token = (await s.claimWithToken('k', text('claim'), 60_000)) as bigint;
        const now = BigInt(Date.now()) * 4096n;
        expect(token).toBeGreaterThan(earlier);
        expect(token).toBeLessThan(now + 1000n * 4096n);
      });
    });
  });
}
