import { checkBytes, checkTtlMs } from './check-args';
import { CacheError } from './errors';
import { clockToken } from './fence-token';
import { MemoryStore } from './memory-store';
import { isPromise, type Answer, type ExpectOptions, type Store } from './store';

/** Which answers an idempotent route keeps for retries (see `SpaceOptions.keep`). */
export type KeepMode = 'success' | 'declared' | 'all';

/** A declared space: its name and options (defaults filled in), opened on a store with `open`. Frozen. */
export interface SpaceDecl {
  readonly name: string;
  readonly ttlSeconds: number;
  readonly maxBytes: number;
  readonly leaseMs: number;
  /** How long before its lease runs out a running handler's claim counts as lost in its process (see `SpaceOptions.leaseMarginMs`). */
  readonly leaseMarginMs: number;
  /** As declared; null: derived from the store it is opened on (see `OpenSpace.maxBytesPerCaller`). */
  readonly maxBytesPerCaller: number | null;
  /** Which answers of an idempotent route are kept (see `SpaceOptions.keep`). */
  readonly keep: KeepMode;
  /** Where a request without an `Idempotency-Key` is pointed (see `SpaceOptions.keyDocs`). */
  readonly keyDocs: string;
  /** Opens the space on `store`; hand the result to the app with `app.provide(opened)`. */
  open(store: Store): OpenSpace;
}

/**
 * A space opened on a store: the store's operations with the space's keys, TTL and size bound.
 * Keys are filed as `<name length>:<name>:<key>`, so two spaces on one store never share a key
 * whatever their names hold. A value over `maxBytes` is not stored and the write answers
 * `false` (the caller decides whether that is worth a log line). A class, so the framework can
 * find it among provided services with `instanceof` and match it by `opened.space === decl`.
 *
 * @example
 * const orders = Orders.open(store);
 * if (await orders.putIfAbsent(key, claim, 30_000)) { … }   // a claim on a shorter lease (claim handed over)
 * await orders.put(key, record, undefined, { expect: claim }); // the space's ttlSeconds
 */
export class OpenSpace {
  /** The declaration this was opened from. */
  readonly space: SpaceDecl;
  readonly maxBytes: number;
  readonly ttlSeconds: number;
  /** How long a claim holds its key between renewals (the space's `leaseMs`). */
  readonly leaseMs: number;
  /** How long before the lease runs out a running handler's claim counts as lost in its process (the space's `leaseMarginMs`). */
  readonly leaseMarginMs: number;
  readonly #store: Store;
  #perCaller: number | null;
  /** The store when it is a `MemoryStore`: its budget sets the default per-caller share, and its fill is watched. */
  readonly #memory: MemoryStore | null;
  readonly #prefix: string;
  readonly #ttlMs: number;
  /** The last key asked and its store key: one request asks about one key several times in a row. */
  #lastKey = '';
  #lastStoreKey = '';

  constructor(space: SpaceDecl, store: Store) {
    const ops = ['get', 'putIfAbsent', 'put', 'del'] as const;
    const missing = ops.filter(
      (op) => typeof (store as Partial<Store> | null | undefined)?.[op] !== 'function',
    );
    if (missing.length > 0) {
      throw new CacheError(
        'InvalidArgument',
        `Space "${space.name}": open() was given no store (missing ${missing.join(', ')})`,
      );
    }
    this.space = space;
    this.maxBytes = space.maxBytes;
    this.ttlSeconds = space.ttlSeconds;
    this.leaseMs = space.leaseMs;
    this.leaseMarginMs = space.leaseMarginMs;
    this.#perCaller = space.maxBytesPerCaller;
    this.#store = store;
    this.#memory = store instanceof MemoryStore ? store : null;
    const names = spacesOn.get(store) ?? new Set<string>();
    spacesOn.set(store, names.add(space.name));
    this.#prefix = `${space.name.length}:${space.name}:`;
    this.#lastStoreKey = this.#prefix; // the store key of '', the last key until one is asked
    this.#ttlMs = Math.ceil(space.ttlSeconds * 1000);
  }

  /**
   * The store's key for `key` in this space (`<name length>:<name>:<key>`): what a feature logs or
   * counts a record by, the same one the store's own tools show.
   */
  keyOf(key: string): string {
    return this.#prefix + key;
  }

  /**
   * The most one caller may hold in this space: as declared, or derived once (at first use, when
   * every space is opened) from the store. On a `MemoryStore`, `bytes / (16 × spaces opened on
   * it)`, at least two of the largest records: sixteen callers at their cap fill at most their
   * space's share, so a handful never fill the store. Elsewhere the larger of 16 MiB and 64 × maxBytes.
   */
  get maxBytesPerCaller(): number {
    if (this.#perCaller !== null) return this.#perCaller;
    const m = this.#memory;
    if (m === null) return (this.#perCaller = Math.max(16 * 1024 * 1024, 64 * this.maxBytes));
    const spaces = spacesOn.get(this.#store)?.size ?? 1;
    const floor = 2 * (this.maxBytes + 1024 + MemoryStore.entryOverheadBytes);
    return (this.#perCaller = Math.max(floor, Math.floor(m.bytes / (16 * spaces))));
  }

  /** What one record costs beyond its key and bytes in the store (a `MemoryStore`'s per-entry cost, else 0), for budgets. */
  get entryOverheadBytes(): number {
    return this.#memory === null ? 0 : MemoryStore.entryOverheadBytes;
  }

  /** How full the store is (0..1) when it can tell at once (a `MemoryStore`), else null. */
  fill(): number | null {
    const m = this.#memory;
    return m === null ? null : m.bytesUsed / m.bytes;
  }

  /** The `MemoryStore` under this space, if it is one (for its gauges), else null. */
  get memoryStore(): MemoryStore | null {
    return this.#memory;
  }

  /** What the health route calls this space: `space:<name>`. */
  get name(): string {
    return `space:${this.space.name}`;
  }

  /**
   * True when the store answers a cheap request (its `ping`, or a read of one key) within
   * `PROBE_DEADLINE_MS`; never throws. `app.health()` asks every provided space, so while the store
   * is down (and every idempotent route on it answers 503) the health route says so too.
   */
  async probe(): Promise<boolean> {
    return (await this.problem()) === null;
  }

  /**
   * Why the store does not answer a cheap request within `PROBE_DEADLINE_MS` (its error, which
   * names the host and the cause, ECONNREFUSED or a database index out of range), or null when
   * it does; never throws. Apps ask at listen and log it.
   */
  async problem(): Promise<string | null> {
    const store = this.#store;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = store.ping !== undefined ? store.ping() : store.get(`${this.#prefix}\0probe`);
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), OpenSpace.PROBE_DEADLINE_MS);
      });
      await Promise.race([answer, late]);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** What the store's settings say against keeping records (`Store.warnings`); nothing when it cannot tell. */
  async warnings(): Promise<string[]> {
    const store = this.#store;
    if (store.warnings === undefined) return [];
    return store.warnings().then(
      (lines) => lines,
      () => [],
    );
  }

  /**
   * The store this space is opened on, as given to `open`: apps check each store once at listen,
   * and atomic routes run their transaction on a `PgStore` (`PgStore.transaction()`). Its keys are
   * the space's through `keyOf`; a write straight to it skips the space's size bound.
   */
  get store(): Store {
    return this.#store;
  }

  /** How long `probe` waits for the store. */
  static readonly PROBE_DEADLINE_MS = 1000;

  // The four operations answer as the store does: at once on a store in this process (a
  // `MemoryStore`), so an idempotent route on it waits for nothing, else with a promise. A store's
  // failure leaves as `CacheError` Unavailable, thrown or rejected likewise.

  get(key: string): Answer<Buffer | null> {
    let answer;
    try {
      answer = this.#store.get(this.#storeKey(key));
    } catch (err) {
      throw this.#unavailable('get', key, err);
    }
    return isPromise(answer) ? this.#later('get', key, answer) : answer;
  }

  /** Whether the store claims and reads in one round trip (`putIfAbsentOrGet`). */
  get claimsInOne(): boolean {
    return typeof this.#store.putIfAbsentOrGet === 'function';
  }

  /**
   * The claim of an idempotent run (or of any work done once per key): the store's `claim` when it has one, else its
   * `putIfAbsentOrGet` or `putIfAbsent`. Answers the claim's fencing token when `value` was
   * written (the store's, or for a store that mints none one from this process's clock, taken
   * the moment the claim is known won); the bytes found when the key is taken and they were
   * read, null when not; `false` when `value` is over `maxBytes` (nothing written, nothing read).
   */
  claimWithToken(
    key: string,
    value: Buffer,
    ttlMs?: number,
  ): Answer<bigint | Buffer | null | false> {
    if (!this.#fits(key, value)) return false;
    const ms = this.#ttl(ttlMs, key);
    const store = this.#store;
    const k = this.#storeKey(key);
    const op =
      store.claim !== undefined
        ? 'claim'
        : store.putIfAbsentOrGet !== undefined
          ? 'putIfAbsentOrGet'
          : 'putIfAbsent';
    let answer: Answer<bigint | Buffer | boolean | null>;
    try {
      answer =
        op === 'claim'
          ? store.claim!(k, value, ms)
          : op === 'putIfAbsentOrGet'
            ? store.putIfAbsentOrGet!(k, value, ms)
            : store.putIfAbsent(k, value, ms);
    } catch (err) {
      throw this.#unavailable(op, key, err);
    }
    const fence = op === 'claim' ? asIs : op === 'putIfAbsentOrGet' ? writtenIfNull : writtenIfTrue;
    return isPromise(answer) ? this.#later(op, key, answer.then(fence)) : fence(answer);
  }

  /** Keeps `value` (handed over, see `Store`) only if nothing live is kept under `key`, for `ttlMs` or the space's `ttlSeconds`. */
  putIfAbsent(key: string, value: Buffer, ttlMs?: number): Answer<boolean> {
    if (!this.#fits(key, value)) return false;
    const ms = this.#ttl(ttlMs, key);
    let answer;
    try {
      answer = this.#store.putIfAbsent(this.#storeKey(key), value, ms);
    } catch (err) {
      throw this.#unavailable('putIfAbsent', key, err);
    }
    return isPromise(answer) ? this.#later('putIfAbsent', key, answer) : answer;
  }

  /**
   * Keeps `value` (handed over) for `ttlMs` (`undefined`: the space's `ttlSeconds`); with `expect`,
   * only if the current value equals it. The `Store` argument order, so an opened space can stand
   * wherever a store's four operations are expected.
   */
  put(key: string, value: Buffer, ttlMs?: number, opts?: ExpectOptions): Answer<boolean> {
    if (!this.#fits(key, value)) return false;
    const ms = this.#ttl(ttlMs, key);
    let answer;
    try {
      answer = this.#store.put(this.#storeKey(key), value, ms, opts);
    } catch (err) {
      throw this.#unavailable('put', key, err);
    }
    return isPromise(answer) ? this.#later('put', key, answer) : answer;
  }

  /** Removes the entry; with `expect`, only if the current value equals it. */
  del(key: string, opts?: ExpectOptions): Answer<boolean> {
    let answer;
    try {
      answer = this.#store.del(this.#storeKey(key), opts);
    } catch (err) {
      throw this.#unavailable('del', key, err);
    }
    return isPromise(answer) ? this.#later('del', key, answer) : answer;
  }

  /**
   * `<prefix><key>`, the same string again for the key asked last: a store keeping a Map looks it
   * up without building, flattening and hashing it anew.
   */
  #storeKey(key: string): string {
    if (key !== this.#lastKey) {
      this.#lastKey = key;
      this.#lastStoreKey = this.#prefix + key;
    }
    return this.#lastStoreKey;
  }

  /** The TTL given, checked here so a program's own store never gets another (an options object in its place is refused), or the space's. */
  #ttl(ttlMs: number | undefined, key: string): number {
    return ttlMs === undefined ? this.#ttlMs : checkTtlMs(ttlMs, `${this.space.name}/${key}`);
  }

  #fits(key: string, value: Buffer): boolean {
    checkBytes(value, `${this.space.name}/${key}`);
    return value.length <= this.maxBytes;
  }

  /** A store answering later: a program's own store may fail with any error; it leaves here as `Unavailable`, naming the space and key. */
  #later<T>(op: string, key: string, answer: Promise<T>): Promise<T> {
    return answer.then(undefined, (err: unknown) => {
      throw this.#unavailable(op, key, err);
    });
  }

  #unavailable(op: string, key: string, err: unknown): CacheError {
    if (err instanceof CacheError) return err;
    const why = err instanceof Error ? err.message : String(err);
    return new CacheError(
      'Unavailable',
      `Space "${this.space.name}": ${op} "${key}" failed: ${why}`,
      { cause: err },
    );
  }
}

// How each store operation's answer reads as a claim's (see `claimWithToken`).
const asIs = (a: bigint | Buffer | boolean | null): bigint | Buffer | null =>
  a as bigint | Buffer | null;
const writtenIfNull = (a: bigint | Buffer | boolean | null): bigint | Buffer =>
  a === null ? clockToken() : (a as Buffer);
const writtenIfTrue = (a: bigint | Buffer | boolean | null): bigint | null =>
  a === true ? clockToken() : null;

/** The names of the spaces opened on each store, so a default share can be split between them. */
const spacesOn = new WeakMap<Store, Set<string>>();
