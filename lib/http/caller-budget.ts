/** One caller's records in a space: bytes by record id, oldest first, each with when it lapses. */
interface CallerUse {
  bytes: number;
  readonly records: Map<string, { readonly bytes: number; readonly until: number }>;
}

/**
 * What each caller of a space holds in its store (claims and kept answers), as this process wrote
 * it, so one caller cannot fill the store for the others: a claim that would take a caller past
 * `limit` is refused. Counts only this process's writes (several instances on one Redis each
 * count their own). Records leave the count when they lapse; callers are swept a few at a time
 * on each call, so a caller who never comes back does not stay here for ever.
 */
export class CallerBudget {
  readonly #limit: number;
  readonly #callers = new Map<string, CallerUse>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * Counts `bytes` for record `id` until `until` (performance.now() clock) when it fits in the
   * caller's budget; otherwise answers the milliseconds until the caller's oldest record lapses.
   */
  admit(caller: string, id: string, bytes: number, until: number): number {
    const now = performance.now();
    this.#sweepOne(now);
    let use = this.#callers.get(caller);
    if (use === undefined) this.#callers.set(caller, (use = { bytes: 0, records: new Map() }));
    else this.#expire(use, now);
    const old = use.records.get(id);
    const base = use.bytes - (old?.bytes ?? 0);
    if (base + bytes > this.#limit) {
      const first = use.records.values().next().value;
      return Math.max(1, first === undefined ? 1 : first.until - now);
    }
    if (old !== undefined) use.records.delete(id);
    use.records.set(id, { bytes, until });
    use.bytes = base + bytes;
    return 0;
  }

  /** Replaces what record `id` counts (its kept answer over its claim); never refused. */
  set(caller: string, id: string, bytes: number, until: number): void {
    const use = this.#callers.get(caller);
    if (use === undefined) {
      this.#callers.set(caller, { bytes, records: new Map([[id, { bytes, until }]]) });
      return;
    }
    const old = use.records.get(id);
    if (old !== undefined) use.records.delete(id);
    use.records.set(id, { bytes, until });
    use.bytes += bytes - (old?.bytes ?? 0);
  }

  /** Record `id` is gone (released). */
  drop(caller: string, id: string): void {
    const use = this.#callers.get(caller);
    const old = use?.records.get(id);
    if (use === undefined || old === undefined) return;
    use.records.delete(id);
    use.bytes -= old.bytes;
    if (use.records.size === 0) this.#callers.delete(caller);
  }

  /** Bytes counted for `caller` now. */
  used(caller: string): number {
    return this.#callers.get(caller)?.bytes ?? 0;
  }

  #expire(use: CallerUse, now: number): void {
    for (const [id, r] of use.records) {
      if (r.until > now) break;
      use.records.delete(id);
      use.bytes -= r.bytes;
    }
  }

  /** Looks at the longest-unvisited caller: drops what lapsed, and the caller when nothing is left. */
  #sweepOne(now: number): void {
    const next = this.#callers.entries().next().value;
    if (next === undefined) return;
    const [caller, use] = next;
    this.#expire(use, now);
    this.#callers.delete(caller);
    if (use.records.size !== 0) this.#callers.set(caller, use);
  }
}
