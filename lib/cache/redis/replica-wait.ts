import type { Redis } from 'ioredis';

/**
 * Waits until `replicas` replicas hold this connection's writes, with Redis's `WAIT n timeout`.
 * WAIT covers every write the connection made before it, so writes answered in the same turn of
 * the event loop share one WAIT (a group commit): a burst of claims costs one extra round trip,
 * not one each. WAIT blocks the connection it is sent on until it answers, so the store sends the
 * writes that wait for it on a connection of their own and reads never queue behind it.
 */
export class ReplicaWait {
  readonly replicas: number;
  readonly timeoutMs: number;
  readonly #client: Redis;
  /** The WAIT writes answered now will share, until it is sent. */
  #next: Promise<number> | null = null;

  constructor(client: Redis, replicas: number, timeoutMs: number) {
    this.#client = client;
    this.replicas = replicas;
    this.timeoutMs = timeoutMs;
  }

  /**
   * Resolves once enough replicas hold every write this connection had answered when it was
   * called; rejects, naming how many did, when fewer did within `timeoutMs`.
   */
  acked(): Promise<void> {
    const wait = (this.#next ??= this.#send());
    return wait.then((n) => {
      if (n < this.replicas)
        throw new Error(
          `written on the primary but acknowledged by ${n} of ${this.replicas} replicas within ${this.timeoutMs} ms`,
        );
    });
  }

  #send(): Promise<number> {
    // Sent a microtask later, so the writes answered in this turn join it; from then on a new
    // write needs a new WAIT (it may land after this one is counted).
    return Promise.resolve().then(() => {
      this.#next = null;
      return this.#client.wait(this.replicas, this.timeoutMs);
    });
  }
}
