/** One record a caller holds: what it counts, until when, and its place in the caller's oldest-first list. */
interface Counted {
  readonly id: string;
  readonly use: CallerUse;
  bytes: number;
  until: number;
  /** Out of the count (dropped or lapsed): a handle to it no longer stands for the record. */
  gone: boolean;
  /** An in-flight claim, found by its id in `claims`; a kept answer is never looked up again. */
  claim: boolean;
  older: Counted | null;
  newer: Counted | null;
}

/** One caller's records in a space, oldest first, its claims also by id; linked into the ring of callers. */
interface CallerUse {
  readonly caller: string;
  bytes: number;
  readonly claims: Map<string, Counted>;
  oldest: Counted | null;
  newest: Counted | null;
  next: CallerUse | null;
  prev: CallerUse | null;
}

/**
 * What each caller of a space holds in its store (claims and kept answers), as this process wrote
 * it, so one caller cannot fill the store for the others: a claim that would take a caller past
 * `limit` is refused. Counts only this process's writes (several instances on one Redis each
 * count their own). Records leave the count when they lapse; one caller is looked at on each
 * call (a cursor going round the table), so a caller who never comes back does not stay here for
 * ever.
 *
 * Only claims are looked up by id (a claim admitted again counts once; its kept answer or its
 * release finds it): they are few, in flight. A kept answer is only counted, in its caller's
 * oldest-first list, until it lapses: no Map as large as the store, whose cold lookup and insert
 * were most of what this cost a first POST. The record admitted last is kept at hand, so its kept
 * answer (`set`) or its release (`drop`) right after needs no lookup at all. Nothing is walked
 * with an iterator, and no large Map sees a delete and re-insert (V8 rehashes it on that churn).
 */
export class CallerBudget {
  readonly #limit: number;
  readonly #callers = new Map<string, CallerUse>();
  /** The ring of callers, oldest first, and the next one the sweep looks at. */
  #first: CallerUse | null = null;
  #last: CallerUse | null = null;
  #cursor: CallerUse | null = null;
  /** The claim admitted last, while it is one. */
  #hand: Counted | null = null;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * Counts `bytes` for the claim on record `id` until `until` (performance.now() clock) when it
   * fits in the caller's budget; otherwise answers the milliseconds until the caller's oldest
   * record lapses.
   */
  admit(caller: string, id: string, bytes: number, until: number): number {
    const now = performance.now();
    this.#sweepOne(now);
    let use = this.#callers.get(caller);
    if (use !== undefined) this.#expire(use, now);
    const old = use === undefined || use.claims.size === 0 ? undefined : use.claims.get(id);
    const base = use === undefined ? 0 : use.bytes - (old?.bytes ?? 0);
    if (base + bytes > this.#limit) {
      const first = use?.oldest ?? null;
      return Math.max(1, first === null ? 1 : first.until - now);
    }
    if (old !== undefined) {
      old.bytes = bytes;
      old.until = until;
      use!.bytes = base + bytes;
      this.#hand = old;
      return 0;
    }
    use ??= this.#join(caller);
    use.bytes = base + bytes;
    const r = this.#add(use, id, bytes, until);
    r.claim = true;
    use.claims.set(id, r);
    this.#hand = r;
    return 0;
  }

  /** Record `id` is now its kept answer, counting `bytes` until `until` (over its claim, if counted); never refused. */
  set(caller: string, id: string, bytes: number, until: number): void {
    const old = this.#claimOf(caller, id);
    if (old === undefined) {
      const use = this.#callers.get(caller) ?? this.#join(caller);
      this.#add(use, id, bytes, until);
      use.bytes += bytes;
      return;
    }
    // In place: the record keeps its place in the order (its claim's), a little ahead of where its
    // new lapse time would put it, so the oldest-first sweep may count it a little longer, never less.
    const use = old.use;
    use.claims.delete(id);
    old.claim = false;
    use.bytes += bytes - old.bytes;
    old.bytes = bytes;
    old.until = until;
  }

  /** The claim on record `id` is gone (released). */
  drop(caller: string, id: string): void {
    const old = this.#claimOf(caller, id);
    if (old === undefined) return;
    const use = old.use;
    use.claims.delete(id);
    this.#unlink(old);
    use.bytes -= old.bytes;
    if (use.oldest === null) this.#leave(use);
  }

  /** Bytes counted for `caller` now. */
  used(caller: string): number {
    return this.#callers.get(caller)?.bytes ?? 0;
  }

  /** The counted claim on record `id` of `caller`: the one at hand, or looked up. */
  #claimOf(caller: string, id: string): Counted | undefined {
    const h = this.#hand;
    if (h !== null && h.id === id && h.use.caller === caller && h.claim && !h.gone) return h;
    const use = this.#callers.get(caller);
    return use === undefined || use.claims.size === 0 ? undefined : use.claims.get(id);
  }

  /** Appends a kept answer's record to the caller's list; `admit` turns it into a claim. */
  #add(use: CallerUse, id: string, bytes: number, until: number): Counted {
    const r: Counted = {
      id,
      use,
      bytes,
      until,
      gone: false,
      claim: false,
      older: use.newest,
      newer: null,
    };
    if (use.newest === null) use.oldest = r;
    else use.newest.newer = r;
    use.newest = r;
    return r;
  }

  /** Takes a record out of its caller's oldest-first list (a claim released, in any order). */
  #unlink(r: Counted): void {
    const use = r.use;
    r.gone = true;
    if (r.older === null) use.oldest = r.newer;
    else r.older.newer = r.newer;
    if (r.newer === null) use.newest = r.older;
    else r.newer.older = r.older;
    r.older = r.newer = null;
  }

  /** Drops the caller's records that lapsed, oldest first, up to the first live one. */
  #expire(use: CallerUse, now: number): void {
    let r = use.oldest;
    if (r === null || r.until > now) return;
    while (r !== null && r.until <= now) {
      if (r.claim) use.claims.delete(r.id);
      use.bytes -= r.bytes;
      r.gone = true;
      const next: Counted | null = r.newer;
      r.newer = null;
      if (next !== null) next.older = null;
      r = next;
    }
    use.oldest = r;
    if (r === null) use.newest = null;
  }

  #join(caller: string): CallerUse {
    const use: CallerUse = {
      caller,
      bytes: 0,
      claims: new Map(),
      oldest: null,
      newest: null,
      next: null,
      prev: this.#last,
    };
    this.#callers.set(caller, use);
    if (this.#last === null) this.#first = use;
    else this.#last.next = use;
    this.#last = use;
    return use;
  }

  #leave(use: CallerUse): void {
    this.#callers.delete(use.caller);
    if (use.prev === null) this.#first = use.next;
    else use.prev.next = use.next;
    if (use.next === null) this.#last = use.prev;
    else use.next.prev = use.prev;
    if (this.#cursor === use) this.#cursor = use.next;
    use.next = use.prev = null;
  }

  /** Looks at the next caller round the table: drops what lapsed, and the caller when nothing is left. */
  #sweepOne(now: number): void {
    const use = this.#cursor ?? this.#first;
    if (use === null) return;
    this.#cursor = use.next;
    this.#expire(use, now);
    if (use.oldest === null) this.#leave(use);
  }
}
