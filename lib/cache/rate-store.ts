/**
 * How a window is counted:
 * - `'fixed'`: a window of `windowMs` starts at a key's first request; at most `max` in it.
 * - `'sliding'`: windows aligned to the clock; a request is admitted while the count of this
 *   window plus the last one's, weighted by how much of it still lies within `windowMs`, is below
 *   `max` (the two-window approximation of a sliding log: two counters per key, not a timestamp
 *   per request).
 */
export type RateWindow = 'fixed' | 'sliding';

/** One limit: what a `RateStore` counts a key's requests against. */
export interface RateRule {
  /** Names the limit (a route's `POST /login`): the keys of two rules never meet. */
  readonly name: string;
  /** Requests one key may make per window. */
  readonly max: number;
  /** The window's length, in whole milliseconds. */
  readonly windowMs: number;
  readonly window: RateWindow;
  /**
   * Keys a store in this process keeps windows for at once, per rule (default 100,000); past it a
   * new key takes the least recently seen key's place. A store over the network ignores it.
   */
  readonly maxKeys?: number;
}

/**
 * Counts requests per key against a `RateRule`, for rate limits that hold across every instance
 * that shares the store. `MemoryRateStore` counts in this process; `RedisStore` counts in Redis
 * with one atomic script per request, on one key (so it runs on a Redis Cluster).
 *
 * @example
 * const wait = await store.hit({ name: 'POST /login', max: 5, windowMs: 60_000, window: 'fixed' }, ip);
 * if (wait > 0) refuse(Math.ceil(wait / 1000));
 */
/** One counted request with where it leaves the key: what the IETF `RateLimit` header reports. */
export interface RateCount {
  /** 0 when admitted, else the milliseconds until the key may be admitted again. */
  readonly waitMs: number;
  /** Requests the key may still make in this window (0 when refused). */
  readonly remaining: number;
  /** Milliseconds until the window's count starts afresh. */
  readonly resetMs: number;
  /**
   * Windows of other keys forgotten before they ended to make room for this one (a store in this
   * process at its rule's `maxKeys`); absent or 0 otherwise.
   */
  readonly evicted?: number;
}

export interface RateStore {
  /**
   * Counts one request of `key`: resolves 0 when it is admitted, else the milliseconds (at least
   * 1) until it may be. Rejects with `CacheError` `Unavailable` when the store cannot be reached,
   * `Full` when it has no room for a new key (a Redis at `maxmemory` that evicts nothing).
   */
  hit(rule: RateRule, key: string): Promise<number>;
  /**
   * `hit` with what is left of the window (a store that has it: `RateLimit: r=…` on admitted
   * answers). Optional, so a program's own store with `hit` alone keeps working.
   */
  count?(rule: RateRule, key: string): Promise<RateCount>;
}

/**
 * The key a store over the network counts `key` of `rule` under: the window's kind and length are
 * part of it (a limit changed between deploys starts afresh rather than meet a counter of another
 * shape), and the name's length comes first, so no other (name, key) pair spells the same.
 */
export const rateKey = (rule: RateRule, key: string): string =>
  `rate:${rule.window === 'sliding' ? 's' : 'f'}${rule.windowMs}:${rule.name.length}:${rule.name}:${key}`;

/** True when `rule` can be counted: a positive whole `max` and `windowMs`. */
export const validRule = (rule: RateRule): boolean =>
  Number.isSafeInteger(rule.max) &&
  rule.max > 0 &&
  Number.isSafeInteger(rule.windowMs) &&
  rule.windowMs > 0 &&
  (rule.window === 'fixed' || rule.window === 'sliding');
