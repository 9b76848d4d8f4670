/** Options of a conditional write or delete. */
export interface ExpectOptions {
  /**
   * Act only when the value now stored equals these bytes exactly (compare-and-set). A holder
   * whose entry expired and was taken by someone else then cannot touch the new holder's value.
   */
  readonly expect?: Buffer;
}

/**
 * What a store operation answers: the value at once (a store in this process, `MemoryStore`) or a
 * promise of it (a store over the network). Callers `await` it, or go on at once when it is not a
 * promise; a failure is thrown or rejected, as the store answers.
 */
export type Answer<T> = T | Promise<T>;

/**
 * The contract of a key–value store of bytes with expiry: what `MemoryStore`, `RedisStore` and
 * `PgStore` implement, and what a program's own store must implement to replace them. Each
 * operation is atomic on its one key and answers at once or with a promise (`Answer<T>`): a store
 * in the process answers at once, so an idempotent route on it waits for nothing. An entry past
 * its TTL is gone: `get` misses it and `putIfAbsent` succeeds again.
 *
 * Values are handed over: the Buffer given to `putIfAbsent` or `put` becomes the store's, which
 * may keep it as it is (`MemoryStore` keeps a Buffer of more than 64 bytes that is the whole of
 * its memory, and copies a view into a larger one), so the caller never writes into it afterwards
 * (write a copy instead).
 * The bytes `get` gives may be the store's own: read them, never write into them.
 *
 * @example
 * const store: Store = new MemoryStore({ bytes: 64 * 1024 * 1024 });
 * if (await store.putIfAbsent('k', Buffer.from('claim'), 30_000)) { … }
 */
export interface Store {
  /**
   * The bytes kept under `key`, or `null` when there are none (never kept, deleted, expired or evicted).
   * They may be the store's own: callers read them and never write into them, and a store never
   * writes into bytes it has handed out (a new value is a new Buffer).
   */
  get(key: string): Answer<Buffer | null>;
  /**
   * Keeps `value` for `ttlMs` only if nothing live is kept under `key`. Of callers racing on one absent key exactly one gets `true`.
   * The entry is *held*: a store that evicts to make room must never evict it (a claim evicted is a
   * request run twice); with no room it fails with `CacheError` Full, as Redis under `noeviction` does.
   */
  putIfAbsent(key: string, value: Buffer, ttlMs: number): Answer<boolean>;
  /**
   * Optional, for stores over the network: `putIfAbsent` and, when the key is taken, `get`, in
   * one round trip. Null when `value` was written (held, as by `putIfAbsent`), else the bytes
   * found. An idempotent route's first request then costs one round trip to claim (`RedisStore`).
   */
  putIfAbsentOrGet?(key: string, value: Buffer, ttlMs: number): Answer<Buffer | null>;
  /**
   * Optional, for stores that keep time: `putIfAbsent` that, when it writes, answers a fencing
   * token minted by the store's own clock in the same step (a bigint: microseconds since 1970 ×
   * 4.096, rounded down); when the key is taken, the bytes found, or null when it did not read
   * them. One clock then orders the claims of a key from every instance (`RedisStore`, `PgStore`).
   * Without it, fw mints the token from the claiming process's clock once the claim is won.
   * @example
   * const won = await store.claim('k', claim, 30_000);
   * if (typeof won === 'bigint') { … } // ours, fenced by `won`
   */
  claim?(key: string, value: Buffer, ttlMs: number): Answer<bigint | Buffer | null>;
  /**
   * Keeps `value` for `ttlMs`, replacing what is there; with `expect`, only if the current value equals it. Answers whether it wrote.
   * With `expect` the new entry stays held like the one it replaces (a kept answer over its claim, or
   * the claim over itself to renew its lease); without, it is an ordinary entry a store may evict.
   */
  put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Answer<boolean>;
  /** Removes the entry; with `expect`, only if the current value equals it. Answers whether a live entry was removed. */
  del(key: string, opts?: ExpectOptions): Answer<boolean>;
  /**
   * Optional: resolves when the store answers a cheap request, rejects when it cannot be reached
   * (health probes use it; without it they read one key).
   */
  ping?(): Promise<void>;
  /**
   * Optional: what the store's own settings say against keeping idempotency records, one line
   * each (`RedisStore`: a `maxmemory-policy` that evicts). Logged as warnings when an app starts.
   */
  warnings?(): Promise<string[]>;
  /** Releases what the store holds (connections). `MemoryStore` and `RedisStore` fail every later call with `CacheError` Unavailable. */
  close(): Promise<void>;
}

/** True when `x` is a promise (or any thenable) rather than an answer given at once. */
export const isPromise = <T>(x: Answer<T>): x is Promise<T> =>
  typeof (x as { then?: unknown } | null)?.then === 'function';

/**
 * `f(x)` now when `x` is a value, or once it resolves when it is a promise: one code path for a
 * store that answers at once and one that answers later, with no wait for the first.
 */
export function then<T, U>(x: Answer<T>, f: (value: T) => Answer<U>): Answer<U> {
  return isPromise(x) ? x.then(f) : f(x);
}
