import type * as IORedis from 'ioredis';
import type { Cluster, Redis } from 'ioredis';
import type { RedisStoreSettings } from './check-redis-store-options';
import { CacheError } from '../errors';
import type { RedisNode } from './redis-store-options';

/** What the store keeps from the connection's failures besides 'error', for its messages. */
export interface RedisFailures {
  /** A sentinel failed (with `sentinels`). */
  readonly onSentinelError: (err: Error) => void;
  /** A cluster node was lost or refused (with `cluster`): ioredis tells it here, not as 'error'. */
  readonly onNodeError: (err: Error) => void;
}

// Keep trying to come back (every 100 ms, backing off to every second), so the store heals by itself.
export const backOff = (times: number): number => Math.min(times * 100, 1000);

/**
 * The ioredis client of a store: one Redis (from a URL, or the master Sentinel points at) or a
 * Redis Cluster, made to fail fast and never queue. It starts connecting at once.
 */
export function connectRedis(
  settings: RedisStoreSettings,
  failures: RedisFailures,
): Redis | Cluster {
  const ioredis = loadIoredis();
  const { target, access } = settings;
  if (target.kind === 'cluster')
    return connectCluster(ioredis, target.nodes, settings, failures.onNodeError);
  if (target.kind === 'sentinels')
    return connectSentinels(ioredis, target, settings, failures.onSentinelError);
  return new ioredis.Redis(target.url, {
    ...failFast(settings.commandTimeoutMs),
    ...access.nodes,
    ...(access.tls === undefined ? {} : { tls: access.tls }),
    retryStrategy: backOff,
  });
}

/** ioredis, an optional peer: refused with the command that installs it when it is not there. */
function loadIoredis(): typeof IORedis {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by the first store built, not by requiring fw-http or fw-http/cache: an app that never uses Redis neither installs nor loads ioredis
    return require('ioredis') as typeof IORedis;
  } catch (err) {
    throw new CacheError(
      'CachePeerMissing',
      'RedisStore needs the ioredis package (an optional peer dependency): npm install ioredis',
      { cause: err },
    );
  }
}

function connectSentinels(
  ioredis: typeof IORedis,
  { sentinels, name }: { readonly sentinels: RedisNode[]; readonly name: string },
  { access, commandTimeoutMs }: RedisStoreSettings,
  onSentinelError: (err: Error) => void,
): Redis {
  const redis = new ioredis.Redis({
    ...failFast(commandTimeoutMs),
    ...access.nodes,
    ...access.sentinels,
    // One TLS setting for the sentinels and the servers: ioredis's enableTLSForSentinelMode
    // makes it use `tls` for the master it is pointed at, sentinelTLS is for the sentinels.
    ...(access.tls === undefined
      ? {}
      : { tls: access.tls, sentinelTLS: access.tls, enableTLSForSentinelMode: true }),
    retryStrategy: backOff,
    sentinels,
    name,
    sentinelRetryStrategy: backOff,
    sentinelCommandTimeout: commandTimeoutMs,
    // Told by the sentinels of a new master (+switch-master), the store reconnects to it at
    // once rather than at its next failed command.
    failoverDetector: true,
  });
  redis.on('sentinelError', onSentinelError);
  return redis;
}

/** The settings of a connection to one Redis (a URL, or behind Sentinel) that fails fast. */
function failFast(commandTimeoutMs: number) {
  return {
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
}

function connectCluster(
  ioredis: typeof IORedis,
  nodes: RedisNode[],
  { access, commandTimeoutMs }: RedisStoreSettings,
  onNodeError: (err: Error) => void,
): Cluster {
  const cluster = new ioredis.Cluster(nodes, {
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
  cluster.on('node error', onNodeError);
  // ioredis connects to a node at its first command and, with no offline queue, refuses
  // every other command sent to it while that connection is being made: connect to each
  // node as soon as the cluster knows it, so a burst of first commands finds it up.
  cluster.on('+node', (node: Redis) => {
    if (node.status === 'wait') node.connect().catch(() => undefined);
  });
  return cluster;
}
