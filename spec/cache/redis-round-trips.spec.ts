import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space } from 'fw-http/cache';
import { startRedis, type RedisServer } from '../support/redis';
import { commandsDuring } from '../support/redis-monitor';

// A first idempotent POST on RedisStore: one round trip to claim (or read what holds the
// key), one to keep; a replay one. Counted with MONITOR on a real redis-server.

let server: RedisServer;
let store: RedisStore;
beforeAll(async () => {
  server = await startRedis();
  store = new RedisStore({ url: server.url, keyPrefix: 'rt:' });
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

/** The commands the store sent while `run` ran. */
const commandsSent = (run: () => Promise<void>): Promise<string[][]> =>
  commandsDuring(server.url, run);

describe('RedisStore round trips', () => {
  it('putIfAbsentOrGet writes when absent (null) and otherwise answers the bytes found, in one script call', async () => {
    const sent = await commandsSent(async () => {
      expect(await store.putIfAbsentOrGet('k', Buffer.from('claim'), 60_000)).toBeNull();
      expect(await store.putIfAbsentOrGet('k', Buffer.from('other'), 60_000)).toEqual(
        Buffer.from('claim'),
      );
    });
    expect(sent.map((a) => a[0].toLowerCase())).toEqual([
      expect.stringMatching(/^(evalsha|eval)$/),
      expect.stringMatching(/^(evalsha|eval)$/),
    ]);
    expect(await store.get('k')).toEqual(Buffer.from('claim'));
  });

  it('putIfAbsentOrGet sets the TTL it is given, and a lapsed key is written again', async () => {
    expect(await store.putIfAbsentOrGet('short', Buffer.from('a'), 50)).toBeNull();
    await new Promise((r) => setTimeout(r, 120));
    expect(await store.putIfAbsentOrGet('short', Buffer.from('b'), 60_000)).toBeNull();
    expect(await store.get('short')).toEqual(Buffer.from('b'));
  });

  it('a first idempotent POST sends two commands (claim-or-read, keep) and its replay one', async () => {
    const Kept = Space('kept', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    @Controller()
    class Orders {
      @Post('/orders')
      @Idempotent(Kept)
      @Returns(Status(201, Object))
      place() {
        return { runs: ++runs };
      }
    }
    const app = new App({ log: () => {} }).controllers(Orders).provide(Kept.open(store));
    const post = () =>
      app.inject({ method: 'POST', url: '/orders', headers: { 'idempotency-key': 'rt-1' } });
    const first = await commandsSent(async () => {
      expect((await post()).status).toBe(201);
    });
    expect(first.map((a) => a[0].toLowerCase())).toEqual([
      expect.stringMatching(/^(evalsha|eval)$/), // the claim, or the record found
      expect.stringMatching(/^(evalsha|eval)$/), // the keep over the claim
    ]);
    const replay = await commandsSent(async () => {
      const res = await post();
      expect([res.status, res.headers['idempotent-replayed']]).toEqual([201, 'true']);
    });
    expect(replay).toHaveLength(1);
    expect(runs).toBe(1);
  });
});
