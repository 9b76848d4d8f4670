// Keeps a crash run's transfers from running ahead of its faults: each fault is planned at a count
// of answered transfers, and no transfer starts more than `slack` past a fault not yet made. So
// the faults land among the transfers as planned (the i-th kill of ten near the i-th eleventh of
// them) however long a restart takes, and traffic is always in flight when one lands.

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Pace {
  readonly total: number;
  readonly #slack: number;
  /** Transfers answered so far. */
  done = 0;
  /** The answered counts at which a fault is due and not yet made. */
  readonly #due = new Map<number, number>();

  constructor(total: number, slack: number) {
    this.total = total;
    this.#slack = slack;
  }

  /** A fault due once `share` of the transfers are answered: the count it waits for. */
  plan(share: number): number {
    const at = Math.floor(share * this.total);
    this.#due.set(at, (this.#due.get(at) ?? 0) + 1);
    return at;
  }

  /** Waits until `at` transfers are answered (or `signal` aborts the run). */
  async reach(at: number, signal: AbortSignal): Promise<void> {
    while (this.done < at) {
      signal.throwIfAborted();
      await sleep(2);
    }
  }

  /** The fault planned at `at` is made: transfers go on past it. */
  made(at: number): void {
    const n = (this.#due.get(at) ?? 1) - 1;
    if (n === 0) this.#due.delete(at);
    else this.#due.set(at, n);
  }

  /** Waits until transfer number `n` may start: no fault not yet made is more than `slack` behind it. */
  async mayStart(n: number, signal: AbortSignal): Promise<void> {
    const held = () => [...this.#due.keys()].some((at) => n >= at + this.#slack);
    while (held()) {
      signal.throwIfAborted();
      await sleep(5);
    }
  }
}
