import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  accessArgs,
  cliWith,
  freePort,
  killProcess,
  requireBin,
  startProcess,
  stopProcess,
  portArgs,
  waitFor,
  type Access,
  type RedisProcess,
} from './redis-process';

/** A real Redis Cluster of masters only, started for a test on loopback ports of its own. */
export interface RedisCluster {
  /** The masters, as `new RedisStore({ cluster })` takes them. */
  readonly nodes: ReadonlyArray<{ host: string; port: number }>;
  /** SIGKILLs the node on `port` by pid, as a crash would. */
  kill(port: number): Promise<void>;
  /** Stops every node (SIGTERM by pid) and removes the dir. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts `masters` × `redis-server --cluster-enabled yes`, joins them with `redis-cli --cluster
 * create … --cluster-replicas 0 --cluster-yes` and resolves once every node reports
 * `cluster_state:ok` with all 16384 slots served. With `access`, every node asks for its password
 * (`requirepass`, `masterauth`) and/or speaks TLS only. Throws (never skips) when redis-server or
 * redis-cli is missing.
 */
export async function startRedisCluster(masters = 3, access: Access = {}): Promise<RedisCluster> {
  requireBin('redis-server');
  requireBin('redis-cli');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-redis-cluster-'));
  const nodes: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => stopProcess(n.child)));
    nodes.length = 0;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startNode(dir, access));
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await cliWith(
      access,
      nodes[0].port,
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    );
    let last = '';
    for (const node of nodes) {
      await waitFor(
        `cluster_state:ok on 127.0.0.1:${node.port}`,
        async () => {
          last = await cliWith(access, node.port, 'CLUSTER', 'INFO');
          return (
            last.includes('cluster_state:ok') &&
            last.includes('cluster_slots_ok:16384') &&
            last.includes(`cluster_known_nodes:${masters}`)
          );
        },
        15_000,
        () => `(last CLUSTER INFO:\n${last})`,
      );
    }
    const kill = async (port: number): Promise<void> => {
      const node = nodes.find((n) => n.port === port);
      if (node === undefined) throw new Error(`no cluster node on port ${port}`);
      await killProcess(node.child);
    };
    return { nodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), kill, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One cluster node; its bus port is a free port of its own (port + 10000 may be past 65535). */
async function startNode(dir: string, access: Access): Promise<RedisProcess> {
  let bus = 0;
  return startProcess(
    (port) => [
      ...portArgs(port, access),
      ...accessArgs(access),
      '--cluster-port',
      String(bus),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      '2000',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    async () => {
      bus = await freePort();
      let port = await freePort();
      while (port === bus) port = await freePort();
      return port;
    },
    access,
  );
}
