import * as door from 'fw-http/cache';
import { RateTable, RATE_ADMITTED, RATE_OVER } from '../../lib/cache/rate-table';

// The table behind @RateLimit, on its own: the route keys it by the socket's address, which tests
// over loopback can vary only a little (spec/http/limits.spec.ts does, with 127.0.0.x), so the
// bound is tested here with as many keys as it takes.

describe('RateTable', () => {
  it('is public: the door exports the table and its two verdicts, as the guide uses them', () => {
    expect(door.RateTable).toBe(RateTable);
    expect([door.RATE_ADMITTED, door.RATE_OVER]).toEqual([0, 1]);
    expect('RATE_FULL' in door).toBe(false);
    const messages = new door.RateTable({ max: 2, spanMs: 1000, maxKeys: 1, window: 'sliding' });
    expect([messages.take('p', 0), messages.take('p', 1), messages.take('p', 2)]).toEqual([
      door.RATE_ADMITTED,
      door.RATE_ADMITTED,
      door.RATE_OVER,
    ]);
    expect(messages.retryAt).toBeGreaterThan(2);
    // Past maxKeys a new peer takes the place of the least recently seen one.
    expect(messages.take('q', 3)).toBe(door.RATE_ADMITTED);
    expect(messages.evictions).toBe(1);
  });

  it('FAIL-27 admits max requests per key in a window, then refuses until the window ends', () => {
    const t = new RateTable({ max: 2, spanMs: 1_000, maxKeys: 10 });
    expect([t.take('a', 0), t.take('a', 10), t.take('b', 20)]).toEqual([
      RATE_ADMITTED,
      RATE_ADMITTED,
      RATE_ADMITTED,
    ]);
    expect(t.take('a', 999)).toBe(RATE_OVER);
    expect(t.retryAt).toBe(1_000);
    expect(t.take('a', 1_000)).toBe(RATE_ADMITTED);
    expect(t.take('a', 1_001)).toBe(RATE_ADMITTED);
    expect(t.take('a', 1_002)).toBe(RATE_OVER);
    expect(t.retryAt).toBe(2_000);
  });

  it('holds maxKeys windows; a new key past the bound is admitted in the place of the least recently seen key, and the eviction is counted', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 3 });
    expect([t.take('a', 0), t.take('b', 100), t.take('c', 200)]).toEqual([
      RATE_ADMITTED,
      RATE_ADMITTED,
      RATE_ADMITTED,
    ]);
    // 'a' is refused, and being seen moves it to the back: 'b' is now the least recently seen.
    expect(t.take('a', 300)).toBe(RATE_OVER);
    expect([t.size, t.evictions]).toEqual([3, 0]);
    // maxKeys + 1 keys: the new one gets a window of its own, never a refusal for being new.
    expect(t.take('d', 400)).toBe(RATE_ADMITTED);
    expect([t.size, t.evictions]).toEqual([3, 1]);
    expect(t.standing('b', 400).remaining).toBe(1);
    // Those still held go on being counted.
    expect(t.take('a', 500)).toBe(RATE_OVER);
    expect(t.take('c', 500)).toBe(RATE_OVER);
    expect(t.take('d', 500)).toBe(RATE_OVER);
    // The forgotten key starts afresh (the price of serving every new client), pushing out 'a'.
    expect(t.take('b', 600)).toBe(RATE_ADMITTED);
    expect([t.size, t.evictions]).toEqual([3, 2]);
    expect(t.take('b', 700)).toBe(RATE_OVER);
  });

  it('a full table of ended windows drops them without counting evictions', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 2 });
    t.take('a', 0);
    t.take('b', 0);
    expect(t.take('c', 1_000)).toBe(RATE_ADMITTED);
    expect(t.take('d', 1_000)).toBe(RATE_ADMITTED);
    expect(t.take('e', 1_500)).toBe(RATE_ADMITTED);
    expect([t.size, t.evictions]).toEqual([2, 1]);
  });

  it('never holds more than maxKeys after many distinct keys over many windows', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 1_000 });
    let admitted = 0;
    let most = 0;
    for (let i = 0; i < 50_000; i++) {
      if (t.take(`10.0.${i >> 8}.${i & 255}`, i) === RATE_ADMITTED) admitted++;
      most = Math.max(most, t.size);
    }
    expect(most).toBe(1_000);
    // One new key per millisecond and a 1 s window: every key fits once the first windows end.
    expect(admitted).toBe(50_000);
    expect(t.evictions).toBe(0);
  });

  it('drops ended windows a few at a time from the front, never by scanning the whole table', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 10_000 });
    for (let i = 0; i < 5_000; i++) t.take(`k${i}`, 0);
    t.take('late', 5_000);
    expect(t.size).toBe(5_000 - 2 + 1);
    // A known key with a live window costs no expiry at all.
    t.take('late', 5_001);
    expect(t.size).toBe(4_999);
  });

  it('every request moves its key to the back, admitted or not: the front is the least recently seen', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 2 });
    t.take('a', 0);
    t.take('b', 500);
    expect(t.take('a', 1_000)).toBe(RATE_ADMITTED);
    // 'b' (seen at 500) goes, not 'a' (seen at 1,000).
    expect(t.take('c', 1_200)).toBe(RATE_ADMITTED);
    expect(t.take('a', 1_300)).toBe(RATE_OVER);
    expect(t.take('c', 1_400)).toBe(RATE_OVER);
    expect(t.evictions).toBe(1);
  });

  it('refuses settings that are not positive whole numbers', () => {
    expect(() => new RateTable({ max: 1, spanMs: 1_000, maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => new RateTable({ max: 1, spanMs: 1_000, maxKeys: 1.5 })).toThrow(/maxKeys/);
  });
});

describe('RateTable, sliding window', () => {
  it('FAIL-27 admits while the weighted count of this window and the last leaves room; Retry-After is when it will', () => {
    const t = new RateTable({ max: 4, spanMs: 1_000, maxKeys: 10, window: 'sliding' });
    for (const now of [100, 200, 300, 400]) expect(t.take('a', now)).toBe(RATE_ADMITTED);
    // At the limit: the fifth is refused, and would be until the next window has weighed 4 down to 3.
    expect(t.take('a', 500)).toBe(RATE_OVER);
    expect(t.retryAt).toBe(1_250);
    // Refused requests are not counted: knocking again changes nothing.
    expect(t.take('a', 999)).toBe(RATE_OVER);
    expect(t.take('a', 1_249)).toBe(RATE_OVER);
    expect(t.retryAt).toBe(1_250);
    // Edge: 4 × 0.75 + 1 = 4 passes at 1,250; one more needs the last window at half weight.
    expect(t.take('a', 1_250)).toBe(RATE_ADMITTED);
    expect(t.take('a', 1_250)).toBe(RATE_OVER);
    expect(t.retryAt).toBe(1_500);
    expect(t.take('a', 1_499)).toBe(RATE_OVER);
    expect(t.take('a', 1_500)).toBe(RATE_ADMITTED);
    // Two windows on, nothing weighs any more: a full allowance.
    for (const now of [3_000, 3_001, 3_002, 3_003]) expect(t.take('a', now)).toBe(RATE_ADMITTED);
    expect(t.take('a', 3_004)).toBe(RATE_OVER);
  });

  it('a burst across a window edge gets max through, where a fixed window lets twice max by', () => {
    const burst = [0, 990, 991, 992, 1_000, 1_001, 1_002, 1_003];
    const fixed = new RateTable({ max: 4, spanMs: 1_000, maxKeys: 10 });
    const sliding = new RateTable({ max: 4, spanMs: 1_000, maxKeys: 10, window: 'sliding' });
    expect(burst.filter((n) => fixed.take('a', n) === RATE_ADMITTED)).toHaveLength(8);
    expect(burst.filter((n) => sliding.take('a', n) === RATE_ADMITTED)).toEqual([0, 990, 991, 992]);
  });

  it("holds maxKeys entries for two windows each; past the bound a new key takes the least recently seen one's place", () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 2, window: 'sliding' });
    expect(t.take('a', 0)).toBe(RATE_ADMITTED);
    expect(t.take('b', 500)).toBe(RATE_ADMITTED);
    // Both still weigh on the next window: 'c' takes the place of 'a', which is forgotten.
    expect(t.take('c', 1_500)).toBe(RATE_ADMITTED);
    expect([t.size, t.evictions]).toEqual([2, 1]);
    expect(t.take('b', 1_600)).toBe(RATE_OVER);
    expect(t.take('a', 1_700)).toBe(RATE_ADMITTED);
    expect([t.size, t.evictions]).toEqual([2, 2]);
  });

  it('never holds more than maxKeys after many distinct keys over many windows', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 1_000, window: 'sliding' });
    let most = 0;
    let admitted = 0;
    for (let i = 0; i < 50_000; i++) {
      if (t.take(`10.0.${i >> 8}.${i & 255}`, i) === RATE_ADMITTED) admitted++;
      most = Math.max(most, t.size);
    }
    expect(most).toBe(1_000);
    // An entry lives two windows, so one new key a millisecond fills the table: every new key is
    // still admitted, in the place of one whose entry still mattered.
    expect(admitted).toBe(50_000);
    expect(t.evictions).toBeGreaterThan(20_000);
  });

  it('refuses a window that is neither fixed nor sliding', () => {
    expect(
      () => new RateTable({ max: 1, spanMs: 1_000, maxKeys: 1, window: 'rolling' as 'fixed' }),
    ).toThrow(/window must be 'fixed' or 'sliding'/);
  });

  it('standing().resetMs and waitMs() are whole milliseconds within the window, however the floating-point end falls', () => {
    const now = 12_345.7054; // now + 60000 - now === 60000.000000000007
    expect(Math.ceil(now + 60_000 - now)).toBe(60_001);
    const fixed = new RateTable({ max: 1, spanMs: 60_000, maxKeys: 4 });
    expect(fixed.take('k', now)).toBe(RATE_ADMITTED);
    expect(fixed.standing('k', now)).toEqual({
      remaining: 0,
      resetAt: now + 60_000,
      resetMs: 60_000,
    });
    expect(fixed.standing('k', now + 59_999.5).resetMs).toBe(1);
    expect(fixed.standing('new', now).resetMs).toBe(60_000);
    expect(fixed.take('k', now)).toBe(RATE_OVER);
    expect(fixed.waitMs(now)).toBe(60_000);
    expect(fixed.waitMs(now + 30_000.2)).toBe(30_000);
    expect(fixed.waitMs(now + 70_000)).toBe(1);
    // Sliding: an entry lives two windows, and so may the wait.
    const sliding = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 4, window: 'sliding' });
    sliding.take('k', 999);
    expect(sliding.take('k', 999)).toBe(RATE_OVER);
    expect(sliding.waitMs(999)).toBeGreaterThan(1_000);
    expect(sliding.waitMs(999)).toBeLessThanOrEqual(2_000);
  });
});
