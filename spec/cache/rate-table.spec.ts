import * as door from 'fw-http/cache';
import { RateTable, RATE_ADMITTED, RATE_FULL, RATE_OVER } from '../../lib/cache/rate-table';

// The table behind @RateLimit, on its own: the route keys it by the socket's address, which tests
// over loopback can vary only a little (spec/http/limits.spec.ts does, with 127.0.0.x), so the
// bound is tested here with as many keys as it takes.

describe('RateTable', () => {
  it('I28.3 is public: the door exports the table and its three verdicts, as the guide uses them', () => {
    expect(door.RateTable).toBe(RateTable);
    expect([door.RATE_ADMITTED, door.RATE_OVER, door.RATE_FULL]).toEqual([0, 1, 2]);
    const messages = new door.RateTable({ max: 2, spanMs: 1000, maxKeys: 1, window: 'sliding' });
    expect([messages.take('p', 0), messages.take('p', 1), messages.take('p', 2)]).toEqual([
      door.RATE_ADMITTED,
      door.RATE_ADMITTED,
      door.RATE_OVER,
    ]);
    expect(messages.take('q', 3)).toBe(door.RATE_FULL);
    expect(messages.retryAt).toBeGreaterThan(3);
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

  it('holds exactly maxKeys live windows; a new key past the bound is refused (full) until the oldest window ends', () => {
    const t = new RateTable({ max: 5, spanMs: 1_000, maxKeys: 3 });
    expect([t.take('a', 0), t.take('b', 100), t.take('c', 200)]).toEqual([
      RATE_ADMITTED,
      RATE_ADMITTED,
      RATE_ADMITTED,
    ]);
    expect(t.size).toBe(3);
    expect(t.take('d', 300)).toBe(RATE_FULL);
    expect(t.retryAt).toBe(1_000);
    expect(t.size).toBe(3);
    // Keys already in the table are still counted, full or not: a flood of new keys cannot reset them.
    expect(t.take('a', 400)).toBe(RATE_ADMITTED);
    expect(t.take('d', 999)).toBe(RATE_FULL);
    // The oldest window ends: its slot goes to the new key; the others are still full.
    expect(t.take('d', 1_000)).toBe(RATE_ADMITTED);
    expect(t.take('e', 1_001)).toBe(RATE_FULL);
    expect(t.retryAt).toBe(1_100);
    expect(t.size).toBe(3);
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

  it('a key whose window ended starts a new one at the back, so the front is always the oldest', () => {
    const t = new RateTable({ max: 1, spanMs: 1_000, maxKeys: 2 });
    t.take('a', 0);
    t.take('b', 500);
    expect(t.take('a', 1_000)).toBe(RATE_ADMITTED);
    expect(t.take('c', 1_200)).toBe(RATE_FULL);
    expect(t.retryAt).toBe(1_500);
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

  it('holds maxKeys entries for two windows each; a rolled key moves to the back, so the front is the next to end', () => {
    const t = new RateTable({ max: 5, spanMs: 1_000, maxKeys: 2, window: 'sliding' });
    expect(t.take('a', 0)).toBe(RATE_ADMITTED);
    expect(t.take('b', 500)).toBe(RATE_ADMITTED);
    // Both still weigh on the next window: a new key is refused until the first ends (0 + 2 × 1,000).
    expect(t.take('c', 1_500)).toBe(RATE_FULL);
    expect(t.retryAt).toBe(2_000);
    expect(t.take('a', 1_600)).toBe(RATE_ADMITTED);
    expect(t.take('c', 2_000)).toBe(RATE_ADMITTED);
    expect(t.take('d', 2_001)).toBe(RATE_FULL);
    expect(t.retryAt).toBe(3_000);
    expect(t.size).toBe(2);
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
    // An entry lives two windows, so one new key a millisecond fills the table: half are refused.
    expect(admitted).toBeGreaterThan(20_000);
    expect(admitted).toBeLessThan(30_000);
  });

  it('refuses a window that is neither fixed nor sliding', () => {
    expect(
      () => new RateTable({ max: 1, spanMs: 1_000, maxKeys: 1, window: 'rolling' as 'fixed' }),
    ).toThrow(/window must be 'fixed' or 'sliding'/);
  });

  it('I26.4 standing().resetMs and waitMs() are whole milliseconds within the window, however the floating-point end falls', () => {
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
