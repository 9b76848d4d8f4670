import { RedisStore } from 'fw-http/cache';
import { clusterForThisFile } from '../support/redis-cluster';
import { describeRateStoreContract, rule } from './rate-store-contract';

// The rate scripts on a real three-master Redis Cluster: each reads and writes one key, so each
// runs whole on the master owning it (a script over keys in two slots would fail CROSSSLOT).

const cluster = clusterForThisFile(3);
let prefixes = 0;

describeRateStoreContract(
  'RedisStore on a three-master Redis Cluster',
  () =>
    new RedisStore({
      cluster: cluster.nodes,
      keyPrefix: `rate-${++prefixes}:`,
      // A new cluster client first learns the slots; on a loaded machine that can take over the 1 s default.
      commandTimeoutMs: 5000,
    }),
  (s) => (s as RedisStore).close(),
);

it('FAIL-27 two stores on the cluster share one allowance per key, for keys spread over every master', async () => {
  const a = new RedisStore({ cluster: cluster.nodes, keyPrefix: 'spread:' });
  const b = new RedisStore({ cluster: cluster.nodes, keyPrefix: 'spread:' });
  try {
    for (const window of ['fixed', 'sliding'] as const) {
      const r = rule({ window, max: 2 });
      // 30 addresses land in slots of all three masters.
      for (let i = 0; i < 30; i++) {
        const key = `10.0.0.${i}`;
        expect([await a.hit(r, key), await b.hit(r, key)]).toEqual([0, 0]);
        expect(await (i % 2 ? a : b).hit(r, key)).toBeGreaterThan(0);
      }
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
