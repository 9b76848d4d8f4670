/** A waiter in a `Gate`'s queue: `grant` hands it a permit, synchronously. */
export interface GateWaiter {
  grant(): void;
}

/**
 * A counting semaphore with a FIFO queue: the client's `maxInFlight` permit and a target's gate.
 * A permit freed while callers wait goes straight to the oldest one (never back to the pool first),
 * so a late caller cannot overtake the queue. Waiters that give up (deadline, cancel) leave the
 * queue through `leave`; the caller (`CallGuard`) owns the promise, so a permit is never handed to
 * someone who is no longer there.
 */
export class Gate {
  readonly size: number;
  #free: number;
  #queue: GateWaiter[] = [];

  constructor(size: number) {
    this.size = size;
    this.#free = size;
  }

  /** Permits in use right now. */
  get inUse(): number {
    return this.size - this.#free;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Takes a permit if one is free and nobody is queued before us. */
  tryTake(): boolean {
    if (this.#free > 0 && this.#queue.length === 0) {
      this.#free--;
      return true;
    }
    return false;
  }

  join(waiter: GateWaiter): void {
    this.#queue.push(waiter);
  }

  leave(waiter: GateWaiter): void {
    const i = this.#queue.indexOf(waiter);
    if (i >= 0) this.#queue.splice(i, 1);
  }

  release(): void {
    const next = this.#queue.shift();
    if (next) next.grant();
    else this.#free++;
  }
}
