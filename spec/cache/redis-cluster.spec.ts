import type { App } from 'fw-http';
import { CacheError, RedisStore, Space } from 'fw-http/cache';
import { ordersApp, postOrder } from '../support/idempotent-orders';
import { closingStores, connected } from '../support/redis-auth';
import { clusterForThisFile } from '../support/redis-cluster';
import { cli } from '../support/redis-process';
import { describeStoreContract } from './store-contract';

// A real three-master Redis Cluster (redis-server --cluster-enabled yes ×3, joined by
// redis-cli --cluster create), started once for this file and stopped by pid.

const cluster = clusterForThisFile(3);
const closedAfterEach = closingStores();
let prefixes = 0;

async function open(keyPrefix: string, commandTimeoutMs = 1000): Promise<RedisStore> {
  const store = closedAfterEach({ cluster: cluster.nodes, keyPrefix, commandTimeoutMs });
  await connected(store);
  return store;
}

/** What `p` settles to, or 'hung' when it has not settled after 5 s (many times commandTimeoutMs). */
async function orHung<T>(p: Promise<T>): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<'hung'>((r) => (timer = setTimeout(r, 5000, 'hung'))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// Each test gets its own prefix. The store is handed over once it answers: joining a cluster takes
// several round trips (slots, a ready check, one connection per master), which on a loaded machine
// can outlast a first operation's commandTimeoutMs, and the contract is not about connecting.
describeStoreContract('RedisStore on a three-master Redis Cluster', async () => {
  const store = new RedisStore({ cluster: cluster.nodes, keyPrefix: `contract-${++prefixes}:` });
  await connected(store);
  return store;
});

const Answers = Space('cluster-orders', { ttlSeconds: 60, maxBytes: 4096 });

/** An app instance named `name`; `runs` counts handler runs per sku (each request's sku is its key). */
const instance = (name: string, store: RedisStore, runs: Map<string, number>): App =>
  ordersApp(Answers, store, runs, (sku) => `${sku} made by ${name}`);

/** The keys matching `pattern` that the node on `port` holds itself. */
const keysOn = async (port: number, pattern: string): Promise<string[]> =>
  (await cli(port, '--raw', 'KEYS', pattern)).split('\n').filter((k) => k !== '');

describe('RedisStore on a Redis Cluster', () => {
  it('CACHE-11 keys spread over the three masters, keyPrefix included, and the compare-and-set scripts run on the master owning each key', async () => {
    const store = await open('spread:');
    const keys = Array.from({ length: 30 }, (_, i) => `order-${i}`);
    for (const k of keys) {
      expect(await store.putIfAbsent(k, Buffer.from('claim'), 60_000)).toBe(true);
      expect(
        await store.put(k, Buffer.from('kept'), 60_000, { expect: Buffer.from('claim') }),
      ).toBe(true);
    }
    // Each master holds some of the 30 keys, stored as prefix + key: the prefix did not pin them to one slot.
    const held = await Promise.all(cluster.nodes.map((n) => keysOn(n.port, 'spread:*')));
    for (const onOne of held) expect(onOne.length).toBeGreaterThan(0);
    expect(held.flat().sort()).toEqual(keys.map((k) => `spread:${k}`).sort());
    for (const k of keys) {
      expect(await store.get(k)).toEqual(Buffer.from('kept'));
      expect(await store.del(k, { expect: Buffer.from('claim') })).toBe(false);
      expect(await store.del(k, { expect: Buffer.from('kept') })).toBe(true);
    }
    expect(
      (await Promise.all(cluster.nodes.map((n) => keysOn(n.port, 'spread:*')))).flat(),
    ).toEqual([]);
  });

  it('IDEM-01 IDEM-07 CACHE-11 two app instances on two ports replay each other’s answers through the cluster; each handler runs once per key', async () => {
    const runs = new Map<string, number>();
    const a = instance('a', await open('two-apps:'), runs);
    const b = instance('b', await open('two-apps:'), runs);
    const [atA, atB] = [await a.listen(), await b.listen()];
    try {
      const keys = Array.from({ length: 12 }, (_, i) => `two-apps-${Date.now()}-${i}`);
      for (const [i, key] of keys.entries()) {
        const [first, other] = i % 2 === 0 ? [atA, atB] : [atB, atA];
        const made = await postOrder(first.url, key);
        const again = await postOrder(other.url, key);
        expect(made.status).toBe(201);
        expect(made.replayed).toBeNull();
        expect(again).toEqual({ status: 201, replayed: 'true', body: made.body });
        expect(JSON.parse(made.body)).toEqual({
          sku: `${key} made by ${i % 2 === 0 ? 'a' : 'b'}`,
          qty: 1,
        });
      }
      // The same fresh key at both at once: one runs it, the other is 409 or the replay.
      const raced = await Promise.all(
        Array.from({ length: 10 }, (_, i) => postOrder(i % 2 === 0 ? atA.url : atB.url, 'raced')),
      );
      expect(raced.filter((r) => r.status === 201 && r.replayed === null)).toHaveLength(1);
      for (const r of raced) expect([201, 409]).toContain(r.status);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect(runs.size).toBe(keys.length + 1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('OPEN-59 built while no node answers: an operation fails Unavailable naming the cluster, and never hangs', async () => {
    const nowhere = closedAfterEach({
      cluster: [{ host: '127.0.0.1', port: 1 }],
      commandTimeoutMs: 300,
    });
    const outcome = await orHung(
      nowhere.putIfAbsent('k', Buffer.from('v'), 60_000).then(
        () => 'resolved',
        (e: unknown) => e,
      ),
    );
    expect(outcome).toBeInstanceOf(CacheError);
    expect((outcome as CacheError).code).toBe('Unavailable');
    expect((outcome as CacheError).message).toContain(
      'RedisStore cluster 127.0.0.1:1: putIfAbsent "k" failed: no answer within 300 ms',
    );
  });

  // Last in the file: it kills a master of the shared cluster.
  it('OPEN-59 a master killed (SIGKILL): every operation either succeeds or rejects CacheError Unavailable, none hangs; the killed master’s keys fail', async () => {
    const store = await open('killed:', 300);
    const keys = Array.from({ length: 30 }, (_, i) => `k-${i}`);
    for (const k of keys) await store.put(k, Buffer.from('v'), 60_000);
    const victim = cluster.nodes[1];
    const owned = (await keysOn(victim.port, 'killed:*')).map((k) => k.slice('killed:'.length));
    expect(owned.length).toBeGreaterThan(0);
    await cluster.kill(victim.port);
    const outcomes = await Promise.all(
      keys.map((k) =>
        orHung(
          store.get(k).then(
            (v) => (v?.toString() === 'v' ? 'ok' : `wrong ${String(v)}`),
            (e: unknown) => (e instanceof CacheError ? e.code : String(e)),
          ),
        ),
      ),
    );
    for (const [i, k] of keys.entries()) {
      expect({ k, outcome: outcomes[i] }).toEqual({
        k,
        outcome: owned.includes(k) ? 'Unavailable' : expect.stringMatching(/^(ok|Unavailable)$/),
      });
    }
  });
});

describe('RedisStore options: exactly one of url, cluster or sentinels (no server needed)', () => {
  it.each([
    [
      { url: 'redis://127.0.0.1:1', cluster: [{ host: '127.0.0.1', port: 1 }] },
      'give exactly one of url, cluster or sentinels, not url and cluster',
    ],
    [
      { cluster: [{ host: 'a', port: 1 }], sentinels: [{ host: 'b', port: 1 }], name: 'm' },
      'give exactly one of url, cluster or sentinels, not cluster and sentinels',
    ],
    [{ cluster: [] }, 'cluster must be a non-empty array of { host, port }'],
    [{ cluster: 'redis://127.0.0.1:1' }, 'cluster must be a non-empty array of { host, port }'],
    [
      {
        cluster: [
          { host: 'a', port: 1 },
          { host: 'b', port: 70000 },
        ],
      },
      'cluster[1] must be { host: a non-empty string, port: a whole number from 1 to 65535 }, got {"host":"b","port":70000}',
    ],
    [
      { sentinels: [{ host: '', port: 26379 }], name: 'mymaster' },
      'sentinels[0] must be { host: a non-empty string, port: a whole number from 1 to 65535 }, got {"host":"","port":26379}',
    ],
    [
      { sentinels: [{ host: 'a', port: 26379 }] },
      'name must be the master group the sentinels watch (sentinel monitor <name> …), such as "mymaster", got undefined',
    ],
    [
      { sentinels: [{ host: 'a', port: 26379 }], name: '' },
      'name must be the master group the sentinels watch (sentinel monitor <name> …), such as "mymaster", got ""',
    ],
    [
      { cluster: [{ host: 'a', port: 1 }], name: 'mymaster' },
      'name is the master group of sentinels and goes only with sentinels',
    ],
    [
      { url: 'redis://127.0.0.1:1', name: 'mymaster' },
      'name is the master group of sentinels and goes only with sentinels',
    ],
    [{ cluster: [{ host: 'a', port: 1 }], keyPrefix: 5 }, 'keyPrefix must be a string, got 5'],
  ])('%j is refused InvalidArgument, naming the option', (options, message) => {
    let thrown: unknown;
    try {
      new RedisStore(options as never);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CacheError);
    expect((thrown as CacheError).code).toBe('InvalidArgument');
    expect((thrown as CacheError).message).toBe(`RedisStore: ${message}`);
  });
});
