/**
 * Amounts that lapse, in the order they were added: each an `until` (a performance.now() time)
 * and a count of bytes. Two numbers in typed arrays rather than an object each: a caller's kept
 * answers are counted here until their TTL, so a busy space holds hundreds of thousands of them,
 * and objects that live that long cost the garbage collector a copy each and a mark on every
 * full collection.
 */
export class LapseQueue {
  #until = new Float64Array(8);
  #bytes = new Float64Array(8);
  /** Where the oldest is, and how many there are (the arrays are a ring). */
  #head = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The oldest one's `until`; Infinity when there is none. */
  get firstUntil(): number {
    return this.#size === 0 ? Infinity : this.#until[this.#head]!;
  }

  push(until: number, bytes: number): void {
    if (this.#size === this.#until.length) this.#grow();
    const at = (this.#head + this.#size) & (this.#until.length - 1);
    this.#until[at] = until;
    this.#bytes[at] = bytes;
    this.#size++;
  }

  /** Takes the oldest ones out while they have lapsed at `now`, up to the first that has not; answers their bytes. */
  lapse(now: number): number {
    let freed = 0;
    const mask = this.#until.length - 1;
    while (this.#size > 0 && this.#until[this.#head]! <= now) {
      freed += this.#bytes[this.#head]!;
      this.#head = (this.#head + 1) & mask;
      this.#size--;
    }
    return freed;
  }

  /** Twice the room, the ring laid out again from its oldest. */
  #grow(): void {
    const n = this.#until.length;
    const until = new Float64Array(n * 2);
    const bytes = new Float64Array(n * 2);
    for (let i = 0; i < n; i++) {
      const from = (this.#head + i) & (n - 1);
      until[i] = this.#until[from]!;
      bytes[i] = this.#bytes[from]!;
    }
    this.#until = until;
    this.#bytes = bytes;
    this.#head = 0;
  }
}
