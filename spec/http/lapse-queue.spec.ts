import { LapseQueue } from '../../lib/http/features/idempotency/lapse-queue';

// The kept answers a caller is counted for, two numbers each in a ring that grows: what
// lapses leaves oldest first, up to the first that has not, across the ring's wrap and growth.

describe('LapseQueue', () => {
  it('lapse takes the oldest out while they have lapsed, stops at the first live one, and answers their bytes', () => {
    const q = new LapseQueue();
    expect(q.firstUntil).toBe(Infinity);
    q.push(10, 1);
    q.push(20, 2);
    q.push(15, 4); // out of order: counted until 20 has lapsed too
    q.push(30, 8);
    expect(q.lapse(9)).toBe(0);
    expect(q.lapse(10)).toBe(1);
    expect(q.firstUntil).toBe(20);
    expect(q.lapse(25)).toBe(2 + 4);
    expect([q.size, q.firstUntil]).toEqual([1, 30]);
    expect(q.lapse(1000)).toBe(8);
    expect([q.size, q.firstUntil]).toEqual([0, Infinity]);
  });

  it('grows past its first room while its oldest is mid-ring, and keeps every entry in order', () => {
    const q = new LapseQueue();
    let until = 0;
    for (let i = 0; i < 6; i++) q.push(++until, 1);
    expect(q.lapse(5)).toBe(5); // the oldest is now the sixth slot of eight
    for (let i = 0; i < 1000; i++) q.push(++until, until);
    expect(q.size).toBe(1001);
    expect(q.firstUntil).toBe(6);
    expect(q.lapse(6)).toBe(1);
    let total = 0;
    for (let u = 7; u <= until; u++) {
      expect([u, q.firstUntil]).toEqual([u, u]);
      total += q.lapse(u);
    }
    expect(total).toBe(((7 + until) * (until - 6)) / 2);
    expect(q.size).toBe(0);
  });
});
