/** What a `Lease` is made of. */
export interface LeaseOptions {
  /** When the claim was sent to the store (`now()`'s clock): its lease cannot have started earlier. */
  readonly sentAt: number;
  /** How long the store holds the claim after a write it confirmed (the space's `leaseMs`). */
  readonly leaseMs: number;
  /** How long before that the claim counts as lost here (the space's `leaseMarginMs`). */
  readonly marginMs: number;
  /** Called once, with no round trip, when the lease is found past its limit (or lost otherwise). */
  readonly onLost: (lease: Lease) => void;
  /** The clock, `performance.now()` unless a test moves its own. */
  readonly now?: () => number;
}

const performanceNow = (): number => performance.now();

/**
 * The lease of an idempotent run's claim as this process knows it: counted from the sending of the
 * last write of the claim the store confirmed (the claim itself, then each renewal), and trusted
 * for `leaseMs − marginMs` after it. `check()` compares, at once and with no round trip: a process
 * that stalled past the limit (a SIGSTOP, a long GC pause, a machine asleep) learns it on the first
 * check after it resumes, before a renewal's answer could tell it. `c.signal`, fw's outbound calls
 * as they go out and `c.step` check it, so a handler that checks its signal before an effect never
 * makes the effect after its claim may have passed to another instance.
 */
export class Lease {
  readonly #limitMs: number;
  readonly #now: () => number;
  readonly #onLost: (lease: Lease) => void;
  #confirmedAt: number;
  #lost = false;

  constructor(options: LeaseOptions) {
    this.#confirmedAt = options.sentAt;
    this.#limitMs = options.leaseMs - options.marginMs;
    this.#onLost = options.onLost;
    this.#now = options.now ?? performanceNow;
  }

  /** When the last confirmed write of the claim was sent. */
  get confirmedAt(): number {
    return this.#confirmedAt;
  }

  /** Whether the claim was found lost (past its limit here, or refused by the store). */
  get lost(): boolean {
    return this.#lost;
  }

  /** A write of the claim sent at `sentAt` was confirmed: the lease counts from the latest such. */
  confirm(sentAt: number): void {
    if (sentAt > this.#confirmedAt) this.#confirmedAt = sentAt;
  }

  /** Still held: false once past `leaseMs − marginMs` since the last confirmation (told to `onLost` once). */
  check(): boolean {
    if (this.#lost) return false;
    if (this.#now() - this.#confirmedAt < this.#limitMs) return true;
    this.lose();
    return false;
  }

  /** Lost (past its limit, or the store refused a renewal): `onLost` runs once. */
  lose(): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#onLost(this);
  }
}
