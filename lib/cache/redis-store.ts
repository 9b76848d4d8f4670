import type { ConnectionOptions } from 'node:tls';
import type * as IORedis from 'ioredis';
import type { Cluster, Redis } from 'ioredis';
import { checkBytes, checkTtlMs } from './check-args';
import { redisWarnings } from './redis-warnings';
import { ReplicaWait } from './replica-wait';
import { CacheError } from './errors';
import type { ExpectOptions, Store } from './store';
import { defineRateCommands, type RateCommands } from './rate-scripts';
import { rateKey, validRule, type RateCount, type RateRule, type RateStore } from './rate-store';

/** One Redis server of a Cluster, or one Sentinel: where to reach it. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

interface CommonOptions {
  /** Put in front of every key, so several programs can share one Redis database. Default `''`. */
  readonly keyPrefix?: string;
  /** How long one operation may take, connecting included, before it fails `Unavailable`. Default 1000. */
  readonly commandTimeoutMs?: number;
  /** The ACL user on the Redis servers (not the sentinels). With `url`, only if the URL names none. */
  readonly username?: string;
  /** The password of the Redis servers (not the sentinels). With `url`, only if the URL holds none. */
  readonly password?: string;
  /**
   * Connect over TLS: `true` (the system's CAs, the host name checked) or `tls.connect` options such
   * as `{ ca }`. Behind Sentinel it is used for the sentinels and for the servers alike.
   */
  readonly tls?: true | ConnectionOptions;
  /**
   * How many replicas must hold a write before it counts: every claim and keep (a `put`,
   * `putIfAbsent` that wrote) is followed by `WAIT replicas replicaTimeoutMs`, so a claim or an
   * answer acknowledged to the program survives a failover to one of them. Fewer acknowledgements
   * within `replicaTimeoutMs` fail the write `Unavailable` (an idempotent route answers 503): the
   * store fails closed. Default 0 (no WAIT). Not with `cluster`.
   */
  readonly replicas?: number;
  /** How long a write waits for its replicas (`WAIT`'s timeout). Default half of `commandTimeoutMs`; less than it. */
  readonly replicaTimeoutMs?: number;
}

/** Credentials of the sentinels themselves (their `requirepass`/ACL), not of the servers they watch. */
interface SentinelAuth {
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

/**
 * Options of `new RedisStore(…)`: where Redis is, given exactly one way (a URL, the nodes of a
 * Redis Cluster, or the Sentinels watching a master), and what is common to the three.
 */
export type RedisStoreOptions = CommonOptions &
  (
    | {
        /** One Redis, e.g. `redis://127.0.0.1:6379/0` (user, password and db as ioredis reads them). */
        readonly url: string;
        readonly cluster?: never;
        readonly sentinels?: never;
        readonly name?: never;
        readonly sentinelUsername?: never;
        readonly sentinelPassword?: never;
      }
    | {
        /** Some nodes of a Redis Cluster (any of them; the others are found from these). */
        readonly cluster: readonly RedisNode[];
        readonly url?: never;
        readonly sentinels?: never;
        readonly name?: never;
        readonly sentinelUsername?: never;
        readonly sentinelPassword?: never;
      }
    | (SentinelAuth & {
        /** Sentinels watching the master named `name`; the store follows it through a failover. */
        readonly sentinels: readonly RedisNode[];
        /** The master group the sentinels watch (`sentinel monitor <name> …`), e.g. `mymaster`. */
        readonly name: string;
        readonly url?: never;
        readonly cluster?: never;
      })
  );

/** The credentials and TLS options, checked; only those given, as ioredis takes them. */
interface Access {
  readonly nodes: { readonly username?: string; readonly password?: string };
  readonly sentinels: { readonly sentinelUsername?: string; readonly sentinelPassword?: string };
  readonly tls: ConnectionOptions | undefined;
}

/** Where the store connects, checked. */
type Target =
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: RedisNode[] }
  | { readonly kind: 'sentinels'; readonly sentinels: RedisNode[]; readonly name: string };

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
// first request under a key writes its claim, a retry reads the record it finds.
const CLAIM_OR_GET = `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;
const DEL_IF_EQUAL = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** The commands `defineCommand` adds (run by EVALSHA, falling back to EVAL after a Redis restart). */
interface ScriptCommands {
  fwPutIfEqual(key: string, expect: Buffer, value: Buffer, ttlMs: number): Promise<number>;
  fwDelIfEqual(key: string, expect: Buffer): Promise<number>;
  fwClaimOrGetBuffer(key: string, value: Buffer, ttlMs: number): Promise<Buffer | null>;
}

/** The connection whose writes wait for replicas, and its WAIT. */
interface Durable {
  readonly client: Redis & ScriptCommands;
  readonly wait: ReplicaWait;
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

  constructor(options: RedisStoreOptions) {
    const target = checkTarget(options);
    const access = checkAccess(options, target);
    const keyPrefix = options.keyPrefix ?? '';
    const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
    if (typeof keyPrefix !== 'string') {
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: keyPrefix must be a string, got ${String(keyPrefix)}`,
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
    const replicas = checkReplicas(options, target, commandTimeoutMs);
    this.#prefix = keyPrefix;
    this.#timeoutMs = commandTimeoutMs;
    this.#where = describeTarget(target);
    this.#viaSentinels = target.kind === 'sentinels';
    // Keep trying to come back (every 100 ms, backing off to every second), so the store heals by itself.
    const backOff = (times: number): number => Math.min(times * 100, 1000);
    const failFast = {
      // Fail, never queue: an operation that finds no connection waits for one in #whenReady,
      // bounded by its deadline, and is never handed to ioredis to send later. Commands caught by
      // a lost connection are not resent and fail at the first reconnect attempt.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      // close() only drops the socket when it is not connected; waiting long for a socket that
      // already failed would just hold the process open.
      disconnectTimeout: 200,
      // Commands asked for in one turn of the event loop leave in one write (one syscall, and
      // Redis reads them in one go): under load a claim shares its round trip with others.
      enableAutoPipelining: true,
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by the first store built, not by requiring fw-http or fw-http/cache: an app that never uses Redis never loads ioredis (cold start)
    const ioredis = require('ioredis') as typeof IORedis;
    let redis: Client;
    if (target.kind === 'cluster') {
      redis = new ioredis.Cluster(target.nodes, {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: backOff,
        // A command refused (CLUSTERDOWN) or caught by a lost node fails now rather than being
        // sent again later: it may have run, and a claim reported failed must not land after.
        // MOVED and ASK are still followed (the command did not run), up to 16 redirections.
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        slotsRefreshTimeout: commandTimeoutMs,
        // The connections to each node: no retry of their own (the cluster finds the node again
        // from its slots), each connect and command bounded by the store's timeout.
        redisOptions: {
          ...access.nodes,
          ...(access.tls === undefined ? {} : { tls: access.tls }),
          autoResendUnfulfilledCommands: false,
          maxRetriesPerRequest: 0,
          commandTimeout: commandTimeoutMs,
          connectTimeout: commandTimeoutMs,
          disconnectTimeout: 200,
        },
      });
      // A node lost or refusing is told here, not as 'error': keep it for messages.
      redis.on('node error', (err: Error) => {
        this.#lastError = err;
        // A refused connection is reported twice, why and then "Connection is closed.": keep why.
        if (this.#nodeError === null || !err.message.startsWith('Connection is closed'))
          this.#nodeError = err;
      });
      // ioredis connects to a node at its first command and, with no offline queue, refuses
      // every other command sent to it while that connection is being made: connect to each
      // node as soon as the cluster knows it, so a burst of first commands finds it up.
      redis.on('+node', (node: Redis) => {
        if (node.status === 'wait') node.connect().catch(() => undefined);
      });
    } else if (target.kind === 'sentinels') {
      redis = new ioredis.Redis({
        ...failFast,
        ...access.nodes,
        ...access.sentinels,
        // One TLS setting for the sentinels and the servers: ioredis's enableTLSForSentinelMode
        // makes it use `tls` for the master it is pointed at, sentinelTLS is for the sentinels.
        ...(access.tls === undefined
          ? {}
          : { tls: access.tls, sentinelTLS: access.tls, enableTLSForSentinelMode: true }),
        retryStrategy: backOff,
        sentinels: target.sentinels,
        name: target.name,
        sentinelRetryStrategy: backOff,
        sentinelCommandTimeout: commandTimeoutMs,
        // Told by the sentinels of a new master (+switch-master), the store reconnects to it at
        // once rather than at its next failed command.
        failoverDetector: true,
      });
      redis.on('sentinelError', (err: Error) => {
        this.#lastError = err;
      });
    } else {
      redis = new ioredis.Redis(target.url, {
        ...failFast,
        ...access.nodes,
        ...(access.tls === undefined ? {} : { tls: access.tls }),
        retryStrategy: backOff,
      });
    }
    defineScripts(redis);
    // Without a listener ioredis prints every failed reconnect; the last error goes into messages instead.
    const onError = (err: Error): void => {
      this.#lastError = err;
    };
    redis.on('error', onError);
    const wakeAll = (): void => {
      this.#lastError = this.#nodeError = null;
      const waiting = [...this.#waiting];
      this.#waiting.clear();
      for (const wake of waiting) wake();
    };
    this.#durable =
      replicas === null ? null : durableConnection(redis as Redis, replicas, onError, wakeAll);
    if (target.kind === 'cluster') {
      const cluster = redis as Cluster;
      cluster.on('ready', () => {
        this.#holding = true;
        void mastersUp(cluster, commandTimeoutMs).then(() => {
          this.#holding = false;
          wakeAll();
        });
      });
    } else {
      redis.on('ready', wakeAll);
    }
    this.#redis = redis as Client & ScriptCommands;
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
  async putIfAbsentOrGet(key: string, value: Buffer, ttlMs: number): Promise<Buffer | null> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const durable = this.#durable;
    if (durable === null)
      return this.#run('putIfAbsentOrGet', key, (k) =>
        this.#redis.fwClaimOrGetBuffer(k, value, ms),
      );
    return this.#run(
      'putIfAbsentOrGet',
      key,
      async (k) => {
        const found = await durable.client.fwClaimOrGetBuffer(k, value, ms);
        if (found === null) await this.#replicated(durable, k, value);
        return found;
      },
      durable.client,
    );
  }

  async put(key: string, value: Buffer, ttlMs: number, opts?: ExpectOptions): Promise<boolean> {
    checkBytes(value, key);
    const ms = checkTtlMs(ttlMs, key);
    const expect = opts?.expect;
    if (expect !== undefined) checkBytes(expect, key, 'expect');
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
}

/**
 * `replicas` and `replicaTimeoutMs`, checked: null when no write waits for replicas. A Cluster is
 * refused: its writes go to many masters, and a WAIT counts one connection's.
 */
function checkReplicas(
  options: RedisStoreOptions,
  target: Target,
  commandTimeoutMs: number,
): { readonly replicas: number; readonly timeoutMs: number } | null {
  const replicas: unknown = options.replicas ?? 0;
  const timeoutMs: unknown = options.replicaTimeoutMs ?? Math.floor(commandTimeoutMs / 2);
  if (typeof replicas !== 'number' || !Number.isSafeInteger(replicas) || replicas < 0)
    throw new CacheError(
      'InvalidArgument',
      `RedisStore: replicas must be a whole number from 0, got ${String(replicas)}`,
    );
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isSafeInteger(timeoutMs) ||
    timeoutMs <= 0 ||
    timeoutMs >= commandTimeoutMs
  )
    throw new CacheError(
      'InvalidArgument',
      `RedisStore: replicaTimeoutMs must be a whole number of ms from 1 to less than commandTimeoutMs (${commandTimeoutMs}), got ${String(timeoutMs)}`,
    );
  if (replicas === 0) return null;
  if (target.kind === 'cluster')
    throw new CacheError(
      'InvalidArgument',
      'RedisStore: replicas is not offered with cluster (a WAIT counts the writes of one connection to one master); give url or sentinels',
    );
  return { replicas, timeoutMs };
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

/** Checks that exactly one of url, cluster and sentinels (with name) is given, each well formed. */
function checkTarget(options: RedisStoreOptions): Target {
  const given = (['url', 'cluster', 'sentinels'] as const).filter(
    (k) => (options as unknown as Partial<Record<string, unknown>> | undefined)?.[k] !== undefined,
  );
  if (given.length > 1) {
    throw new CacheError(
      'InvalidArgument',
      `RedisStore: give exactly one of url, cluster or sentinels, not ${given.join(' and ')}`,
    );
  }
  const name: unknown = (options as { name?: unknown } | undefined)?.name;
  if (given[0] === 'cluster') {
    if (name !== undefined) throw onlyWithSentinels();
    return { kind: 'cluster', nodes: checkNodes('cluster', options.cluster) };
  }
  if (given[0] === 'sentinels') {
    if (typeof name !== 'string' || name === '') {
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: name must be the master group the sentinels watch (sentinel monitor <name> …), such as "mymaster", got ${JSON.stringify(name)}`,
      );
    }
    return { kind: 'sentinels', sentinels: checkNodes('sentinels', options.sentinels), name };
  }
  const url: unknown = options?.url;
  if (typeof url !== 'string' || url === '') {
    throw new CacheError(
      'InvalidArgument',
      'RedisStore: url must be a non-empty string such as redis://127.0.0.1:6379',
    );
  }
  if (name !== undefined) throw onlyWithSentinels();
  return { kind: 'url', url };
}

/**
 * Checks username, password, sentinelUsername, sentinelPassword and tls. A message names the
 * option and the type of a bad value, never the value (it may be a password). With `url`, a
 * username or password also in the URL is refused: which one wins would be a guess.
 */
function checkAccess(options: RedisStoreOptions, target: Target): Access {
  const o = options as unknown as Partial<Record<string, unknown>>;
  const text = (option: string): string | undefined => {
    const value = o[option];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') {
      const kind = value === '' ? 'empty string' : Array.isArray(value) ? 'array' : typeof value;
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: ${option} must be a non-empty string, got ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`,
      );
    }
    return value;
  };
  const username = text('username');
  const password = text('password');
  const sentinelUsername = text('sentinelUsername');
  const sentinelPassword = text('sentinelPassword');
  if (target.kind !== 'sentinels') {
    for (const option of ['sentinelPassword', 'sentinelUsername']) {
      if (o[option] !== undefined) {
        throw new CacheError(
          'InvalidArgument',
          `RedisStore: ${option} is for the sentinels and goes only with sentinels`,
        );
      }
    }
  }
  // ioredis takes the URL's user and password over options, both of them as soon as it holds
  // either (an empty one included): an option beside credentials in the URL would be dropped.
  if (target.kind === 'url' && urlHasCredentials(target.url)) {
    const option = password !== undefined ? 'password' : username !== undefined ? 'username' : null;
    if (option !== null) {
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: ${option} is given as an option but url holds credentials too: give username and password all in url or all as options`,
      );
    }
  }
  const tls = o.tls;
  if (
    tls !== undefined &&
    tls !== true &&
    (typeof tls !== 'object' || tls === null || Array.isArray(tls))
  ) {
    throw new CacheError(
      'InvalidArgument',
      `RedisStore: tls must be true or tls.ConnectionOptions (such as { ca }), got ${Array.isArray(tls) ? 'an array' : String(tls)}`,
    );
  }
  return {
    nodes: {
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
    },
    sentinels: {
      ...(sentinelUsername === undefined ? {} : { sentinelUsername }),
      ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
    },
    // true is TLS with node's defaults (the system's CAs, the name checked): ioredis takes `{}`.
    tls: tls === undefined ? undefined : tls === true ? {} : { ...(tls as ConnectionOptions) },
  };
}

/** Whether the URL holds a user or a password (as ioredis reads it: any scheme, or none). */
function urlHasCredentials(url: string): boolean {
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `redis://${url}`);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

function onlyWithSentinels(): CacheError {
  return new CacheError(
    'InvalidArgument',
    'RedisStore: name is the master group of sentinels and goes only with sentinels',
  );
}

/** A fresh copy of a list of `{ host, port }`, each checked, naming the option and index of a bad one. */
function checkNodes(option: 'cluster' | 'sentinels', nodes: unknown): RedisNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new CacheError(
      'InvalidArgument',
      `RedisStore: ${option} must be a non-empty array of { host, port }`,
    );
  }
  return nodes.map((node: unknown, i) => {
    const { host, port } = (node ?? {}) as { host?: unknown; port?: unknown };
    if (
      typeof host !== 'string' ||
      host === '' ||
      typeof port !== 'number' ||
      !Number.isInteger(port) ||
      port < 1 ||
      port > 65535
    ) {
      throw new CacheError(
        'InvalidArgument',
        `RedisStore: ${option}[${i}] must be { host: a non-empty string, port: a whole number from 1 to 65535 }, got ${JSON.stringify(node)}`,
      );
    }
    return { host, port };
  });
}

/** Where the store connects, for messages (never a password). */
function describeTarget(target: Target): string {
  const list = (nodes: RedisNode[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (target.kind === 'cluster') return `cluster ${list(target.nodes)}`;
  if (target.kind === 'sentinels') return `sentinel ${target.name} via ${list(target.sentinels)}`;
  return redactUrl(target.url);
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
