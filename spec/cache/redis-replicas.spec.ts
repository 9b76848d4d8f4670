import Redis from 'ioredis';
import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { CacheError, RedisStore, Space } from 'fw-http/cache';
import {
  cli,
  processGroup,
  serverArgs,
  stopProcess,
  waitFor,
  type ProcessGroup,
  type RedisProcess,
} from '../support/redis-process';
import { startRedisSentinel } from '../support/redis-sentinel';

// `RedisStore({ replicas, replicaTimeoutMs })`: claims and keeps wait for `WAIT n timeout`
// on a real primary with a real replica (`redis-server --replicaof`); fewer acknowledgements
// fail closed.

let group: ProcessGroup;
let primary: RedisProcess;
let replica: RedisProcess | null;
const stores: RedisStore[] = [];
let prefixes = 0;

async function startReplica(): Promise<RedisProcess> {
  const port = primary.port;
  const r = await group.start((p) => [
    ...serverArgs(p, group.dir),
    '--dbfilename',
    `replica-${p}.rdb`,
    '--replicaof',
    '127.0.0.1',
    String(port),
  ]);
  await waitFor(
    'the replica linked to its primary',
    async () => (await cli(r.port, 'INFO', 'replication')).includes('master_link_status:up'),
    10_000,
  );
  await waitFor(
    'the primary counting its replica online',
    async () => /slave0:.*state=online/.test(await cli(primary.port, 'INFO', 'replication')),
    10_000,
  );
  return r;
}

/** Stops the replica and waits until the primary no longer counts it. */
async function stopReplica(): Promise<void> {
  if (replica === null) return;
  await stopProcess(replica.child);
  replica = null;
  await waitFor(
    'the primary saw its replica go',
    async () => (await cli(primary.port, 'INFO', 'replication')).includes('connected_slaves:0'),
    10_000,
  );
}

function open(options: { replicas?: number; replicaTimeoutMs?: number } = {}): RedisStore {
  const store = new RedisStore({
    url: `redis://127.0.0.1:${primary.port}`,
    keyPrefix: `r${++prefixes}:`,
    commandTimeoutMs: 4000,
    ...options,
  });
  stores.push(store);
  return store;
}

beforeAll(async () => {
  group = await processGroup('replicas');
  primary = await group.start((p) => serverArgs(p, group.dir));
  replica = await startReplica();
}, 30_000);
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await group?.stop();
});

describe('RedisStore replicas: claims and keeps wait for WAIT', () => {
  it('with replicas: 1 a claim and its keep are each followed by WAIT 1 <replicaTimeoutMs>, and the replica holds them when they resolve', async () => {
    const raw = new Redis(primary.port, '127.0.0.1');
    const monitor = await raw.monitor();
    const sent: string[][] = [];
    monitor.on('monitor', (_t: string, args: string[], source: string) => {
      if (source !== 'lua') sent.push(args);
    });
    try {
      const store = open({ replicas: 1, replicaTimeoutMs: 2000 });
      const prefix = `r${prefixes}:`;
      expect(await store.putIfAbsent('k', Buffer.from('claim'), 60_000)).toBe(true);
      expect(await cli(replica!.port, 'GET', `${prefix}k`)).toBe('claim');
      expect(
        await store.put('k', Buffer.from('answer'), 60_000, { expect: Buffer.from('claim') }),
      ).toBe(true);
      expect(await cli(replica!.port, 'GET', `${prefix}k`)).toBe('answer');
      // A read waits for nothing.
      expect(await store.get('k')).toEqual(Buffer.from('answer'));
      await store.get('marker');
      const deadline = Date.now() + 2000;
      while (!sent.some((a) => a.includes(`${prefix}marker`)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      const names = sent
        .filter((a) => a.includes(`${prefix}k`) || a[0].toLowerCase() === 'wait')
        .map((a) =>
          a[0].toLowerCase() === 'wait' ? a.join(' ').toLowerCase() : a[0].toLowerCase(),
        );
      expect(names).toEqual([
        'set',
        'wait 1 2000',
        expect.stringMatching(/^(evalsha|eval)$/),
        'wait 1 2000',
        'get',
      ]);
    } finally {
      monitor.disconnect();
      raw.disconnect();
    }
  });

  it('without replicas no WAIT is sent (the default stays one command per claim)', async () => {
    const raw = new Redis(primary.port, '127.0.0.1');
    const monitor = await raw.monitor();
    const sent: string[] = [];
    monitor.on('monitor', (_t: string, args: string[]) => sent.push(args[0].toLowerCase()));
    try {
      const store = open();
      expect(await store.putIfAbsent('k', Buffer.from('claim'), 60_000)).toBe(true);
      await store.put('k', Buffer.from('answer'), 60_000, { expect: Buffer.from('claim') });
      await store.get('marker');
      await new Promise((r) => setTimeout(r, 200));
      expect(sent).not.toContain('wait');
      expect(sent).toContain('set');
    } finally {
      monitor.disconnect();
      raw.disconnect();
    }
  });

  it('a burst of claims in one turn shares one WAIT (group commit), and every claim is on the replica', async () => {
    const raw = new Redis(primary.port, '127.0.0.1');
    const monitor = await raw.monitor();
    const waits: string[][] = [];
    monitor.on('monitor', (_t: string, args: string[]) => {
      if (args[0].toLowerCase() === 'wait') waits.push(args);
    });
    try {
      const store = open({ replicas: 1, replicaTimeoutMs: 2000 });
      const prefix = `r${prefixes}:`;
      const won = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.putIfAbsent(`b${i}`, Buffer.from('c'), 60_000)),
      );
      expect(won.every((w) => w)).toBe(true);
      const onReplica = await cli(
        replica!.port,
        'EVAL',
        `return #redis.call('KEYS', ARGV[1])`,
        '0',
        `${prefix}b*`,
      );
      expect(onReplica).toBe('50');
      await store.get('marker');
      await new Promise((r) => setTimeout(r, 200));
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits.length).toBeLessThan(50);
    } finally {
      monitor.disconnect();
      raw.disconnect();
    }
  });

  it('with the replica gone a claim fails closed: CacheError Unavailable naming the acknowledgements, the claim taken back from the primary', async () => {
    await stopReplica();
    try {
      const store = open({ replicas: 1, replicaTimeoutMs: 200 });
      const prefix = `r${prefixes}:`;
      const err = await store.putIfAbsent('k', Buffer.from('claim'), 60_000).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CacheError);
      expect((err as CacheError).code).toBe('Unavailable');
      expect((err as Error).message).toMatch(
        /putIfAbsent "k" failed: written on the primary but acknowledged by 0 of 1 replicas within 200 ms/,
      );
      // Taken back (fire and forget): the retry finds the key free.
      await waitFor(
        'the unacknowledged claim taken back',
        async () => (await cli(primary.port, 'EXISTS', `${prefix}k`)) === '0',
        2000,
      );
      // A keep over a claim written without replicas fails the same way.
      await cli(primary.port, 'SET', `${prefix}kept`, 'claim');
      await expect(
        store.put('kept', Buffer.from('answer'), 60_000, { expect: Buffer.from('claim') }),
      ).rejects.toMatchObject({ code: 'Unavailable' });
      // Reads and a claim that finds the key taken need no replica.
      expect(await store.get('kept')).toEqual(Buffer.from('answer'));
      expect(await store.putIfAbsent('kept', Buffer.from('other'), 60_000)).toBe(false);
    } finally {
      replica = await startReplica();
    }
  }, 30_000);

  it('a read is never held behind a WAIT: with the replica gone, a get sent after a waiting claim answers before it', async () => {
    await stopReplica();
    try {
      const store = open({ replicas: 1, replicaTimeoutMs: 1500 });
      // Connected before the race below: a ping that meets the socket still coming up fails fast
      // (the store never queues), so it is asked again until the store answers.
      await waitFor(
        'the store connected',
        () =>
          store.ping().then(
            () => true,
            () => false,
          ),
        10_000,
      );
      const order: string[] = [];
      const claim = store.putIfAbsent('slow', Buffer.from('c'), 60_000).then(
        () => order.push('claim'),
        () => order.push('claim failed'),
      );
      await new Promise((r) => setTimeout(r, 50));
      await store.get('slow').then(() => order.push('get'));
      await claim;
      expect(order).toEqual(['get', 'claim failed']);
    } finally {
      replica = await startReplica();
    }
  }, 30_000);

  it('the one-round-trip claim (putIfAbsentOrGet) waits for the replica too: held there when it resolves; with the replica gone it fails closed and is taken back', async () => {
    const store = open({ replicas: 1, replicaTimeoutMs: 1000 });
    const prefix = `r${prefixes}:`;
    expect(await store.putIfAbsentOrGet('c1', Buffer.from('claim'), 60_000)).toBeNull();
    expect(await cli(replica!.port, 'GET', `${prefix}c1`)).toBe('claim');
    // Found taken: nothing written, nothing to wait for.
    expect(await store.putIfAbsentOrGet('c1', Buffer.from('x'), 60_000)).toEqual(
      Buffer.from('claim'),
    );
    await stopReplica();
    try {
      await expect(store.putIfAbsentOrGet('c2', Buffer.from('claim'), 60_000)).rejects.toThrow(
        /putIfAbsentOrGet "c2" failed: written on the primary but acknowledged by 0 of 1 replicas/,
      );
      await waitFor(
        'the unacknowledged claim taken back',
        async () => (await cli(primary.port, 'EXISTS', `${prefix}c2`)) === '0',
        2000,
      );
    } finally {
      replica = await startReplica();
    }
  }, 30_000);

  it('replicas: 2 with one replica fails closed; replicas: 1 with it succeeds', async () => {
    const two = open({ replicas: 2, replicaTimeoutMs: 200 });
    await expect(two.putIfAbsent('two', Buffer.from('c'), 60_000)).rejects.toThrow(
      /acknowledged by [01] of 2 replicas/, // 0 while the restarted replica is still syncing
    );
    const one = open({ replicas: 1, replicaTimeoutMs: 2000 });
    expect(await one.putIfAbsent('two', Buffer.from('c'), 60_000)).toBe(true);
  });

  it('replicas and replicaTimeoutMs are checked: a whole number; the timeout under commandTimeoutMs (the edge: one less passes); not with cluster', () => {
    const url = `redis://127.0.0.1:${primary.port}`;
    const bad = (o: object) => () => new RedisStore({ url, ...o });
    expect(bad({ replicas: -1 })).toThrow(/replicas must be a whole number from 0, got -1/);
    expect(bad({ replicas: 1.5 })).toThrow(/replicas must be a whole number/);
    expect(bad({ replicas: 1, commandTimeoutMs: 500, replicaTimeoutMs: 500 })).toThrow(
      /replicaTimeoutMs must be a whole number of ms from 1 to less than commandTimeoutMs \(500\), got 500/,
    );
    expect(bad({ replicas: 1, replicaTimeoutMs: 0 })).toThrow(/replicaTimeoutMs/);
    expect(
      () => new RedisStore({ cluster: [{ host: '127.0.0.1', port: primary.port }], replicas: 1 }),
    ).toThrow(/replicas is not offered with cluster/);
    for (const e of [bad({ replicas: -1 }), bad({ replicaTimeoutMs: 'x' })])
      expect(e).toThrow(expect.objectContaining({ code: 'InvalidArgument' }) as Error);
    const edge = open({ replicas: 1, replicaTimeoutMs: 3999 }); // commandTimeoutMs 4000
    expect(edge).toBeInstanceOf(RedisStore);
  });

  it('an idempotent route on a store whose replica is gone answers 503 idempotency store unavailable and runs nothing; with it back, the POST runs once and its answer is on the replica', async () => {
    const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    @Controller()
    class Shop {
      @Post('/orders')
      @Idempotent(Orders)
      @Returns(Status(201, Object))
      place() {
        runs++;
        return { sku: 'a', runs };
      }
    }
    const store = open({ replicas: 1, replicaTimeoutMs: 1000 });
    const app = new App({ log: () => {} }).controllers(Shop).provide(Orders.open(store));
    const post = () =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': 'o-1' },
      });
    await stopReplica();
    try {
      const down = await post();
      expect([down.status, down.json()]).toEqual([
        503,
        { error: 'idempotency store unavailable', status: 503 },
      ]);
      expect(runs).toBe(0);
    } finally {
      replica = await startReplica();
    }
    const first = await post();
    expect([first.status, first.json()]).toEqual([201, { sku: 'a', runs: 1 }]);
    const again = await post();
    expect([again.status, again.headers['idempotent-replayed'], runs]).toEqual([201, 'true', 1]);
    const onReplica = await cli(
      replica.port,
      'EVAL',
      `return #redis.call('KEYS', ARGV[1])`,
      '0',
      `r${prefixes}:*o-1`,
    );
    expect(onReplica).toBe('1');
  }, 30_000);
});

describe('an acknowledged claim survives a failover', () => {
  it('behind Sentinel with replicas: 1, a claim acknowledged just before the master is killed is on the new master', async () => {
    const setup = await startRedisSentinel();
    const store = new RedisStore({
      sentinels: setup.sentinels,
      name: setup.name,
      replicas: 1,
      replicaTimeoutMs: 2000,
      commandTimeoutMs: 4000,
    });
    try {
      const won = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.putIfAbsent(`f${i}`, Buffer.from('c'), 600_000),
        ),
      );
      expect(won.every((w) => w)).toBe(true);
      await setup.killMaster();
      await waitFor(
        'the sentinel promoted the replica',
        async () => (await setup.currentMaster()) === setup.replicaPort,
        20_000,
      );
      const held = await cli(setup.replicaPort, 'EVAL', `return #redis.call('KEYS', 'f*')`, '0');
      expect(held).toBe('200');
      // And the store follows: a retry's claim on the new master finds every key taken.
      await waitFor(
        'the store on the new master',
        async () => (await store.putIfAbsent('f0', Buffer.from('again'), 600_000)) === false,
        20_000,
      );
    } finally {
      await store.close();
      await setup.stop();
    }
  }, 90_000);
});
