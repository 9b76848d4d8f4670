/** `RateTable.take` let the request through. */
export const RATE_ADMITTED = 0;
/** The key has used its allowance in this window: 429 until `retryAt`. */
export const RATE_OVER = 1;
/** The key is new and the table holds `maxKeys` live windows: refused until `retryAt`, when the oldest ends. */
export const RATE_FULL = 2;
export type RateVerdict = typeof RATE_ADMITTED | typeof RATE_OVER | typeof RATE_FULL;

export interface RateTableOptions {
  /** Requests one key may make in a window. */
  readonly max: number;
  /** The window's length. */
  readonly spanMs: number;
  /** Windows held at once. */
  readonly maxKeys: number;
}

interface Window {
  start: number;
  count: number;
}

/** Ended windows dropped per new window: more than one, so the table drains faster than it fills. */
const EXPIRE_PER_INSERT = 2;

/**
 * Fixed windows per key, at most `maxKeys` of them, with constant work per request.
 *
 * Every window has the same length and is (re)inserted when it starts, so the Map's insertion order
 * is the order in which windows end: the first entry is always the next to end. Ended windows are
 * dropped from the front, a couple per new window, never by a scan of the table.
 *
 * At the bound a new key is refused rather than an older window dropped: dropping would hand
 * anyone who can vary their address (an IPv6 /64 holds 2^64) a fresh allowance for a known
 * address each time they push it out, which is exactly what the limit is there to prevent. A
 * refused client is told to come back when the oldest window ends.
 */
export class RateTable {
  readonly max: number;
  readonly spanMs: number;
  readonly maxKeys: number;
  /** When a refused key may try again (same clock as `now`); set by `take` when it refuses. */
  retryAt = 0;
  readonly #windows = new Map<string, Window>();

  constructor(options: RateTableOptions) {
    for (const name of ['max', 'spanMs', 'maxKeys'] as const) {
      const v = options[name];
      if (!Number.isSafeInteger(v) || v < 1)
        throw new TypeError(`rate table ${name} must be a positive whole number, got ${String(v)}`);
    }
    this.max = options.max;
    this.spanMs = options.spanMs;
    this.maxKeys = options.maxKeys;
  }

  /** Windows held now (ended ones not yet dropped included). */
  get size(): number {
    return this.#windows.size;
  }

  /** Counts one request of `key` at `now` (a clock that does not go back). */
  take(key: string, now: number): RateVerdict {
    const windows = this.#windows;
    let w = windows.get(key);
    if (w !== undefined && now - w.start < this.spanMs) {
      if (++w.count <= this.max) return RATE_ADMITTED;
      this.retryAt = w.start + this.spanMs;
      return RATE_OVER;
    }
    // A new window for this key: drop some ended ones first (this key's own among them, if it
    // is at the front), then make room or refuse.
    if (w !== undefined) windows.delete(key);
    this.#expire(now, EXPIRE_PER_INSERT);
    if (windows.size >= this.maxKeys && !this.#expire(now, 1)) {
      this.retryAt = this.#oldestStart() + this.spanMs;
      return RATE_FULL;
    }
    if (w === undefined) w = { start: now, count: 1 };
    else {
      w.start = now;
      w.count = 1;
    }
    windows.set(key, w);
    return RATE_ADMITTED;
  }

  /** Drops up to `n` ended windows from the front; true when it dropped any. */
  #expire(now: number, n: number): boolean {
    let dropped = false;
    for (const [key, w] of this.#windows) {
      if (n-- === 0 || now - w.start < this.spanMs) break;
      this.#windows.delete(key);
      dropped = true;
    }
    return dropped;
  }

  #oldestStart(): number {
    for (const w of this.#windows.values()) return w.start;
    return 0;
  }
}
