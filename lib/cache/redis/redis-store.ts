import type { Cluster, Redis } from 'ioredis';
import { checkBytes, checkTtlMs } from '../check-args';
import { redisWarnings } from './redis-warnings';
import { ReplicaWait } from './replica-wait';
import { CacheError } from '../errors';
import type { ExpectOptions, Store } from '../store';
import { defineRateCommands, type RateCommands } from './rate-scripts';
import { rateKey, validRule, type RateCount, type RateRule, type RateStore } from '../rate-store';
import { checkRedisStoreOptions } from './check-redis-store-options';
import { backOff, connectRedis } from './connect-redis';
import { reconnectAfterEnd } from './reconnect-after-end';
import { ScriptBatch, type ReplyReader, type ScriptArg } from './script-batch';
import { CLAIM, CLAIM_OR_KEEP_EACH, KEEP } from './claim-or-keep-each';
import { tokenOfMicros } from '../fence-token';
import type { RedisStoreOptions } from './redis-store-options';

// Compare-and-set and compare-and-delete must read and write in one step, or a holder whose
// entry expired could overwrite or delete the next holder's value between the two. A Lua script
// runs atomically; Lua strings are byte strings, so `==` compares the bytes exactly.
const PUT_IF_EQUAL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`;
// The claim of an idempotent request and the read of what holds its key, in one round trip: the
// first request under a key writes its claim and gets the server's clock in microseconds (its
// fencing token, see claim-or-keep-each.ts), a retry reads the record it finds.
const CLAIM_OR_GET = `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local t = redis.call('TIME')
return t[1] * 1000000 + t[2]`;
const DEL_IF_EQUAL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** The commands `defineCommand` adds (run by EVALSHA, falling back to EVAL after a Redis restart). */
interface ScriptCommands {
  fwPutIfEqual(key: string, expect: Buffer, value: Buffer, ttlMs: number): Promise<number>;
  fwDelIfEqual(key: string, expect: Buffer): Promise<number>;
  /** The bytes found, or the server's clock in microseconds when the claim was written. */
  fwClaimOrGetBuffer(key: string, value: Buffer, ttlMs: number): Promise<Buffer | number>;
  fwClaimOrKeepEachBuffer(numKeys: number, ...keysThenArgs: ScriptArg[]): Promise<unknown[]>;
}

/** The connection whose writes wait for replicas, and its WAIT. */
interface Durable {
  readonly client: Redis & ScriptCommands;
  readonly wait: ReplicaWait;
}

/** A kind of the batch script: how its reply element reads, and the operation its failures name. */
interface BatchReader<T> extends ReplyReader<T> {
  readonly op: string;
  readonly kind: string;
}

/** The batch's claim and keep readers, their failures made by `failure`. */
function readersNaming(failure: (op: string, prefixed: string, err: unknown) => CacheError) {
  return {
    claim: {
      op: 'claim',
      kind: CLAIM,
      read: fencedOrFound,
      fail: (err: unknown, prefixed: string) => failure('claim', prefixed, err),
    },
    claimOrGet: {
      op: 'putIfAbsentOrGet',
      kind: CLAIM,
      read: (reply: unknown) => (typeof reply === 'number' ? null : (reply as Buffer)),
      fail: (err: unknown, prefixed: string) => failure('putIfAbsentOrGet', prefixed, err),
    },
    keep: {
      op: 'put',
      kind: KEEP,
      read: (reply: unknown) => reply === 1,
      fail: (err: unknown, prefixed: string) => failure('put', prefixed, err),
    },
  } satisfies Record<string, BatchReader<unknown>>;
}

/** A claim's reply element: the token of the server's clock when it wrote, else the bytes found. */
function fencedOrFound(reply: unknown): bigint | Buffer {
  return typeof reply === 'number' ? tokenOfMicros(reply) : (reply as Buffer);
}

/** One Redis (from a URL, or the master Sentinel points at) or a Redis Cluster: the same commands. */
type Client = Redis | Cluster;

/**
 * A store in Redis, for entries that must survive a restart of the program and be shared by
 * several instances of it. The claim (`putIfAbsent`) is one `SET key value PX ttl NX`. Redis is
 * one server (`url`), a Redis Cluster (`cluster`) or a master behind Sentinel (`sentinels` and
 * `name`); every operation reads and writes one key, so each runs whole on the master owning it.
 *
 * It fails fast and closed: while Redis cannot be reached every operation rejects with
 * `CacheError` code `Unavailable` within `commandTimeoutMs`, and nothing is queued to be sent
 * later (a claim reported as failed must not land once Redis is back). The connection is made
 * when the store is built and remade in the background after a loss.
 *
 * @example
 * const store = new RedisStore({ url: process.env.REDIS_URL!, keyPrefix: 'shop:' });
 * const orders = Orders.open(store);
 * // or: new RedisStore({ cluster: [{ host: '10.0.0.1', port: 6379 }, { host: '10.0.0.2', port: 6379 }] })
 * // or: new RedisStore({ sentinels: [{ host: '10.0.0.5', port: 26379 }], name: 'mymaster' })
 */
export class RedisStore implements Store, RateStore {
  readonly #redis: Client & ScriptCommands;
  /**
   * With `replicas`: the connection claims and keeps are written on, each followed by a `WAIT`
   * (which blocks its connection, so reads go on the other); null without.
   */
  readonly #durable: Durable | null;
  /** Null on a Cluster (a batch's keys live on many masters), with `replicas`, or `maxBatch: 1`. */
  readonly #batch: ScriptBatch | null;
  /** How the batch's claims and keeps read their replies and name their failures. */
  readonly #readers: {
    readonly claim: BatchReader<bigint | Buffer>;
    readonly claimOrGet: BatchReader<Buffer | null>;
    readonly keep: BatchReader<boolean>;
  };
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #where: string;
  /** Operations waiting for the connection to become ready. */
  readonly #waiting = new Set<() => void>();
  #lastError: Error | null = null;
  /** The last error a cluster node reported, kept to explain the cluster's "Failed to refresh slots cache." */
  #nodeError: Error | null = null;
  readonly #viaSentinels: boolean;
  /** A cluster is ready but its masters' connections are still being made: operations wait. */
  #holding = false;
  #closed = false;
  /** What stops connecting again the connections ioredis ended (not a Cluster: it has its own). */
  readonly #reconnecting: Array<() => void> = [];

  constructor(options: RedisStoreOptions) {
    const settings = checkRedisStoreOptions(options);
    this.#prefix = settings.keyPrefix;
    this.#timeoutMs = settings.commandTimeoutMs;
    this.#where = settings.where;
    this.#viaSentinels = settings.target.kind === 'sentinels';
    // Without a listener ioredis prints every failed reconnect; the last error goes into messages instead.
    const onError = (err: Error): void => {
      this.#lastError = err;
    };
    const redis = connectRedis(settings, {
      onSentinelError: onError,
      onNodeError: (err) => {
        this.#lastError = err;
        // A refused connection is reported twice, why and then "Connection is closed.": keep why.
        if (this.#nodeError === null || !err.message.startsWith('Connection is closed'))
          this.#nodeError = err;
      },
    });
    defineScripts(redis);
    redis.on('error', onError);
    const wakeAll = (): void => {
      this.#lastError = this.#nodeError = null;
      const waiting = [...this.#waiting];
      this.#waiting.clear();
      for (const wake of waiting) wake();
    };
    const replicas = settings.replicas;
    this.#durable =
      replicas === null ? null : durableConnection(redis as Redis, replicas, onError, wakeAll);
    if (this.#durable !== null)
      this.#reconnecting.push(
        reconnectAfterEnd(this.#durable.client, () => !this.#closed, backOff),
      );
    if (settings.target.kind === 'cluster') {
      const cluster = redis as Cluster;
      cluster.on('ready', () => {
        this.#holding = true;
        void mastersUp(cluster, settings.commandTimeoutMs).then(() => {
          this.#holding = false;
          wakeAll();
        });
      });
    } else {
      redis.on('ready', wakeAll);
      this.#reconnecting.push(reconnectAfterEnd(redis as Redis, () => !this.#closed, backOff));
    }
    this.#redis = redis as Client & ScriptCommands;
    const batched =
      settings.target.kind !== 'cluster' && replicas === null && settings.maxBatch > 1;
    this.#batch = batched ? batchOn(this.#redis, settings.maxBatch) : null;
    this.#readers = readersNaming((op, prefixed, err) =>
      this.#failure(op, prefixed.slice(this.#prefix.length), err),
    );
  }

  async get(key: string): Promise<Buffer | null> {
    return this.#run('get', key, (k) => this.#redis.getBuffer(k));
  }

  async putIfAbsent(key: string, value: Buffer, ttlMs: number): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const durable = this.#durable;
    if (durable === null)
      return this.#run(
        'putIfAbsent',
        key,
        async (k) => (await this.#redis.set(k, value, 'PX', ms, 'NX')) === 'OK',
      );
    return this.#run(
      'putIfAbsent',
      key,
      async (k) => {
        if ((await durable.client.set(k, value, 'PX', ms, 'NX')) !== 'OK') return false;
        await this.#replicated(durable, k, value);
        return true;
      },
      durable.client,
    );
  }

  /**
   * `putIfAbsent` and, when the key is taken, `get`, in one script call (one round trip): null
   * when `value` was written, else the bytes found. With `replicas`, a write waits as a claim does.
   */
  putIfAbsentOrGet(key: string, value: Buffer, ttlMs: number): Promise<Buffer | null> {
    return this.#claimOrGet(this.#readers.claimOrGet, key, value, ttlMs);
  }

  /**
   * `putIfAbsentOrGet` answering, when `value` was written, its fencing token (see `Store.claim`)
   * from Redis's clock: the `TIME` of the master owning the key, read in the script that writes
   * it, so the claims of one key are ordered by one clock whichever instance makes them, with no
   * key of another slot (a Redis Cluster) and no round trip more.
   * @example
   * const won = await store.claim('order:1', claim, 30_000); // 7226051072004096n, or the bytes found
   */
  claim(key: string, value: Buffer, ttlMs: number): Promise<bigint | Buffer> {
    return this.#claimOrGet(this.#readers.claim, key, value, ttlMs);
  }

  #claimOrGet<T>(reader: BatchReader<T>, key: string, value: Buffer, ttlMs: number): Promise<T> {
    let ms;
    try {
      checkBytes(value, key);
      ms = checkTtlMs(ttlMs, key);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const batch = this.#batch;
    if (batch === null) return this.#claimOrGetOne(reader, key, value, ms);
    return this.#batched(batch, reader, key, [value, ms]);
  }

  /** A claim as its own script call (no batches: a Cluster, `replicas` or `maxBatch: 1`). */
  async #claimOrGetOne<T>(
    reader: BatchReader<T>,
    key: string,
    value: Buffer,
    ms: number,
  ): Promise<T> {
    const durable = this.#durable;
    if (durable === null)
      return this.#run(reader.op, key, async (k) =>
        reader.read(await this.#redis.fwClaimOrGetBuffer(k, value, ms)),
      );
    return this.#run(
      reader.op,
      key,
      async (k) => {
        const found = await durable.client.fwClaimOrGetBuffer(k, value, ms);
        if (typeof found === 'number') await this.#replicated(durable, k, value);
        return reader.read(found);
      },
      durable.client,
    );
  }

  put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Promise<boolean> {
    const expect = opts?.expect;
    let ms;
    try {
      checkBytes(value, key);
      ms = checkTtlMs(ttlMs, key);
      if (expect !== undefined) checkBytes(expect, key, 'expect');
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const batch = this.#batch;
    if (batch !== null && expect !== undefined)
      return this.#batched(batch, this.#readers.keep, key, [expect, value, ms]);
    return this.#putOne(key, value, ms, expect);
  }

  /** `put` as its own command: without a claim to compare, or without batches. */
  async #putOne(
    key: string,
    value: Buffer,
    ms: number,
    expect: Buffer | undefined,
  ): Promise<boolean> {
    const durable = this.#durable;
    const client = durable === null ? this.#redis : durable.client;
    return this.#run(
      'put',
      key,
      async (k) => {
        const wrote =
          expect === undefined
            ? (await client.set(k, value, 'PX', ms)) === 'OK'
            : (await client.fwPutIfEqual(k, expect, value, ms)) === 1;
        // A kept answer the replicas may not hold is refused like one Redis did not take: the
        // idempotent route sends it but marks it not kept (retries to this process get 503).
        if (wrote && durable !== null) await durable.wait.acked();
        return wrote;
      },
      client,
    );
  }

  async del(key: string, opts?: ExpectOptions): Promise<boolean> {
    const expect = opts?.expect;
    if (expect === undefined)
      return this.#run('del', key, async (k) => (await this.#redis.del(k)) > 0);
    checkBytes(expect, key, 'expect');
    return this.#run('del', key, async (k) => (await this.#redis.fwDelIfEqual(k, expect)) > 0);
  }

  /** Resolves once the replicas hold the claim `value` just written; else takes it back and rejects. */
  async #replicated(durable: Durable, k: string, value: Buffer): Promise<void> {
    await durable.wait.acked().catch((err: unknown) => {
      // A claim the replicas may not hold is taken back (if it is still this one), so the
      // client's retry, told 503, finds the key free rather than held for the lease.
      durable.client.fwDelIfEqual(k, value).catch(() => undefined);
      throw err;
    });
  }

  // ---- Rate limits (RateStore): one script per request on one key, on the same connection. ----
  #rate: RateCommands | null = null;

  /**
   * Counts one request of `key` under `rule` in Redis (see `RateStore.hit`): 0 when admitted, else
   * the milliseconds until it may be. Every instance on this Redis (and key prefix) shares one
   * allowance. Fails `Unavailable` like every other operation while Redis cannot be reached.
   */
  async hit(rule: RateRule, key: string): Promise<number> {
    return (await this.count(rule, key)).waitMs;
  }

  /** `hit` with what is left of the window: the remaining requests and when the count starts afresh. */
  async count(rule: RateRule, key: string): Promise<RateCount> {
    if (!validRule(rule))
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: rate rule "${String(rule?.name)}" needs a positive whole max and windowMs and a window of 'fixed' or 'sliding'`,
      );
    const rate = (this.#rate ??= defineRateCommands(this.#redis));
    const sliding = rule.window === 'sliding';
    const [waitMs, remaining, resetMs] = await this.#run('hit', rateKey(rule, key), (k) =>
      sliding
        ? rate.fwRateSliding(k, rule.max, rule.windowMs)
        : rate.fwRateFixed(k, rule.max, rule.windowMs),
    );
    return { waitMs, remaining, resetMs };
  }
  // ---- end of rate limits ----

  /** Resolves when Redis answers `PING` within `commandTimeoutMs`; rejects `Unavailable` otherwise. */
  async ping(): Promise<void> {
    await this.#run('ping', '(ping)', () => this.#redis.ping());
  }

  /**
   * What the server's settings say against keeping idempotency records (a `maxmemory-policy`
   * other than `noeviction`, a database index in the URL the server does not have), one line
   * each; nothing when it cannot be asked. Apps ask at listen.
   */
  async warnings(): Promise<string[]> {
    const setting = (name: string): Promise<string | null> =>
      this.#run('config', `(${name})`, () => this.#redis.config('GET', name)).then(
        (answer) => (Array.isArray(answer) && typeof answer[1] === 'string' ? answer[1] : null),
        () => null,
      );
    const [policy, databases] = await Promise.all([
      setting('maxmemory-policy'),
      setting('databases'),
    ]);
    const db = (this.#redis as { options?: { db?: number } }).options?.db ?? 0;
    return redisWarnings(this.#where, {
      policy,
      databases: databases === null ? null : Number(databases),
      db,
    });
  }

  /** Sends `QUIT` when connected (so replies in flight still arrive), otherwise drops the socket; later calls fail `Unavailable`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stop of this.#reconnecting) stop();
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
    const durable = this.#durable?.client;
    if (durable !== undefined) {
      if (durable.status === 'ready') await durable.quit().catch(() => undefined);
      durable.disconnect();
    }
    if (this.#redis.status === 'ready') {
      try {
        await this.#redis.quit();
        // Behind Sentinel, QUIT ends the connection to the master but not the ones listening to
        // the sentinels for a failover, which would hold the process open: disconnect() ends those.
        if (!this.#viaSentinels) return;
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
  async #run<T>(
    op: string,
    key: string,
    send: (prefixed: string) => Promise<T>,
    client: Client = this.#redis,
  ): Promise<T> {
    const prefixed = this.#prefix + key;
    try {
      if (this.#closed) throw new Error('the store is closed');
      if (client.status === 'ready' && !this.#holding) return await send(prefixed);
      return await this.#whenReady(client, () => send(prefixed));
    } catch (err) {
      throw this.#failure(op, key, err);
    }
  }

  /**
   * A claim or keep of the batch, its reply element read by `reader`. While the connection is up
   * it is the batch's own promise, which reads the reply and makes the failure: `#run`'s awaits
   * would add promises to every claim and keep. Otherwise it waits as `#run` does.
   */
  #batched<T>(
    batch: ScriptBatch,
    reader: BatchReader<T>,
    key: string,
    args: ScriptArg[],
  ): Promise<T> {
    if (this.#closed || this.#redis.status !== 'ready' || this.#holding)
      return this.#run(reader.op, key, (k) => batch.call(reader.kind, k, args).then(reader.read));
    return batch.call(reader.kind, this.#prefix + key, args, reader);
  }

  /** What an operation that failed rejects with: `Full` when Redis is out of memory, else `Unavailable`. */
  #failure(op: string, key: string, err: unknown): CacheError {
    const why = err instanceof Error ? err.message : String(err);
    // Redis at maxmemory under `noeviction` refuses writes with OOM: the store is up but full.
    const code = why.startsWith('OOM') ? 'Full' : 'Unavailable';
    return new CacheError(code, `RedisStore ${this.#where}: ${op} "${key}" failed: ${why}`, {
      cause: err,
    });
  }

  /**
   * The last error, for messages. A cluster that reached no node says only "Failed to refresh
   * slots cache." (and its lastNodeError often "Connection is closed."): why a node refused
   * (WRONGPASS, a certificate, ECONNREFUSED), told as 'node error', is what the operator needs.
   */
  #lastWhy(): string {
    const e = this.#lastError;
    if (e === null) return '';
    const node = this.#nodeError ?? (e as { lastNodeError?: Error | null }).lastNodeError;
    // Not `instanceof Error`: an error made by node's tls is of another realm under a test runner.
    const more =
      typeof node?.message === 'string' && node !== e && !e.message.includes(node.message)
        ? ` ${node.message}`
        : '';
    return ` (last error: ${e.message}${more})`;
  }

  #whenReady<T>(client: Client, send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wake = (): void => {
        if (this.#closed) {
          clearTimeout(timer);
          reject(new Error('the store is closed'));
          return;
        }
        // Woken by the other connection (with `replicas`, the store has two): wait on for this one.
        if (client.status !== 'ready' && client !== this.#redis) {
          this.#waiting.add(wake);
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
        reject(new Error(`no answer within ${this.#timeoutMs} ms${this.#lastWhy()}`));
      }, this.#timeoutMs);
      this.#waiting.add(wake);
    });
  }
}

/**
 * The connection claims and keeps go on when they wait for replicas: WAIT counts one connection's
 * writes, so those writes go on it and only they. No auto-pipelining there: a pipeline holding a
 * WAIT would hold the next one's writes back too.
 */
function durableConnection(
  redis: Redis,
  replicas: { readonly replicas: number; readonly timeoutMs: number },
  onError: (err: Error) => void,
  onReady: () => void,
): Durable {
  const client = redis.duplicate({ enableAutoPipelining: false });
  defineScripts(client);
  client.on('error', onError);
  client.on('ready', onReady);
  return {
    client: client as Redis & ScriptCommands,
    wait: new ReplicaWait(client, replicas.replicas, replicas.timeoutMs),
  };
}

/** The compare-and-set and compare-and-delete scripts, as commands of `client`. */
function defineScripts(client: Client): void {
  client.defineCommand('fwPutIfEqual', { numberOfKeys: 1, lua: PUT_IF_EQUAL });
  client.defineCommand('fwDelIfEqual', { numberOfKeys: 1, lua: DEL_IF_EQUAL });
  client.defineCommand('fwClaimOrGet', { numberOfKeys: 1, lua: CLAIM_OR_GET });
  client.defineCommand('fwClaimOrKeepEach', { lua: CLAIM_OR_KEEP_EACH });
}

/**
 * The claims and keeps of one turn sent together, at most `max` keys a script call (EVALSHA, sent
 * whole by ioredis when Redis answers NOSCRIPT), on the store's own connection: ioredis's
 * auto-pipelining writes the calls of one turn in one write.
 */
function batchOn(client: Client & ScriptCommands, max: number): ScriptBatch {
  return new ScriptBatch(
    (keys, args) => client.fwClaimOrKeepEachBuffer(keys.length, ...keys, ...args),
    max,
  );
}

/**
 * Resolves once the connection to every master the cluster knows is up, or after `ms` (an
 * operation sent then to a master still down fails `Unavailable`, as it would a moment later).
 */
function mastersUp(cluster: Cluster, ms: number): Promise<void> {
  const pending = cluster.nodes('master').filter((n) => n.status !== 'ready');
  if (pending.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    let left = pending.length;
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      for (const node of pending) node.off('ready', one);
      resolve();
    }
    function one(): void {
      if (--left === 0) done();
    }
    for (const node of pending) node.once('ready', one);
  });
}
