import { performance } from 'node:perf_hooks';
import { CacheError } from './errors';
import { RATE_ADMITTED, RateTable } from './rate-table';
import { validRule, type RateCount, type RateRule, type RateStore } from './rate-store';

/** Keys a `MemoryRateStore` keeps windows for per rule, unless the rule's `maxKeys` says otherwise. */
export const RATE_MAX_KEYS = 100_000;

/**
 * A `RateStore` in this process: one bounded `RateTable` per rule name (at most the rule's
 * `maxKeys` keys; a new key past it takes the place of the least recently seen one, and `count`
 * says so in `evicted`). It counts for this process only: for one allowance across instances, use
 * a `RedisStore`. `@RateLimit` without a store counts the same way without this wrapper.
 *
 * @example
 * const rates = new MemoryRateStore();
 * await rates.hit({ name: 'signup', max: 3, windowMs: 60_000, window: 'sliding' }, ip); // 0: admitted
 */
export class MemoryRateStore implements RateStore {
  readonly #tables = new Map<string, { table: RateTable; rule: RateRule }>();
  #closed = false;

  hit(rule: RateRule, key: string): Promise<number> {
    try {
      return Promise.resolve(this.take(rule, key, performance.now()));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `hit` with what is left of the window (see `RateStore.count`). */
  count(rule: RateRule, key: string): Promise<RateCount> {
    try {
      return Promise.resolve(this.countAt(rule, key, performance.now()));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `count` answered at once, at `now` (the clock `take` takes). */
  countAt(rule: RateRule, key: string, now: number): RateCount {
    const table = this.#tableOf(rule);
    const before = table.evictions;
    const waitMs = table.take(key, now) === RATE_ADMITTED ? 0 : table.waitMs(now);
    const evicted = table.evictions - before;
    let counted: RateCount = { waitMs, remaining: 0, resetMs: waitMs };
    if (waitMs === 0) {
      const { remaining, resetMs } = table.standing(key, now);
      counted = { waitMs, remaining, resetMs };
    }
    return evicted === 0 ? counted : { ...counted, evicted };
  }

  /** `hit` answered at once, at `now` (`performance.now()`'s clock, or any that does not go back). */
  take(rule: RateRule, key: string, now: number): number {
    const table = this.#tableOf(rule);
    return table.take(key, now) === RATE_ADMITTED ? 0 : table.waitMs(now);
  }

  /** Drops every window; later calls fail `Unavailable`, like the other stores after `close()`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#tables.clear();
  }

  #tableOf(rule: RateRule): RateTable {
    if (this.#closed)
      throw new CacheError('Unavailable', `MemoryRateStore: closed (rule "${rule.name}")`);
    const held = this.#tables.get(rule.name);
    if (held !== undefined && (held.rule === rule || sameRule(held.rule, rule))) return held.table;
    if (!validRule(rule))
      throw new CacheError(
        'InvalidArgument',
        `MemoryRateStore: rule "${rule.name}" needs a positive whole max and windowMs and a window of 'fixed' or 'sliding'`,
      );
    if (held !== undefined)
      throw new CacheError(
        'InvalidArgument',
        `MemoryRateStore: two different rules are named "${rule.name}"`,
      );
    const table = new RateTable({
      max: rule.max,
      spanMs: rule.windowMs,
      maxKeys: rule.maxKeys ?? RATE_MAX_KEYS,
      window: rule.window,
    });
    this.#tables.set(rule.name, { table, rule });
    return table;
  }
}

const sameRule = (a: RateRule, b: RateRule): boolean =>
  a.max === b.max && a.windowMs === b.windowMs && a.window === b.window && a.maxKeys === b.maxKeys;
