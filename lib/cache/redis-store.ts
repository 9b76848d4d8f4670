import Redis from 'ioredis';
import { checkBytes, checkTtlMs } from './check-args';
import { CacheError } from './errors';
import type { ExpectOptions, Store } from './store';

/** Options of `new RedisStore(…)`. */
export interface RedisStoreOptions {
  /** Where Redis is, e.g. `redis://127.0.0.1:6379/0` (user, password and db as ioredis reads them). */
  readonly url: string;
  /** Put in front of every key, so several programs can share one Redis database. Default `''`. */
  readonly keyPrefix?: string;
  /** How long one operation may take, connecting included, before it fails `Unavailable`. Default 1000. */
  readonly commandTimeoutMs?: number;
}

// Compare-and-set and compare-and-delete must read and write in one step, or a holder whose
// entry expired could overwrite or delete the next holder's value between the two. A Lua script
// runs atomically; Lua strings are byte strings, so `==` compares the bytes exactly.
const PUT_IF_EQUAL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;
const DEL_IF_EQUAL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** The commands `defineCommand` adds (run by EVALSHA, falling back to EVAL after a Redis restart). */
interface ScriptCommands {
  fwPutIfEqual(key: string, expect: Buffer, value: Buffer, ttlMs: number): Promise<number>;
  fwDelIfEqual(key: string, expect: Buffer): Promise<number>;
}

/**
 * A store in Redis, for entries that must survive a restart of the program and be shared by
 * several instances of it. The claim (`putIfAbsent`) is one `SET key value PX ttl NX`.
 *
 * It fails fast and closed: while Redis cannot be reached every operation rejects with
 * `CacheError` code `Unavailable` within `commandTimeoutMs`, and nothing is queued to be sent
 * later (a claim reported as failed must not land once Redis is back). The connection is made
 * when the store is built and remade in the background after a loss.
 *
 * @example
 * const store = new RedisStore({ url: process.env.REDIS_URL!, keyPrefix: 'shop:' });
 * const orders = Orders.open(store);
 */
export class RedisStore implements Store {
  readonly #redis: Redis & ScriptCommands;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #where: string;
  /** Operations waiting for the connection to become ready. */
  readonly #waiting = new Set<() => void>();
  #lastError: Error | null = null;
  #closed = false;

  constructor(options: RedisStoreOptions) {
    const url = options?.url;
    const keyPrefix = options?.keyPrefix ?? '';
    const commandTimeoutMs = options?.commandTimeoutMs ?? 1000;
    if (typeof url !== 'string' || url === '') {
      throw new CacheError(
        'InvalidArgument',
        'RedisStore: url must be a non-empty string such as redis://127.0.0.1:6379',
      );
    }
    if (
      typeof commandTimeoutMs !== 'number' ||
      !Number.isFinite(commandTimeoutMs) ||
      commandTimeoutMs <= 0
    ) {
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: commandTimeoutMs must be a positive number, got ${String(commandTimeoutMs)}`,
      );
    }
    this.#prefix = keyPrefix;
    this.#timeoutMs = commandTimeoutMs;
    this.#where = redactUrl(url);
    const redis = new Redis(url, {
      // Fail, never queue: an operation that finds no connection waits for one in #whenReady,
      // bounded by its deadline, and is never handed to ioredis to send later. Commands caught by
      // a lost connection are not resent and fail at the first reconnect attempt.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      // Keep trying to come back (every 100 ms, backing off to every second), so the store heals by itself.
      retryStrategy: (times) => Math.min(times * 100, 1000),
      // close() only drops the socket when it is not connected; waiting long for a socket that
      // already failed would just hold the process open.
      disconnectTimeout: 200,
    });
    redis.defineCommand('fwPutIfEqual', { numberOfKeys: 1, lua: PUT_IF_EQUAL });
    redis.defineCommand('fwDelIfEqual', { numberOfKeys: 1, lua: DEL_IF_EQUAL });
    // Without a listener ioredis prints every failed reconnect; the last error goes into messages instead.
    redis.on('error', (err: Error) => {
      this.#lastError = err;
    });
    redis.on('ready', () => {
      this.#lastError = null;
      for (const wake of this.#waiting) wake();
      this.#waiting.clear();
    });
    this.#redis = redis as Redis & ScriptCommands;
  }

  async get(key: string): Promise<Buffer | null> {
    return this.#run('get', key, (k) => this.#redis.getBuffer(k));
  }

  async putIfAbsent(key: string, value: Buffer, ttlMs: number): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    return this.#run(
      'putIfAbsent',
      key,
      async (k) => (await this.#redis.set(k, value, 'PX', ms, 'NX')) === 'OK',
    );
  }

  async put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const expect = opts?.expect;
    if (expect === undefined) {
      return this.#run(
        'put',
        key,
        async (k) => (await this.#redis.set(k, value, 'PX', ms)) === 'OK',
      );
    }
    checkBytes(expect, key, 'expect');
    return this.#run(
      'put',
      key,
      async (k) => (await this.#redis.fwPutIfEqual(k, expect, value, ms)) === 1,
    );
  }

  async del(key: string, opts?: ExpectOptions): Promise<boolean> {
    const expect = opts?.expect;
    if (expect === undefined)
      return this.#run('del', key, async (k) => (await this.#redis.del(k)) > 0);
    checkBytes(expect, key, 'expect');
    return this.#run('del', key, async (k) => (await this.#redis.fwDelIfEqual(k, expect)) > 0);
  }

  /** Resolves when Redis answers `PING` within `commandTimeoutMs`; rejects `Unavailable` otherwise. */
  async ping(): Promise<void> {
    await this.#run('ping', '(ping)', () => this.#redis.ping());
  }

  /** Sends `QUIT` when connected (so replies in flight still arrive), otherwise drops the socket; later calls fail `Unavailable`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
    if (this.#redis.status === 'ready') {
      try {
        await this.#redis.quit();
        return;
      } catch {
        // Lost while quitting: dropping the socket below is all that is left to do.
      }
    }
    this.#redis.disconnect();
  }

  /**
   * Runs one operation, turning every failure into `Unavailable`. When connected it goes straight
   * to Redis (ioredis's `commandTimeout` bounds it); otherwise it waits for the connection, and
   * one deadline bounds the wait and the command together.
   */
  async #run<T>(op: string, key: string, send: (prefixed: string) => Promise<T>): Promise<T> {
    const prefixed = this.#prefix + key;
    try {
      if (this.#closed) throw new Error('the store is closed');
      if (this.#redis.status === 'ready') return await send(prefixed);
      return await this.#whenReady(() => send(prefixed));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      // Redis at maxmemory under `noeviction` refuses writes with OOM: the store is up but full.
      if (why.startsWith('OOM'))
        throw new CacheError('Full', `RedisStore ${this.#where}: ${op} "${key}" failed: ${why}`, {
          cause: err,
        });
      throw new CacheError(
        'Unavailable',
        `RedisStore ${this.#where}: ${op} "${key}" failed: ${why}`,
        { cause: err },
      );
    }
  }

  #whenReady<T>(send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wake = (): void => {
        if (this.#closed) {
          clearTimeout(timer);
          reject(new Error('the store is closed'));
          return;
        }
        send().then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err);
          },
        );
      };
      const timer = setTimeout(() => {
        // Taken out of the waiting set, so a long outage does not pile up waiters.
        this.#waiting.delete(wake);
        const last = this.#lastError === null ? '' : ` (last error: ${this.#lastError.message})`;
        reject(new Error(`no answer within ${this.#timeoutMs} ms${last}`));
      }, this.#timeoutMs);
      this.#waiting.add(wake);
    });
  }
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable url)';
  }
}
