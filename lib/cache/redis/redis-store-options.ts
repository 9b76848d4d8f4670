import type { ConnectionOptions } from 'node:tls';

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
  /**
   * The claims of idempotent requests made in the same turn of the event loop go to Redis as one
   * script call, and so do their keeps (a `put` with `expect`): at most this many in one call, the
   * rest in further calls of the same turn. Fewer commands cost the app and Redis less CPU per
   * request; a call waits at most one turn (as auto-pipelining does). Default 64; 1 sends each on
   * its own. Not used with `cluster` or `replicas`, which send each on its own.
   */
  readonly maxBatch?: number;
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
