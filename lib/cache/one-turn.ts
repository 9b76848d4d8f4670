/**
 * Runs the flushes asked for in one turn of the event loop together, in one `setImmediate`,
 * between `before` and `after`. The store's claims and keeps are two batches: flushed in one go
 * with the lane's socket corked, they leave in one write (one loopback syscall, which wakes
 * redis-server once) rather than two.
 */
export class OneTurn {
  readonly #before: () => void;
  readonly #after: () => void;
  #flushes: Array<() => void> = [];

  constructor(before: () => void, after: () => void) {
    this.#before = before;
    this.#after = after;
  }

  /** Runs `flush` at the end of this turn, with the others asked for in it. */
  readonly schedule = (flush: () => void): void => {
    if (this.#flushes.push(flush) === 1) setImmediate(this.#run);
  };

  readonly #run = (): void => {
    const flushes = this.#flushes;
    this.#flushes = [];
    this.#before();
    try {
      for (const flush of flushes) flush();
    } finally {
      this.#after();
    }
  };
}
