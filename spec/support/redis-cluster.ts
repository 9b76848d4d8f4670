import {
  cliWith,
  freePort,
  killProcess,
  processGroup,
  requireBin,
  serverArgs,
  waitFor,
  type Access,
  type ProcessGroup,
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
  const group = await processGroup('cluster');
  const nodes: RedisProcess[] = [];
  const stop = group.stop;
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startNode(group, access));
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

/**
 * A cluster of `masters` started before the spec file's tests (beforeAll) and stopped after them
 * (afterAll); what it answers reads the cluster once started.
 */
export function clusterForThisFile(masters = 3): RedisCluster {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(masters);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const started = (): RedisCluster => {
    if (cluster === undefined) throw new Error('the cluster is started in beforeAll');
    return cluster;
  };
  return {
    get nodes() {
      return started().nodes;
    },
    kill: (port) => started().kill(port),
    stop: () => started().stop(),
  };
}

/** One cluster node; its bus port is a free port of its own (port + 10000 may be past 65535). */
async function startNode(group: ProcessGroup, access: Access): Promise<RedisProcess> {
  let bus = 0;
  return group.start(
    (port) => [
      ...serverArgs(port, group.dir, access),
      '--cluster-port',
      String(bus),
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      '2000',
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
