import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space } from 'fw-http/cache';
import { cli, freePort } from '../support/redis-process';
import { startRedis, type RedisServer } from '../support/redis';

// A store that cannot be reached says why, at start and once per outage.

const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });

@Controller()
class Shop {
  @Post('/orders')
  @Idempotent(Orders, { by: () => 'one' })
  @Returns(Status(201, Object))
  create() {
    return { ok: true };
  }
}

function shopOn(url: string, lines: string[], storeCheck?: 'warn' | 'refuse') {
  const store = new RedisStore({ url, commandTimeoutMs: 300 });
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg), storeCheck })
    .controllers(Shop)
    .provide(Orders.open(store));
  return { app, store };
}

const flush = () => new Promise((r) => setTimeout(r, 10));

describe('the idempotency store checked at start, its failure cause logged', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.stop());

  it('a wrong Redis URL: listen logs an error naming the host and ECONNREFUSED; every POST is 503 and the cause is logged once per outage', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const { app, store } = shopOn(`redis://127.0.0.1:${port}`, lines);
    const { url } = await app.listen({ port: 0 });
    try {
      await flush();
      const atStart = lines.filter((l) =>
        l.startsWith('error: idempotency store of space "orders" does not answer'),
      );
      expect(atStart).toHaveLength(1);
      expect(atStart[0]).toContain(`127.0.0.1:${port}`);
      expect(atStart[0]).toContain('ECONNREFUSED');
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${url}/orders`, {
          method: 'POST',
          headers: { 'idempotency-key': `k${i}` },
        });
        expect(res.status).toBe(503);
      }
      await flush();
      const outage = lines.filter((l) => l.includes('idempotency store unavailable ('));
      expect(outage).toHaveLength(1);
      expect(outage[0]).toContain('ECONNREFUSED');
    } finally {
      await app.close();
      await store.close();
    }
  });

  it("with storeCheck: 'refuse' listen rejects with the cause and starts no socket", async () => {
    const port = await freePort();
    const { app, store } = shopOn(`redis://127.0.0.1:${port}`, [], 'refuse');
    try {
      await expect(app.listen({ port: 0 })).rejects.toThrow(/storeCheck: 'refuse'.*ECONNREFUSED/);
      expect(app.server.listening).toBe(false);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('a database index the server does not have is a warning at listen (ioredis would go on in database 0)', async () => {
    const lines: string[] = [];
    const { app, store } = shopOn(`${redis.url}/99`, lines);
    await app.listen({ port: 0 });
    try {
      await flush();
      expect(
        lines.some(
          (l) =>
            l.startsWith('warning: space "orders": RedisStore') &&
            l.includes('the URL asks for database 99 but the server has 16'),
        ),
      ).toBe(true);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('a maxmemory-policy other than noeviction is a warning at listen; noeviction none', async () => {
    for (const policy of ['allkeys-lru', 'noeviction']) {
      await cli(redis.port, 'config', 'set', 'maxmemory-policy', policy);
      const lines: string[] = [];
      const { app, store } = shopOn(redis.url, lines);
      await app.listen({ port: 0 });
      try {
        await flush();
        const warned = lines.filter(
          (l) =>
            l.startsWith('warning: space "orders": RedisStore') &&
            l.includes('maxmemory-policy is'),
        );
        expect([policy, warned.length]).toEqual([policy, policy === 'noeviction' ? 0 : 1]);
        expect(lines.some((l) => l.startsWith('error:'))).toBe(false);
      } finally {
        await app.close();
        await store.close();
      }
    }
  });
});
