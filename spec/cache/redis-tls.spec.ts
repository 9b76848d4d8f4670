import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheError, closingStores, connected, shortContract, shown } from '../support/redis-auth';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import {
  makeTlsFiles,
  startServer,
  stopProcess,
  type Access,
  type RedisProcess,
} from '../support/redis-process';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel';

// TLS for real: a certificate authority and a certificate for 127.0.0.1 made with openssl for
// this file, and servers speaking TLS only (--port 0 --tls-port), password-protected too: one
// server, a three-master Redis Cluster (cluster bus over TLS) and a master + replica + sentinel
// (replication and the sentinel's links over TLS), started on 127.0.0.1 and stopped by pid.

const PASSWORD = `node-pw-${randomUUID()}`;
const SENTINEL_PASSWORD = `sentinel-pw-${randomUUID()}`;

let dir: string;
let access: Access & { tls: NonNullable<Access['tls']> };
let ca: Buffer;
let one: RedisProcess;
let cluster: RedisCluster;
let sentinel: RedisSentinelSetup;
const open = closingStores();

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fw-redis-tls-'));
  access = { password: PASSWORD, tls: await makeTlsFiles(dir) };
  ca = readFileSync(access.tls.ca);
  [one, cluster, sentinel] = await Promise.all([
    startServer(dir, { access }),
    startRedisCluster(3, access),
    startRedisSentinel({ ...access, sentinelPassword: SENTINEL_PASSWORD }),
  ]);
}, 90_000);
afterAll(async () => {
  await Promise.all([
    one === undefined ? undefined : stopProcess(one.child),
    cluster?.stop(),
    sentinel?.stop(),
  ]);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('RedisStore over TLS (servers speaking TLS only)', () => {
  it('url redis://… with tls: { ca } and the password: get, the claim and compare-and-set work', async () => {
    const store = open({ url: `redis://127.0.0.1:${one.port}`, tls: { ca }, password: PASSWORD });
    await connected(store);
    await shortContract(store);
  });

  it('url rediss://… with tls: { ca }: works (the scheme and the option agree)', async () => {
    const store = open({ url: `rediss://127.0.0.1:${one.port}`, tls: { ca }, password: PASSWORD });
    await connected(store);
    await shortContract(store);
  });

  it('tls: true checks the certificate against the system CAs: a server signed by an unknown CA is refused Unavailable, no password shown', async () => {
    const store = open({
      url: `redis://127.0.0.1:${one.port}`,
      tls: true,
      password: PASSWORD,
      commandTimeoutMs: 300,
    });
    const err = await cacheError(() => store.get('k'));
    expect(err.code).toBe('Unavailable');
    expect(err.message).toMatch(/certificate/);
    expect(shown(err)).not.toContain(PASSWORD);
  });

  it('no tls to a TLS-only server: Unavailable', async () => {
    const store = open({
      url: `redis://127.0.0.1:${one.port}`,
      password: PASSWORD,
      commandTimeoutMs: 300,
    });
    expect((await cacheError(() => store.get('k'))).code).toBe('Unavailable');
  });

  it('a three-master Redis Cluster with tls: { ca } and the password: get, the claim and compare-and-set on every master', async () => {
    const store = open({ cluster: cluster.nodes, tls: { ca }, password: PASSWORD });
    await connected(store);
    await shortContract(store);
  });

  it('a cluster with tls: true and an unknown CA: Unavailable naming the cluster and the certificate failure', async () => {
    const store = open({
      cluster: cluster.nodes,
      tls: true,
      password: PASSWORD,
      commandTimeoutMs: 300,
    });
    const err = await cacheError(() => store.get('k'));
    expect(err.code).toBe('Unavailable');
    expect(err.message).toContain(`RedisStore cluster 127.0.0.1:${cluster.nodes[0].port}`);
    expect(err.message).toMatch(/certificate/);
    expect(shown(err)).not.toContain(PASSWORD);
  });

  it('behind Sentinel with tls: { ca } (sentinels and servers), the servers password and the sentinel password: works', async () => {
    const store = open({
      sentinels: sentinel.sentinels,
      name: sentinel.name,
      tls: { ca },
      password: PASSWORD,
      sentinelPassword: SENTINEL_PASSWORD,
    });
    await connected(store);
    await shortContract(store);
  });
});
