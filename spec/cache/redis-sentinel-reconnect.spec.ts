import { RedisStore } from 'fw-http/cache';
import { startHoldingProxy, type HoldingProxy } from '../support/holding-proxy';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel';
import { sleep, waitFor } from '../support/redis-process';

// A real master, replica and sentinel; the store reaches the sentinel through a proxy that can
// stop answering new connections, so a failover is announced while the store is still asking
// the sentinel where the master is. ioredis ends its connection for good then ("Connection is
// closed." from its connector, status 'end'): seen in CI as a store that answered 503 for minutes
// after a failover.

let setup: RedisSentinelSetup;
let proxy: HoldingProxy;

beforeAll(async () => {
  setup = await startRedisSentinel({ downAfterMs: 1000, failoverTimeoutMs: 3000 });
  proxy = await startHoldingProxy(setup.sentinels[0]!);
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await setup?.stop();
});

describe('RedisStore behind Sentinel, reconnecting', () => {
  it('OPEN-59 a failover announced while the store asks the sentinel for the master: the store connects again to the new master and works', async () => {
    const store = new RedisStore({
      sentinels: [{ host: '127.0.0.1', port: proxy.port }],
      name: setup.name,
      commandTimeoutMs: 300,
    });
    try {
      // Up, and listening to the sentinel for +switch-master (the one connection left open).
      await waitFor(
        'the store up and subscribed to the sentinel',
        async () => (await store.ping(), proxy.live() === 1),
        10_000,
      );
      expect(await store.putIfAbsent('before', Buffer.from('b'), 60_000)).toBe(true);

      proxy.hold();
      await setup.killMaster();
      // The store keeps asking the held sentinel while the sentinel fails over and announces it.
      await waitFor(
        'the failover to the replica',
        async () => (await setup.currentMaster()) === setup.replicaPort,
        30_000,
      );
      await sleep(500);
      await expect(store.get('before')).rejects.toMatchObject({ code: 'Unavailable' });

      proxy.release();
      // Connected again without a restart: it answers, on the new master.
      await waitFor('the store answering again', async () => (await store.ping(), true), 10_000);
      expect(await store.putIfAbsent('after', Buffer.from('a'), 60_000)).toBe(true);
      expect((await store.get('after'))?.toString()).toBe('a');
    } finally {
      await store.close();
    }
  }, 60_000);
});
