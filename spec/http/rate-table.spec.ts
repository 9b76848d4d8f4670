import { RateTable, RATE_ADMITTED, RATE_FULL, RATE_OVER } from '../../lib/http/features/rate-table';

// The table behind @RateLimit, on its own: the route keys it by the socket's address, which tests
// over loopback can vary only a little (spec/http/limits.spec.ts does, with 127.0.0.x), so the
// bound is tested here with as many keys as it takes.

describe('RateTable', () => {
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
