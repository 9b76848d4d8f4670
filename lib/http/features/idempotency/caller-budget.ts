import { LapseQueue } from './lapse-queue';

/** An in-flight claim a caller holds, counted until it is kept (`set`), released (`drop`) or lapses. */
interface Claim {
  readonly id: string;
  readonly use: CallerUse;
  bytes: number;
  until: number;
}

/** One caller's records in a space: its claims by id, its kept answers oldest first; linked into the ring of callers. */
interface CallerUse {
  readonly caller: string;
  bytes: number;
  readonly claims: Map<string, Claim>;
  readonly kept: LapseQueue;
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
 * release finds it): they are few, in flight. A kept answer is only counted until it lapses, as
 * two numbers in its caller's `LapseQueue`, oldest first: no object and no Map entry per kept
 * answer, which a busy space would hold by the hundred thousand for their TTL. The claim admitted
 * last is kept at hand, so its kept answer (`set`) or its release (`drop`) right after needs no
 * lookup. A claim lapses at its lease: it is looked at when its caller would be refused, and when
 * the sweep finds the caller holds no kept answer, so a lapsed claim is never what refuses a
 * caller.
 */
export class CallerBudget {
  readonly #limit: number;
  readonly #callers = new Map<string, CallerUse>();
  /** The ring of callers, oldest first, and the next one the sweep looks at. */
  #first: CallerUse | null = null;
  #last: CallerUse | null = null;
  #cursor: CallerUse | null = null;
  /** The claim admitted last, while it is counted. */
  #hand: Claim | null = null;

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
    if (use !== undefined) use.bytes -= use.kept.lapse(now);
    let old = use === undefined || use.claims.size === 0 ? undefined : use.claims.get(id);
    if (use !== undefined && use.bytes - (old?.bytes ?? 0) + bytes > this.#limit) {
      // Before refusing: the claims whose lease ran out no longer count.
      this.#lapseClaims(use, now);
      old = use.claims.get(id);
    }
    const base = use === undefined ? 0 : use.bytes - (old?.bytes ?? 0);
    if (base + bytes > this.#limit) {
      const first = firstUntil(use);
      return first === Infinity ? 1 : Math.max(1, first - now);
    }
    // A claim admitted again replaces its entry: its old bytes are already out of `base`.
    use ??= this.#join(caller);
    use.bytes = base + bytes;
    const claim: Claim = { id, use, bytes, until };
    use.claims.set(id, claim);
    this.#hand = claim;
    return 0;
  }

  /** Record `id` is now its kept answer, counting `bytes` until `until` (over its claim, if counted); never refused. */
  set(caller: string, id: string, bytes: number, until: number): void {
    const old = this.#claimOf(caller, id);
    const use = old?.use ?? this.#callers.get(caller) ?? this.#join(caller);
    if (old !== undefined) this.#forget(old);
    use.kept.push(until, bytes);
    use.bytes += bytes;
  }

  /** The claim on record `id` is gone (released). */
  drop(caller: string, id: string): void {
    const old = this.#claimOf(caller, id);
    if (old === undefined) return;
    const use = old.use;
    this.#forget(old);
    if (use.claims.size === 0 && use.kept.size === 0) this.#leave(use);
  }

  /** Bytes counted for `caller` now. */
  used(caller: string): number {
    return this.#callers.get(caller)?.bytes ?? 0;
  }

  /** The counted claim on record `id` of `caller`: the one at hand, or looked up. */
  #claimOf(caller: string, id: string): Claim | undefined {
    const h = this.#hand;
    if (h !== null && h.id === id && h.use.caller === caller) return h;
    const use = this.#callers.get(caller);
    return use === undefined || use.claims.size === 0 ? undefined : use.claims.get(id);
  }

  /** Takes a claim out of the count. */
  #forget(claim: Claim): void {
    claim.use.claims.delete(claim.id);
    claim.use.bytes -= claim.bytes;
    if (this.#hand === claim) this.#hand = null;
  }

  /** Takes the caller's claims whose lease has run out at `now` out of the count. */
  #lapseClaims(use: CallerUse, now: number): void {
    // A Map may lose the entry being visited: the iteration goes on with the next.
    for (const claim of use.claims.values()) if (claim.until <= now) this.#forget(claim);
  }

  #join(caller: string): CallerUse {
    const use: CallerUse = {
      caller,
      bytes: 0,
      claims: new Map(),
      kept: new LapseQueue(),
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
    use.bytes -= use.kept.lapse(now);
    if (use.kept.size !== 0) return;
    if (use.claims.size !== 0) this.#lapseClaims(use, now);
    if (use.claims.size === 0) this.#leave(use);
  }
}

/** When the first of a caller's records lapses; Infinity when it holds none. */
function firstUntil(use: CallerUse | undefined): number {
  if (use === undefined) return Infinity;
  let first = use.kept.firstUntil;
  for (const claim of use.claims.values()) if (claim.until < first) first = claim.until;
  return first;
}
