import type { App } from 'fw-http';
import { CacheError, RedisStore, Space } from 'fw-http/cache';
import { ordersApp, postOrder } from '../support/idempotent-orders';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel';
import { sleep } from '../support/redis-process';

// A real master, replica and sentinel (redis-server --sentinel), started for this file on
// loopback ports and stopped by pid; the master is SIGKILLed mid-run.

let setup: RedisSentinelSetup;

beforeAll(async () => {
  setup = await startRedisSentinel({ downAfterMs: 1000, failoverTimeoutMs: 3000 });
}, 60_000);
afterAll(async () => {
  await setup?.stop();
});

const Answers = Space('sentinel-orders', { ttlSeconds: 60, maxBytes: 4096 });

/** The app; `runs` counts handler runs per sku (each request's sku is its Idempotency-Key). */
const instance = (store: RedisStore, runs: Map<string, number>): App =>
  ordersApp(Answers, store, runs, (sku, n) => `${sku} run ${n}`);

interface Answer {
  readonly key: string;
  readonly status: number;
  readonly replayed: string | null;
  readonly body: string;
}

const post = async (url: string, key: string): Promise<Answer> => ({
  key,
  ...(await postOrder(url, key)),
});

/** The two 503s of an idempotent route in the failure shape: the store did not answer, or (a retry of
 *  a request the dying master took) the answer was sent but could not be kept. */
const REFUSALS = [
  JSON.stringify({ error: 'idempotency store unavailable', status: 503 }),
  JSON.stringify({
    error: 'Idempotency-Key was answered, but the answer could not be kept: retry later',
    status: 503,
  }),
];

describe('RedisStore behind Sentinel', () => {
  it('OPEN-59 built while no sentinel answers: operations fail Unavailable naming the master group, and never hang', async () => {
    const nowhere = new RedisStore({
      sentinels: [{ host: '127.0.0.1', port: 1 }],
      name: 'nowhere',
      commandTimeoutMs: 300,
    });
    try {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        nowhere.get('k').then(
          () => 'resolved',
          (e: unknown) => e,
        ),
        new Promise((r) => (timer = setTimeout(r, 5000, 'hung'))),
      ]).finally(() => clearTimeout(timer));
      expect(outcome).toBeInstanceOf(CacheError);
      expect((outcome as CacheError).code).toBe('Unavailable');
      expect((outcome as CacheError).message).toContain(
        'RedisStore sentinel nowhere via 127.0.0.1:1: get "k" failed: no answer within 300 ms',
      );
    } finally {
      await nowhere.close();
    }
  });

  it('IDEM-01 IDEM-07 OPEN-59 the master killed mid-run: during the failover idempotent routes answer 503 (fail closed), afterwards they work again, and no handler ran twice for one key', async () => {
    const store = new RedisStore({
      sentinels: setup.sentinels,
      name: setup.name,
      commandTimeoutMs: 300,
    });
    // Handed over once it answers: the contract is not about connecting on a loaded machine.
    for (const deadline = Date.now() + 10_000; ;) {
      const up = await store.ping().then(
        () => true,
        () => Date.now() > deadline,
      );
      if (up) break;
    }
    const runs = new Map<string, number>();
    const app = instance(store, runs);
    const { url } = await app.listen();
    let stopped = false;
    try {
      // Before: answers made and replayed, and on the replica too.
      const early = Array.from({ length: 10 }, (_, i) => `early-${i}`);
      for (const key of early) {
        expect((await post(url, key)).status).toBe(201);
        expect((await post(url, key)).replayed).toBe('true');
      }
      await setup.replicated();

      // Load: four callers, each sending a fresh key and then retrying it, until the failover is
      // over and every caller has had five answers in a row made by the new master.
      const pairs: Array<[first: Answer, retry: Answer]> = [];
      let failedOver = false;
      const caller = async (w: number): Promise<void> => {
        let madeInARow = 0;
        for (let i = 0; !stopped && !(failedOver && madeInARow >= 5); i++) {
          const key = `load-${w}-${i}`;
          const first = await post(url, key);
          const retry = await post(url, key);
          pairs.push([first, retry]);
          const made = first.status === 201 && retry.status === 201 && retry.replayed === 'true';
          madeInARow = failedOver && made ? madeInARow + 1 : 0;
        }
      };
      const load = Promise.all([0, 1, 2, 3].map(caller));
      await sleep(300);
      const before = pairs.length;
      await setup.killMaster();
      const deadline = Date.now() + 20_000;
      while ((await setup.currentMaster().catch(() => setup.masterPort)) === setup.masterPort) {
        if (Date.now() > deadline) throw new Error('no failover within 20 s');
        await sleep(100);
      }
      failedOver = true;
      // A store that never comes back fails here, with what it last answered.
      let timer: NodeJS.Timeout | undefined;
      const recovered = await Promise.race([
        load.then(() => true),
        new Promise<false>((r) => (timer = setTimeout(r, 45_000, false))),
      ]).finally(() => clearTimeout(timer));
      if (!recovered)
        throw new Error(
          `no five answers in a row within 45 s of the failover; the last: ${JSON.stringify(pairs.slice(-4))}`,
        );
      const answers = pairs.flat();

      expect(before).toBeGreaterThan(0);
      expect(await setup.currentMaster()).toBe(setup.replicaPort);
      // During the failover: 503 in the failure shape, never a handler run without a claim.
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      for (const a of refused) expect(REFUSALS).toContain(a.body);
      expect(refused.some((a) => a.body === REFUSALS[0])).toBe(true);
      for (const a of answers)
        expect({ key: a.key, known: [201, 409, 503].includes(a.status) }).toEqual({
          key: a.key,
          known: true,
        });

      // Afterwards: a key refused at both its requests never ran, and runs now (or is 409 when its
      // claim landed but the answer to it was lost with the master).
      const refusedTwice = pairs.filter(([f, r]) => f.status === 503 && r.status === 503);
      for (const [{ key }] of refusedTwice) {
        expect({ key, runs: runs.get(key) ?? 0 }).toEqual({ key, runs: 0 });
        const again = await post(url, key);
        if (again.status !== 409)
          expect({ key, status: again.status, replayed: again.replayed, body: again.body }).toEqual(
            {
              key,
              status: 201,
              replayed: null,
              body: JSON.stringify({ sku: `${key} run 1`, qty: 1 }),
            },
          );
      }
      for (const key of early) {
        const again = await post(url, key);
        expect(again).toEqual({ key, status: 201, replayed: 'true', body: again.body });
        expect(JSON.parse(again.body)).toEqual({ sku: `${key} run 1`, qty: 1 });
      }
      const fresh = await post(url, 'after-failover');
      expect(fresh.status).toBe(201);
      expect((await post(url, 'after-failover')).replayed).toBe('true');

      // Across the whole test: no handler ran twice for one key.
      const twice = [...runs].filter(([, n]) => n > 1);
      expect(twice).toEqual([]);
      expect(runs.size).toBeGreaterThan(early.length + 4 * 5);
    } finally {
      stopped = true;
      await app.close();
      await store.close();
    }
  }, 120_000); // a failover on a loaded machine has taken more than a minute
});
