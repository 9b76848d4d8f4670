/** What one record counts, until when; changed in place when its kept answer replaces its claim. */
interface Counted {
  bytes: number;
  until: number;
}

/** One caller's records in a space: bytes by record id, oldest first. */
interface CallerUse {
  bytes: number;
  readonly records: Map<string, Counted>;
}

/**
 * What each caller of a space holds in its store (claims and kept answers), as this process wrote
 * it, so one caller cannot fill the store for the others: a claim that would take a caller past
 * `limit` is refused. Counts only this process's writes (several instances on one Redis each
 * count their own). Records leave the count when they lapse; one caller is looked at on each
 * call (a cursor going round the table), so a caller who never comes back does not stay here for
 * ever. Nothing is deleted and re-inserted on the request path: V8 rehashes a large Map on that
 * churn (see MemoryStore), which cost the first POST of an idempotent route 40 % of its rate.
 */
export class CallerBudget {
  readonly #limit: number;
  readonly #callers = new Map<string, CallerUse>();
  #cursor: Iterator<[string, CallerUse]> | null = null;

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
    if (old !== undefined) {
      old.bytes = bytes;
      old.until = until;
    } else use.records.set(id, { bytes, until });
    use.bytes = base + bytes;
    return 0;
  }

  /** Replaces what record `id` counts (its kept answer over its claim); never refused. */
  set(caller: string, id: string, bytes: number, until: number): void {
    let use = this.#callers.get(caller);
    if (use === undefined) this.#callers.set(caller, (use = { bytes: 0, records: new Map() }));
    const old = use.records.get(id);
    if (old === undefined) {
      use.records.set(id, { bytes, until });
      use.bytes += bytes;
      return;
    }
    // In place: the record keeps its place in the order (its claim's), a little ahead of where its
    // new lapse time would put it, so the oldest-first sweep may count it a little longer, never less.
    use.bytes += bytes - old.bytes;
    old.bytes = bytes;
    old.until = until;
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

  /** Looks at the next caller round the table: drops what lapsed, and the caller when nothing is left. */
  #sweepOne(now: number): void {
    let next = this.#cursor?.next();
    if (next === undefined || next.done) {
      this.#cursor = this.#callers.entries();
      next = this.#cursor.next();
      if (next.done) return;
    }
    const [caller, use] = next.value;
    this.#expire(use, now);
    if (use.records.size === 0) this.#callers.delete(caller);
  }
}
