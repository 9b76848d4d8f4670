import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  cliWith,
  killProcess,
  portArgs,
  processGroup,
  requireBin,
  serverArgs,
  tlsArgs,
  waitFor,
  type Access,
  type RedisProcess,
  type TlsFiles,
} from './redis-process';

/** One master, one replica and one sentinel watching them, started for a test on loopback ports. */
export interface RedisSentinelSetup {
  /** The master group name the sentinel watches. */
  readonly name: string;
  /** The sentinels, as `new RedisStore({ sentinels, name })` takes them. */
  readonly sentinels: ReadonlyArray<{ host: string; port: number }>;
  readonly masterPort: number;
  readonly replicaPort: number;
  /** SIGKILLs the master by pid, as a crash would. */
  killMaster(): Promise<void>;
  /** Resolves once the replica has every write the master took so far (their offsets match). */
  replicated(): Promise<void>;
  /** The master's port as the sentinel reports it now. */
  currentMaster(): Promise<number>;
  /** Stops every process still running (SIGTERM by pid) and removes the dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartSentinelOptions {
  /** How long the master may be silent before the sentinel calls it down. Default 1000. */
  readonly downAfterMs?: number;
  /** The sentinel's failover-timeout. Default 3000. */
  readonly failoverTimeoutMs?: number;
  /** The master's and replica's `requirepass` and `masterauth` (the sentinel's `sentinel auth-pass`). */
  readonly password?: string;
  /** The sentinel's own `requirepass`. */
  readonly sentinelPassword?: string;
  /** Every server (master, replica, sentinel) speaks TLS only, replication and the sentinel's links included. */
  readonly tls?: TlsFiles;
}

/**
 * Starts a master, a replica of it (resolved once its link is up) and `redis-server --sentinel`
 * (there may be no redis-sentinel binary) with a short down-after-milliseconds and
 * failover-timeout; resolves once the sentinel knows the replica, so a failover can pick it.
 * Throws (never skips) when redis-server or redis-cli is missing.
 */
export async function startRedisSentinel(
  options: StartSentinelOptions = {},
): Promise<RedisSentinelSetup> {
  requireBin('redis-server');
  requireBin('redis-cli');
  const name = 'fwmaster';
  const tls = options.tls === undefined ? {} : { tls: options.tls };
  const data: Access = {
    ...tls,
    ...(options.password === undefined ? {} : { password: options.password }),
  };
  const watcher: Access = {
    ...tls,
    ...(options.sentinelPassword === undefined ? {} : { password: options.sentinelPassword }),
  };
  const group = await processGroup('sentinel');
  const { dir, stop } = group;
  const server = async (sub: string, extra: string[] = []): Promise<RedisProcess> => {
    await mkdir(path.join(dir, sub));
    return group.start(
      (port) => [...serverArgs(port, path.join(dir, sub), data), ...extra],
      undefined,
      data,
    );
  };
  try {
    const master = await server('master');
    const replica = await server('replica', ['--replicaof', '127.0.0.1', String(master.port)]);
    await waitFor(
      `replica 127.0.0.1:${replica.port} linked to its master`,
      async () =>
        (await cliWith(data, replica.port, 'INFO', 'replication')).includes(
          'master_link_status:up',
        ),
      10_000,
    );
    const conf = path.join(dir, 'sentinel.conf');
    await writeFile(
      conf,
      [
        `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
        `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 3000}`,
        `sentinel parallel-syncs ${name} 1`,
        ...(options.password === undefined
          ? []
          : [`sentinel auth-pass ${name} ${options.password}`]),
        ...(options.sentinelPassword === undefined
          ? []
          : [`requirepass ${options.sentinelPassword}`]),
        '',
      ].join('\n'),
    );
    // The sentinel's TLS files; tls-replication makes it reach the master and replica over TLS.
    const sentinel = await group.start(
      (port) => [
        conf,
        '--sentinel',
        ...portArgs(port, watcher),
        ...(options.tls === undefined ? [] : tlsArgs(options.tls)),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
      ],
      undefined,
      watcher,
    );
    let last = '';
    await waitFor(
      `sentinel on 127.0.0.1:${sentinel.port} knowing the replica`,
      async () => {
        last = await cliWith(watcher, sentinel.port, 'SENTINEL', 'REPLICAS', name);
        return last.includes(`127.0.0.1:${replica.port}`) && /flags\nslave\n/.test(last);
      },
      15_000,
      () => `(last SENTINEL REPLICAS:\n${last})`,
    );
    return {
      name,
      sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
      masterPort: master.port,
      replicaPort: replica.port,
      killMaster: () => killProcess(master.child),
      replicated: async () => {
        let seen = '';
        await waitFor(
          'the replica caught up with the master',
          async () => {
            const offset = (info: string, field: string) =>
              /\d+/.exec(info.split(`${field}:`)[1] ?? '')?.[0];
            const m = offset(
              await cliWith(data, master.port, 'INFO', 'replication'),
              'master_repl_offset',
            );
            const r = offset(
              await cliWith(data, replica.port, 'INFO', 'replication'),
              'slave_repl_offset',
            );
            seen = `master ${m}, replica ${r}`;
            return m !== undefined && m === r;
          },
          5000,
          () => `(${seen})`,
        );
      },
      currentMaster: async () =>
        Number(
          (
            await cliWith(watcher, sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)
          ).split('\n')[1],
        ),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
