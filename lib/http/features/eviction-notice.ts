/** At most one log line per this long says that a rate limit forgot windows to make room. */
export const EVICTION_LOG_EVERY_MS = 60_000;

/**
 * When a rate limit writes a line about its evictions: at the first, then at most once a minute
 * with how many there were since the last line. A table that stays full evicts on every new
 * client, and a line per eviction would flood the log exactly when something floods the route.
 */
export class EvictionNotice {
  #since = 0;
  #loggedAt = -Infinity;

  /**
   * Counts `n` evictions at `now` (milliseconds, a clock that does not go back): the count to log
   * (those since the last line, these included), or 0 while the last line is under a minute old.
   */
  add(n: number, now: number): number {
    this.#since += n;
    if (now - this.#loggedAt < EVICTION_LOG_EVERY_MS) return 0;
    this.#loggedAt = now;
    const count = this.#since;
    this.#since = 0;
    return count;
  }
}
