// CallerBudget against a plain model of what it promises, over seeded random runs of admit, set,
// drop and the clock: every answer of admit and every caller's count must agree after each step.
// The model keeps each caller's claims in a list and its kept answers in another, oldest first,
// and sweeps one caller per admit round a ring, as the budget documents; it is slow and obvious
// where the budget is fast.
// The mutation run found the budget's lapsing and sweeping under-tested.
import { CallerBudget } from '../../lib/http/features/idempotency/caller-budget';

interface Claim {
  id: string;
  bytes: number;
  until: number;
}

interface Use {
  caller: string;
  bytes: number;
  claims: Claim[];
  /** Kept answers in the order kept. */
  kept: Array<{ until: number; bytes: number }>;
}

class Model {
  readonly ring: Use[] = [];
  cursor: Use | null = null;
  constructor(readonly limit: number) {}

  #use(caller: string): Use | undefined {
    return this.ring.find((u) => u.caller === caller);
  }
  #join(caller: string): Use {
    const use = { caller, bytes: 0, claims: [], kept: [] };
    this.ring.push(use);
    return use;
  }
  #leave(use: Use): void {
    const i = this.ring.indexOf(use);
    if (this.cursor === use) this.cursor = this.ring[i + 1] ?? null;
    this.ring.splice(i, 1);
  }
  /** Lapsed kept answers leave from the oldest, up to the first live one. */
  #lapseKept(use: Use, now: number): void {
    while (use.kept.length > 0 && use.kept[0]!.until <= now) use.bytes -= use.kept.shift()!.bytes;
  }
  /** Every claim whose lease has run out leaves. */
  #lapseClaims(use: Use, now: number): void {
    for (const c of use.claims.filter((c) => c.until <= now)) this.#forget(use, c);
  }
  #forget(use: Use, claim: Claim): void {
    use.claims.splice(use.claims.indexOf(claim), 1);
    use.bytes -= claim.bytes;
  }
  #claim(use: Use | undefined, id: string): Claim | undefined {
    return use?.claims.find((c) => c.id === id);
  }

  admit(caller: string, id: string, bytes: number, until: number, now: number): number {
    const swept = this.cursor ?? this.ring[0] ?? null;
    if (swept !== null) {
      this.cursor = this.ring[this.ring.indexOf(swept) + 1] ?? null;
      this.#lapseKept(swept, now);
      if (swept.kept.length === 0) {
        this.#lapseClaims(swept, now);
        if (swept.claims.length === 0) this.#leave(swept);
      }
    }
    let use = this.#use(caller);
    if (use !== undefined) this.#lapseKept(use, now);
    let old = this.#claim(use, id);
    // A caller about to be refused loses its lapsed claims first.
    if (use !== undefined && use.bytes - (old?.bytes ?? 0) + bytes > this.limit) {
      this.#lapseClaims(use, now);
      old = this.#claim(use, id);
    }
    const base = use === undefined ? 0 : use.bytes - (old?.bytes ?? 0);
    if (base + bytes > this.limit) {
      const untils = [...(use?.kept.slice(0, 1) ?? []), ...(use?.claims ?? [])].map((r) => r.until);
      return untils.length === 0 ? 1 : Math.max(1, Math.min(...untils) - now);
    }
    if (old !== undefined) {
      Object.assign(old, { bytes, until });
      use!.bytes = base + bytes;
      return 0;
    }
    use ??= this.#join(caller);
    use.bytes = base + bytes;
    use.claims.push({ id, bytes, until });
    return 0;
  }

  set(caller: string, id: string, bytes: number, until: number): void {
    const use = this.#use(caller) ?? this.#join(caller);
    const old = this.#claim(use, id);
    if (old !== undefined) this.#forget(use, old);
    use.kept.push({ until, bytes });
    use.bytes += bytes;
  }

  drop(caller: string, id: string): void {
    const use = this.#use(caller);
    const old = this.#claim(use, id);
    if (old === undefined) return;
    this.#forget(use!, old);
    if (use!.claims.length === 0 && use!.kept.length === 0) this.#leave(use!);
  }

  used(caller: string): number {
    return this.#use(caller)?.bytes ?? 0;
  }
}

/** A small seeded generator (mulberry32): the same run every time, another per seed. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const CALLERS = ['ann', 'bob', 'cy', 'di'];

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

describe('CallerBudget agrees with its model', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'seed %i: 400 random admits, keeps, drops and clock steps, every answer and count the same',
    (seed) => {
      const rnd = random(seed);
      const limit = 100;
      const budget = new CallerBudget(limit);
      const model = new Model(limit);
      for (let step = 0; step < 400; step++) {
        const now = performance.now();
        const caller = CALLERS[rnd(CALLERS.length)]!;
        const id = `k${rnd(6)}`;
        const bytes = 1 + rnd(60);
        const until = now + rnd(60);
        const op = rnd(10);
        if (op < 5) {
          const said = budget.admit(caller, id, bytes, until);
          expect([step, said]).toEqual([step, model.admit(caller, id, bytes, until, now)]);
        } else if (op < 7) {
          budget.set(caller, id, bytes, until);
          model.set(caller, id, bytes, until);
        } else if (op < 9) {
          budget.drop(caller, id);
          model.drop(caller, id);
        } else jest.advanceTimersByTime(1 + rnd(25));
        for (const c of CALLERS)
          expect([step, c, budget.used(c)]).toEqual([step, c, model.used(c)]);
      }
    },
  );
});

describe('CallerBudget, its waits and its sweep', () => {
  it('a caller whose first claim alone is over the limit waits 1 ms: it holds nothing that could lapse', () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('ann', 'k', 101, 50)).toBe(1);
    expect(budget.used('ann')).toBe(0);
    expect(budget.admit('ann', 'k', 100, 50)).toBe(0);
  });

  it('the wait is until the oldest record lapses, not the newest', () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('ann', 'a', 40, 30)).toBe(0);
    expect(budget.admit('ann', 'b', 40, 90)).toBe(0);
    jest.advanceTimersByTime(10);
    expect(budget.admit('ann', 'c', 40, 100)).toBe(20);
    jest.advanceTimersByTime(20);
    expect(budget.admit('ann', 'c', 40, 100)).toBe(0);
    expect(budget.used('ann')).toBe(80);
  });

  it('a caller leaving where the sweep would look next moves the sweep on: the others are still swept', () => {
    const budget = new CallerBudget(100);
    budget.admit('ann', 'a', 10, 5);
    budget.admit('bob', 'b', 20, 500);
    budget.admit('cy', 'c', 30, 500); // the sweep looked at ann: bob is next
    budget.drop('bob', 'b'); // bob leaves from under the cursor
    jest.advanceTimersByTime(10);
    for (const k of ['b1', 'b2', 'b3', 'b4']) budget.admit('bob', k, 1, 500);
    expect([budget.used('ann'), budget.used('bob'), budget.used('cy')]).toEqual([0, 4, 30]);
  });

  it('a caller who never comes back is swept: one caller looked at per admit, round the table', () => {
    const budget = new CallerBudget(100);
    budget.admit('ann', 'a', 10, 5);
    budget.admit('bob', 'b', 20, 5);
    budget.admit('cy', 'c', 30, 500);
    jest.advanceTimersByTime(10);
    // One lapsed caller left per admit of di's, whichever the cursor is on; then the other.
    budget.admit('di', 'd1', 1, 500);
    expect([budget.used('ann'), budget.used('bob')].filter((n) => n === 0)).toHaveLength(1);
    for (const k of ['d2', 'd3', 'd4']) budget.admit('di', k, 1, 500);
    expect([budget.used('ann'), budget.used('bob'), budget.used('cy')]).toEqual([0, 0, 30]);
  });
});
