/** Options of a conditional write or delete. */
export interface ExpectOptions {
  /**
   * Act only when the value now stored equals these bytes exactly (compare-and-set). A holder
   * whose entry expired and was taken by someone else then cannot touch the new holder's value.
   */
  readonly expect?: Buffer;
}

/**
 * The contract of a key–value store of bytes with expiry: what `MemoryStore` and `RedisStore`
 * implement, and what a program's own store must implement to replace them. Every operation
 * is async and atomic on its one key. An entry past its TTL is gone: `get` misses it and
 * `putIfAbsent` succeeds again.
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
  get(key: string): Promise<Buffer | null>;
  /**
   * Optional, for stores in this process: what `get` would answer, given at once, or `undefined`
   * when the store cannot tell without waiting (then ask `get`). Saves a replay its turns of the
   * promise queue; a store over the network leaves it out.
   */
  peek?(key: string): Buffer | null | undefined;
  /**
   * Keeps `value` for `ttlMs` only if nothing live is kept under `key`. Of callers racing on one absent key exactly one gets `true`.
   * The entry is *held*: a store that evicts to make room must never evict it (a claim evicted is a
   * request run twice); with no room it rejects with `CacheError` Full, as Redis under `noeviction` does.
   */
  putIfAbsent(key: string, value: Buffer, ttlMs: number): Promise<boolean>;
  /**
   * Optional, for stores over the network: `putIfAbsent` and, when the key is taken, `get`, in
   * one round trip. Null when `value` was written (held, as by `putIfAbsent`), else the bytes
   * found. An idempotent route's first request then costs one round trip to claim (`RedisStore`).
   */
  putIfAbsentOrGet?(key: string, value: Buffer, ttlMs: number): Promise<Buffer | null>;
  /**
   * Keeps `value` for `ttlMs`, replacing what is there; with `expect`, only if the current value equals it. Answers whether it wrote.
   * With `expect` the new entry stays held like the one it replaces (a kept answer over its claim, or
   * the claim over itself to renew its lease); without, it is an ordinary entry a store may evict.
   */
  put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Promise<boolean>;
  /** Removes the entry; with `expect`, only if the current value equals it. Answers whether a live entry was removed. */
  del(key: string, opts?: ExpectOptions): Promise<boolean>;
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
