import { checkOneOf, checkWhole } from '../options';
import type { RateWindow } from './rate-store';

/** `RateTable.take` let the request through. */
export const RATE_ADMITTED = 0;
/** The key has used its allowance: 429 until `retryAt`. */
export const RATE_OVER = 1;
export type RateVerdict = typeof RATE_ADMITTED | typeof RATE_OVER;

export interface RateTableOptions {
  /** Requests one key may make in a window. */
  readonly max: number;
  /** The window's length. */
  readonly spanMs: number;
  /** Windows held at once; past it a new key takes the least recently seen key's place. */
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
 * Entries sit in a Map in the order their keys were last seen: every request of a key, admitted
 * or not, moves it to the back, as nginx's `limit_req` zones keep theirs. Ended windows are
 * dropped from the front, a couple per new window, never by a scan of the table. A sliding entry
 * lives two windows (its count weighs on the next window).
 *
 * At the bound a new key takes the place of the least recently seen one, and that key's window is
 * forgotten (an eviction, counted in `evictions`, when it had not ended). So a new client is
 * always served by a window of its own: refusing new keys instead would let anyone who can send
 * from 100,000 addresses (seconds of work) lock every new client out until the oldest window ends.
 * What forgetting costs: a client gets a fresh allowance only after `maxKeys` other keys were seen
 * since its own last request, that many requests from as many addresses per reset.
 */
export class RateTable {
  readonly max: number;
  readonly spanMs: number;
  readonly maxKeys: number;
  readonly sliding: boolean;
  /** When a refused key may try again (same clock as `now`); set by `take` when it refuses. */
  retryAt = 0;
  /** Windows forgotten before they ended, to make room for a new key, since the table was made. */
  evictions = 0;
  /** How long an entry matters after its `start`. */
  readonly #life: number;
  readonly #windows = new Map<string, Window>();

  constructor(options: RateTableOptions) {
    const owner = { where: 'rate table' };
    for (const name of ['max', 'spanMs', 'maxKeys'] as const)
      checkWhole(owner, name, options[name], { min: 1 });
    const window = checkOneOf(owner, 'window', options.window ?? 'fixed', ['fixed', 'sliding']);
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

  /**
   * Counts one request of `key` at `now` (a clock that does not go back, not below 0). A new key
   * is always admitted: past `maxKeys` it takes the least recently seen key's place.
   */
  take(key: string, now: number): RateVerdict {
    if (this.sliding) return this.#slide(key, now);
    const w = this.#entry(key, now, now);
    if (now - w.start >= this.spanMs) {
      // The key's window ended: a new one, in the same entry.
      w.start = now;
      w.count = 0;
      this.#expire(now, EXPIRE_PER_INSERT);
    }
    if (++w.count <= this.max) return RATE_ADMITTED;
    this.retryAt = w.start + this.spanMs;
    return RATE_OVER;
  }

  /**
   * The two-window estimate: `prev` weighted by the share of the last window still within
   * `spanMs` of `now`, plus `count`. A refused request is not counted, so a client that keeps
   * knocking is let in when the estimate says, not later.
   */
  #slide(key: string, now: number): RateVerdict {
    const span = this.spanMs;
    const start = now - (now % span);
    const w = this.#entry(key, now, start);
    if (w.start < start - span) {
      // Nothing counted in this window or the last: a fresh count.
      w.start = start;
      w.count = 0;
      w.prev = 0;
      this.#expire(now, EXPIRE_PER_INSERT);
    } else if (w.start < start) {
      // The next window: what it counted becomes the weighed past.
      w.prev = w.count;
      w.count = 0;
      w.start = start;
      this.#expire(now, EXPIRE_PER_INSERT);
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

  /**
   * The key's entry, moved to the back (seen now); or a new one starting at `start`, there, after
   * dropping some ended windows and, at the bound, the least recently seen entry.
   */
  #entry(key: string, now: number, start: number): Window {
    const windows = this.#windows;
    const held = windows.get(key);
    if (held !== undefined) {
      windows.delete(key);
      windows.set(key, held);
      return held;
    }
    this.#expire(now, EXPIRE_PER_INSERT);
    if (windows.size >= this.maxKeys) this.#evict(now);
    const fresh: Window = { start, count: 0, prev: 0 };
    windows.set(key, fresh);
    return fresh;
  }

  /** Drops the least recently seen entry; one whose window still mattered is an eviction. */
  #evict(now: number): void {
    for (const [key, w] of this.#windows) {
      this.#windows.delete(key);
      if (now - w.start < this.#life) this.evictions++;
      return;
    }
  }

  /** Drops up to `n` ended windows from the front. */
  #expire(now: number, n: number): void {
    for (const [key, w] of this.#windows) {
      if (n-- === 0 || now - w.start < this.#life) return;
      this.#windows.delete(key);
    }
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
