import { CacheError, type RateRule, type RateStore } from 'fw-http/cache';

/** Real waits, never fake timers: RedisStore keeps time on the Redis server. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let rules = 0;
/** A rule no other test has used, so tests may share a store without sharing counters. */
export const rule = (over: Partial<RateRule> = {}): RateRule => ({
  name: `rule-${++rules}`,
  max: 3,
  windowMs: 60_000,
  window: 'fixed',
  ...over,
});

/**
 * What every `RateStore` does (`MemoryRateStore` and `RedisStore`, on one server or a Cluster,
 * run it from their spec files). `makeStore` is called before each test; `close` after it.
 */
export function describeRateStoreContract(
  name: string,
  makeStore: () => RateStore | Promise<RateStore>,
  close: (store: RateStore) => Promise<void>,
): void {
  describe(`${name} as a RateStore`, () => {
    let store: RateStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await close(store);
    });

    for (const window of ['fixed', 'sliding'] as const) {
      it(`FAIL-27 ${window}: admits max, then answers the wait, within the window`, async () => {
        const r = rule({ window, max: 3 });
        expect([await store.hit(r, 'a'), await store.hit(r, 'a'), await store.hit(r, 'a')]).toEqual(
          [0, 0, 0],
        );
        const wait = await store.hit(r, 'a');
        expect(wait).toBeGreaterThan(0);
        // Fixed: the rest of this window. Sliding: at most into the next one.
        expect(wait).toBeLessThanOrEqual(window === 'fixed' ? 60_000 : 120_000);
        expect(Number.isInteger(wait)).toBe(true);
      });

      it(`${window}: count says what is left of the window, then the wait`, async () => {
        const r = rule({ window, max: 3 });
        const counted = [];
        for (let i = 0; i < 4; i++) counted.push(await store.count!(r, 'left'));
        expect(counted.map((c) => [c.waitMs === 0, c.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
        ]);
        for (const c of counted) expect(c.resetMs).toBeGreaterThan(0);
        expect(counted[0]!.resetMs).toBeLessThanOrEqual(60_000);
        expect(counted[3]!.resetMs).toBe(counted[3]!.waitMs);
      });

      it(`${window}: keys and rules are counted apart`, async () => {
        const r = rule({ window, max: 1 });
        const other = rule({ window, max: 1 });
        expect(await store.hit(r, 'a')).toBe(0);
        expect(await store.hit(r, 'a')).toBeGreaterThan(0);
        expect(await store.hit(r, 'b')).toBe(0);
        expect(await store.hit(other, 'a')).toBe(0);
        // The same name with a prefix-like key cannot meet another (name, key) pair.
        expect(await store.hit({ ...rule({ window, max: 1 }), name: 'x' }, 'y:z')).toBe(0);
        expect(await store.hit({ ...rule({ window, max: 1 }), name: 'x:y' }, 'z')).toBe(0);
      });

      it(`${window}: of 20 hits at once on one key exactly max are admitted`, async () => {
        const r = rule({ window, max: 5 });
        // The first alone: what is under test is the count under a race, not a connection's start.
        expect(await store.hit(r, 'k')).toBe(0);
        const waits = await Promise.all(Array.from({ length: 19 }, () => store.hit(r, 'k')));
        expect(waits.filter((w) => w === 0)).toHaveLength(4);
      });
    }

    it('FAIL-27 fixed: the window ends when the wait says, and the key is admitted again', async () => {
      const r = rule({ max: 2, windowMs: 300 });
      expect(await store.hit(r, 'a')).toBe(0);
      expect(await store.hit(r, 'a')).toBe(0);
      const wait = await store.hit(r, 'a');
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(300);
      await sleep(wait + 20);
      expect(await store.hit(r, 'a')).toBe(0);
    });

    it('rejects a rule it cannot count with InvalidArgument', async () => {
      for (const bad of [{ max: 0 }, { windowMs: 1.5 }, { window: 'rolling' as 'fixed' }]) {
        const err = await store.hit(rule(bad), 'a').then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CacheError);
        expect((err as CacheError).code).toBe('InvalidArgument');
      }
    });
  });
}
