import type { RateWindow } from './rate-store';

/** `RateTable.take` let the request through. */
export const RATE_ADMITTED = 0;
/** The key has used its allowance: 429 until `retryAt`. */
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
  /** `'fixed'` (default) or `'sliding'` (see `RateWindow`). */
  readonly window?: RateWindow;
}

interface Window {
  /** Fixed: when the key's window began. Sliding: the start of the clock-aligned window counted. */
  start: number;
  count: number;
  /** Sliding only: what the key counted in the window before `start`. */
  prev: number;
}

/** What `RateTable.standing` says of a key. */
export interface RateStanding {
  readonly remaining: number;
  readonly resetAt: number;
  /** `resetAt - now` in whole milliseconds, 1 to the window. */
  readonly resetMs: number;
}

/**
 * Whole milliseconds, at least 1 and at most `most`: an end `start + span` less `now` can come out
 * a hair over the span in floating point (60000.000000000007), and a 60 s window must never say
 * 60001 ms or t=61.
 */
const wholeMs = (ms: number, most: number): number => Math.max(1, Math.min(most, Math.ceil(ms)));

/** Ended windows dropped per new window: more than one, so the table drains faster than it fills. */
const EXPIRE_PER_INSERT = 2;

/**
 * Windows per key, at most `maxKeys` of them, with constant work per request: what `@RateLimit`
 * counts with in this process, and what `MemoryRateStore` keeps per rule.
 *
 * An entry is (re)inserted when its window starts, and every window of a table has the same
 * length (and, sliding, starts on the same clock-aligned boundaries), so the Map's insertion order
 * is the order in which entries end: the first is always the next to end. Ended entries are
 * dropped from the front, a couple per new window, never by a scan of the table. A sliding entry
 * lives two windows (its count weighs on the next window).
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
  readonly sliding: boolean;
  /** When a refused key may try again (same clock as `now`); set by `take` when it refuses. */
  retryAt = 0;
  /** How long an entry matters after its `start`. */
  readonly #life: number;
  readonly #windows = new Map<string, Window>();

  constructor(options: RateTableOptions) {
    for (const name of ['max', 'spanMs', 'maxKeys'] as const) {
      const v = options[name];
      if (!Number.isSafeInteger(v) || v < 1)
        throw new TypeError(`rate table ${name} must be a positive whole number, got ${String(v)}`);
    }
    const window = options.window ?? 'fixed';
    if (window !== 'fixed' && window !== 'sliding')
      throw new TypeError(`rate table window must be 'fixed' or 'sliding', got ${String(window)}`);
    this.max = options.max;
    this.spanMs = options.spanMs;
    this.maxKeys = options.maxKeys;
    this.sliding = window === 'sliding';
    this.#life = this.sliding ? 2 * options.spanMs : options.spanMs;
  }

  /** Windows held now (ended ones not yet dropped included). */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Requests `key` may still make in its current window, when that window ends (same clock as
   * `now`) and how many whole milliseconds that is away (1 to `spanMs`): what the `RateLimit`
   * header says. A sliding window counts its current part only.
   */
  standing(key: string, now: number): RateStanding {
    const w = this.#windows.get(key);
    if (w === undefined || now - w.start >= this.spanMs)
      return { remaining: this.max, resetAt: now + this.spanMs, resetMs: this.spanMs };
    const resetAt = w.start + this.spanMs;
    return {
      remaining: Math.max(0, this.max - w.count),
      resetAt,
      resetMs: wholeMs(resetAt - now, this.spanMs),
    };
  }

  /**
   * After `take` refused: whole milliseconds until `retryAt`, at least 1 and at most the time an
   * entry lives (a window; two when sliding).
   */
  waitMs(now: number): number {
    return wholeMs(this.retryAt - now, this.#life);
  }

  /** Counts one request of `key` at `now` (a clock that does not go back, not below 0). */
  take(key: string, now: number): RateVerdict {
    if (this.sliding) return this.#slide(key, now);
    const windows = this.#windows;
    let w = windows.get(key);
    if (w !== undefined && now - w.start < this.spanMs) {
      if (++w.count <= this.max) return RATE_ADMITTED;
      this.retryAt = w.start + this.spanMs;
      return RATE_OVER;
    }
    // A new window for this key: drop some ended ones first (this key's own among them, if it
    // is at the front), then make room or refuse.
    if (w !== undefined) this.#leave(key, now);
    else if (!this.#room(now)) return RATE_FULL;
    if (w === undefined) w = { start: now, count: 1, prev: 0 };
    else {
      w.start = now;
      w.count = 1;
    }
    windows.set(key, w);
    return RATE_ADMITTED;
  }

  /**
   * The two-window estimate: `prev` weighted by the share of the last window still within
   * `spanMs` of `now`, plus `count`. A refused request is not counted, so a client that keeps
   * knocking is let in when the estimate says, not later.
   */
  #slide(key: string, now: number): RateVerdict {
    const span = this.spanMs;
    const start = now - (now % span);
    const windows = this.#windows;
    let w = windows.get(key);
    if (w === undefined || w.start < start - span) {
      // New, or nothing counted in this window or the last: a fresh entry, at the back.
      if (w !== undefined) this.#leave(key, now);
      else if (!this.#room(now)) return RATE_FULL;
      if (w === undefined) w = { start, count: 0, prev: 0 };
      else {
        w.start = start;
        w.count = 0;
        w.prev = 0;
      }
      windows.set(key, w);
    } else if (w.start < start) {
      // The next window: what it counted becomes the weighed past; it moves to the back.
      w.prev = w.count;
      w.count = 0;
      w.start = start;
      this.#leave(key, now);
      windows.set(key, w);
    }
    const max = this.max;
    const c = w.count;
    const p = w.prev;
    if (p * (span - (now - start)) + (c + 1) * span <= max * span) {
      w.count = c + 1;
      return RATE_ADMITTED;
    }
    this.retryAt = slidingRetry(start, span, max, w);
    return RATE_OVER;
  }

  /** Takes a known key out to put it back at the back, dropping some ended windows on the way. */
  #leave(key: string, now: number): void {
    this.#windows.delete(key);
    this.#expire(now, EXPIRE_PER_INSERT);
  }

  /** Drops ended windows; false (with `retryAt` set) when the table is still full. */
  #room(now: number): boolean {
    this.#expire(now, EXPIRE_PER_INSERT);
    if (this.#windows.size >= this.maxKeys && !this.#expire(now, 1)) {
      this.retryAt = this.#oldestStart() + this.#life;
      return false;
    }
    return true;
  }

  /** Drops up to `n` ended windows from the front; true when it dropped any. */
  #expire(now: number, n: number): boolean {
    let dropped = false;
    for (const [key, w] of this.#windows) {
      if (n-- === 0 || now - w.start < this.#life) break;
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

/**
 * When a sliding key refused in the window starting at `start` (having counted `c = count` there
 * and `p = prev` in the one before) is admitted: later in this window, once `p`'s weight has fallen
 * enough, when there is room beside `c`; otherwise in the next window, once `c`'s weight has.
 */
export function slidingRetry(
  start: number,
  span: number,
  max: number,
  counted: { readonly count: number; readonly prev: number },
): number {
  const c = counted.count;
  const p = counted.prev;
  if (c < max && p > 0) return start + span - ((max - 1 - c) * span) / p;
  return start + 2 * span - ((max - 1) * span) / c;
}
