import { CacheError } from '../../../cache';

/**
 * Whether an idempotency store is down, as the requests of one space find it: the first failure
 * of an outage is logged with its cause (the store's error names the host and why: ECONNREFUSED,
 * a timeout, a database index out of range), the rest of the outage is quiet, and the first answer
 * after it says the store is back. One line per outage, not per request.
 */
export class StoreOutage {
  #down = false;

  /** True while an outage is on (a cheap check before `over`). */
  get down(): boolean {
    return this.#down;
  }

  /** A store operation failed with `e`: the first of an outage is logged. */
  failed(e: unknown, log: (line: string) => void, what: string): void {
    if (this.#down || !(e instanceof CacheError)) return;
    this.#down = true;
    log(
      `error: ${what}: idempotency store unavailable (${e.message}); idempotent requests answer 503 until it answers again`,
    );
  }

  /** A store operation answered: an outage on is over. */
  over(log: (line: string) => void, what: string): void {
    if (!this.#down) return;
    this.#down = false;
    log(`${what}: idempotency store answers again`);
  }
}
