import type { ConnectionOptions } from 'node:tls';
import { checkPositive, checkWhole, type OptionOwner } from '../../options';
import { CacheError, invalidArgument } from '../errors';

const REDIS: OptionOwner = { where: 'RedisStore', refuse: invalidArgument };
import type { RedisNode, RedisStoreOptions } from './redis-store-options';

/** The options of a `RedisStore`, checked, with their defaults: what the store is built from. */
export interface RedisStoreSettings {
  readonly target: RedisTarget;
  readonly access: RedisAccess;
  readonly keyPrefix: string;
  readonly commandTimeoutMs: number;
  /** Null when no write waits for replicas. */
  readonly replicas: ReplicaSettings | null;
  /** At most how many claims (or keeps) of one turn go in one script call. */
  readonly maxBatch: number;
  /** Where the store connects, for messages (never a password). */
  readonly where: string;
}

/** The credentials and TLS options, checked; only those given, as ioredis takes them. */
export interface RedisAccess {
  readonly nodes: { readonly username?: string; readonly password?: string };
  readonly sentinels: { readonly sentinelUsername?: string; readonly sentinelPassword?: string };
  readonly tls: ConnectionOptions | undefined;
}

/** Where the store connects, checked. */
export type RedisTarget =
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: RedisNode[] }
  | { readonly kind: 'sentinels'; readonly sentinels: RedisNode[]; readonly name: string };

/** How many replicas a claim or keep waits for, and how long (`WAIT`'s arguments). */
export interface ReplicaSettings {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * Checks every option of `new RedisStore(…)` before anything connects: a bad one throws
 * `InvalidArgument` naming it, and no connection is left behind to close.
 */
export function checkRedisStoreOptions(options: RedisStoreOptions): RedisStoreSettings {
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
  checkPositive(REDIS, 'commandTimeoutMs', commandTimeoutMs, { unit: 'ms' });
  const replicas = checkReplicas(options, target, commandTimeoutMs);
  const maxBatch = checkWhole(REDIS, 'maxBatch', options.maxBatch ?? 64, { min: 1 });
  return {
    target,
    access,
    keyPrefix,
    commandTimeoutMs,
    replicas,
    maxBatch,
    where: describeTarget(target),
  };
}

/**
 * `replicas` and `replicaTimeoutMs`, checked: null when no write waits for replicas. A Cluster is
 * refused: its writes go to many masters, and a WAIT counts one connection's.
 */
function checkReplicas(
  options: RedisStoreOptions,
  target: RedisTarget,
  commandTimeoutMs: number,
): ReplicaSettings | null {
  const replicas = checkWhole(REDIS, 'replicas', options.replicas ?? 0, { min: 0 });
  const timeoutMs = checkWhole(
    REDIS,
    'replicaTimeoutMs',
    options.replicaTimeoutMs ?? Math.floor(commandTimeoutMs / 2),
    { unit: 'ms', min: 1, below: commandTimeoutMs, belowName: 'commandTimeoutMs' },
  );
  if (replicas === 0) return null;
  if (target.kind === 'cluster')
    throw new CacheError(
      'InvalidArgument',
      'RedisStore: replicas is not offered with cluster (a WAIT counts the writes of one connection to one master); give url or sentinels',
    );
  return { replicas, timeoutMs };
}

/** Checks that exactly one of url, cluster and sentinels (with name) is given, each well formed. */
function checkTarget(options: RedisStoreOptions): RedisTarget {
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
function checkAccess(options: RedisStoreOptions, target: RedisTarget): RedisAccess {
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
  const tls = checkTls(o.tls);
  return {
    nodes: {
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
    },
    sentinels: {
      ...(sentinelUsername === undefined ? {} : { sentinelUsername }),
      ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
    },
    tls,
  };
}

/** The `tls` option as ioredis takes it: a copy of the options given, or none. */
function checkTls(tls: unknown): ConnectionOptions | undefined {
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
  // true is TLS with node's defaults (the system's CAs, the name checked): ioredis takes `{}`.
  return tls === undefined ? undefined : tls === true ? {} : { ...(tls as ConnectionOptions) };
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
function describeTarget(target: RedisTarget): string {
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
