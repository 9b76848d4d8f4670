import { checkBytes, checkTtlMs } from './check-args';
import { checkWhole } from '../options';
import { CacheError, invalidArgument } from './errors';
import type { ExpectOptions, Store } from './store';

/** Options of `new MemoryStore(…)`. */
export interface MemoryStoreOptions {
  /** The byte budget: key bytes (UTF-8) + value bytes + `MemoryStore.entryOverheadBytes` (384) per entry, summed over all entries. */
  readonly bytes: number;
}

/** An entry, linked into the recency list (most recently used at the head). */
interface Entry {
  readonly key: string;
  value: Buffer;
  /** On the `performance.now()` clock, which never jumps when the wall clock is set. */
  expiresAt: number;
  /** What this entry counts against the budget. */
  size: number;
  /** Written by putIfAbsent or a compare-and-set: never evicted, and not in the recency list. */
  held: boolean;
  newer: Entry | null;
  older: Entry | null;
}

/**
 * The embedded default store: entries live in this process, bounded by a byte budget, and the
 * least recently used go first when a new entry needs room. Expiry is checked when an entry is
 * read (no timer per key); an expired entry still takes room until it is read or evicted.
 *
 * Entries written by `putIfAbsent`, or by a `put` with `expect` over one, are held: never evicted,
 * only replaced, deleted or expired. Only plain `put` entries make room. A held write that finds no
 * room even after every plain entry is gone fails `CacheError` Full (fails closed, as Redis with
 * `noeviction`), so one caller filling the store can never push out another's claim or kept answer.
 *
 * @example
 * const store = new MemoryStore({ bytes: 64 * 1024 * 1024 });
 * const orders = Orders.open(store);
 */
export class MemoryStore implements Store {
  /**
   * Counted per entry on top of its key and value bytes: what V8 and Node spend on the Map slot,
   * the entry record, the key string's header and the value's Buffer, ArrayBuffer and backing
   * store. Measured on Node 20 (heap + external after GC, entries of 0–2000 bytes with 40–60 byte
   * keys): 370–420 bytes an entry beyond its value, key included. Counting less let a budget of
   * small entries cost 2.2 times the budget.
   */
  static readonly entryOverheadBytes = 384;

  /** How often, at most, a held write short of room looks through every entry for lapsed ones. */
  static readonly sweepEveryMs = 1000;

  /** The byte budget this store was built with. */
  readonly bytes: number;
  // Recency is a doubly linked list beside the Map. (Deleting and re-inserting a Map key on every
  // use looks simpler, but V8 rehashes a large Map on that churn: 38 µs per touch at 30 000 entries.)
  readonly #entries = new Map<string, Entry>();
  #newest: Entry | null = null;
  #oldest: Entry | null = null;
  #used = 0;
  /** Bytes of entries that are not held: all eviction can ever free. */
  #evictable = 0;
  #sweptAt = -Infinity;
  #closed = false;
  /**
   * The key `get` last found nothing under, until it is written: a `putIfAbsent` of that key right
   * after (a claim after its lookup) need not look for it again in a Map as large as the store.
   */
  #absent: string | null = null;

  constructor(options: MemoryStoreOptions) {
    this.bytes = checkWhole(
      { where: 'MemoryStore', refuse: invalidArgument },
      'bytes',
      options?.bytes,
      { unit: 'bytes', min: 1 },
    );
  }

  /** Bytes now counted against the budget (expired entries not yet dropped included). */
  get bytesUsed(): number {
    return this.#used;
  }

  /** Answers at once: this store never has to wait. */
  get(key: string): Buffer | null {
    this.#open(key);
    const entry = this.#live(key);
    if (entry === undefined) {
      this.#absent = key;
      return null;
    }
    this.#touch(entry);
    // The kept bytes themselves, not a copy: the Store contract has readers treat them as read-only,
    // and a replay then costs no allocation here.
    return entry.value;
  }

  /** Answers at once; `value` is handed over (see `Store`): kept as it is unless it is a view into larger memory. */
  putIfAbsent(key: string, value: Buffer, ttlMs: number): boolean {
    this.#open(key);
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    if (key !== this.#absent && this.#live(key) !== undefined) return false;
    return this.#insert(key, value, ms, true);
  }

  /** Answers at once; `value` is handed over as for `putIfAbsent`. */
  put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): boolean {
    this.#open(key);
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const expect = opts?.expect;
    if (expect !== undefined) {
      checkBytes(expect, key, 'expect');
      const old = this.#live(key);
      if (old === undefined || !old.value.equals(expect)) return false;
    }
    return this.#insert(key, value, ms, expect !== undefined);
  }

  /** Answers at once unless the store is closed. */
  async ping(): Promise<void> {
    this.#open('(ping)');
  }

  /** Answers at once. */
  del(key: string, opts?: ExpectOptions): boolean {
    this.#open(key);
    const expect = opts?.expect;
    if (expect !== undefined) checkBytes(expect, key, 'expect');
    const entry = this.#live(key);
    if (entry === undefined) return false;
    if (expect !== undefined && !entry.value.equals(expect)) return false;
    this.#remove(key, entry);
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#entries.clear();
    this.#newest = this.#oldest = null;
    this.#used = this.#evictable = 0;
  }

  #open(key: string): void {
    if (this.#closed) throw new CacheError('Unavailable', `MemoryStore: closed (key "${key}")`);
  }

  /** The entry under `key` unless it has expired; an expired one is dropped on the way. */
  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= performance.now()) {
      this.#remove(key, entry);
      return undefined;
    }
    return entry;
  }

  /** Writes `key`, held (a claim or kept answer, never evicted) or not. */
  #insert(key: string, value: Buffer, ttlMs: number, held: boolean): boolean {
    let old: Entry | undefined;
    if (key === this.#absent) this.#absent = null;
    else old = this.#entries.get(key);
    const size = Buffer.byteLength(key) + value.length + MemoryStore.entryOverheadBytes;
    // Refused before anything is touched, so an entry that can never fit leaves the store as it was.
    if (size > this.bytes) return false;
    let room =
      this.bytes - this.#used + this.#evictable + (old !== undefined && old.held ? old.size : 0);
    // Held entries that lapsed unread still take room; eviction never reaches them, so look for
    // them when short of room (a whole pass, at most once a second however many writes are refused).
    if (size > room && held && performance.now() - this.#sweptAt >= MemoryStore.sweepEveryMs) {
      this.#sweepExpired();
      old = this.#entries.get(key);
      room =
        this.bytes - this.#used + this.#evictable + (old !== undefined && old.held ? old.size : 0);
    }
    if (size > room) {
      if (!held) return false;
      throw new CacheError(
        'Full',
        `MemoryStore: no room for "${key}" (${size} bytes): the budget of ${this.bytes} bytes is held by claims and kept answers, which are never evicted`,
      );
    }
    // The old entry leaves the count and the recency list but keeps its Map slot and is rewritten
    // below: a delete and re-insert would leave a hole that makes V8 rehash a large Map.
    if (old !== undefined) this.#release(old);
    while (this.#used + size > this.bytes && this.#oldest !== null)
      this.#remove(this.#oldest.key, this.#oldest);
    const own = ownBytes(value);
    const expiresAt = performance.now() + ttlMs;
    let entry = old;
    if (entry === undefined)
      this.#entries.set(
        key,
        (entry = { key, value: own, expiresAt, size, held, newer: null, older: null }),
      );
    else {
      // Rewritten in place, in its Map slot: the Map is not touched at all.
      entry.value = own;
      entry.expiresAt = expiresAt;
      entry.size = size;
      entry.held = held;
    }
    this.#used += size;
    if (!held) {
      this.#link(entry);
      this.#evictable += size;
    }
    return true;
  }

  #sweepExpired(): void {
    const now = (this.#sweptAt = performance.now());
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#remove(key, entry);
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#release(entry);
  }

  /** Takes an entry out of the count and the recency list (not out of the Map). */
  #release(entry: Entry): void {
    this.#used -= entry.size;
    if (!entry.held) {
      this.#unlink(entry);
      this.#evictable -= entry.size;
    }
  }

  /** Marks an entry most recently used. */
  #touch(entry: Entry): void {
    if (entry.held || this.#newest === entry) return;
    this.#unlink(entry);
    this.#link(entry);
  }

  #link(entry: Entry): void {
    entry.older = this.#newest;
    entry.newer = null;
    if (this.#newest !== null) this.#newest.newer = entry;
    this.#newest = entry;
    if (this.#oldest === null) this.#oldest = entry;
  }

  #unlink(entry: Entry): void {
    if (entry.newer !== null) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    if (entry.older !== null) entry.older.newer = entry.newer;
    else this.#oldest = entry.newer;
    entry.newer = entry.older = null;
  }
}

/**
 * What an entry keeps of a value handed over (the Store contract): the Buffer itself when it is the
 * whole of its memory. A view into larger memory is copied: a small Buffer is often a slice of an
 * 8 KiB shared pool, which keeping the view would keep alive whole. A value of at most 64 bytes is
 * copied into a Buffer V8 keeps in its heap, without asking for its `.buffer` (which would move an
 * in-heap array out of the heap, costing more than the copy).
 */
function ownBytes(value: Buffer): Buffer {
  if (value.length <= 64) {
    const own = Buffer.alloc(value.length);
    own.set(value);
    return own;
  }
  if (value.byteOffset === 0 && value.buffer.byteLength === value.length) return value;
  const own = Buffer.allocUnsafeSlow(value.length);
  value.copy(own);
  return own;
}
