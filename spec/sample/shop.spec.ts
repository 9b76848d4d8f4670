import { gunzipSync } from 'node:zlib';
import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { warehouse } from '../../sample/warehouse/warehouse';
import { startRedis } from '../support/redis';

const warehouseLines: string[] = [];
let warehouseApp: App;
let warehouseUrl = '';
beforeAll(async () => {
  warehouseApp = warehouse({ log: (l) => warehouseLines.push(l) });
  warehouseUrl = (await warehouseApp.listen({ port: 0 })).url;
});
afterAll(() => warehouseApp.close());

const alice = { authorization: 'Bearer alice-token' };
const bob = { authorization: 'Bearer bob-token' };
let n = 0;
const key = () => ({ 'idempotency-key': `k-${Date.now()}-${n++}` });

describe('the sample shop (SAMPLE.md contract)', () => {
  let app: App;
  beforeEach(async () => {
    app = shop({ log: () => {}, warehouseUrl, openapiOut: null });
    await app.listen({ port: 0 });
  });
  afterEach(() => app.close());

  it('callers: bearer tokens name alice and bob; others are 401 with WWW-Authenticate: Bearer', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer mallory' },
      { authorization: 'Basic YTpi' },
    ] as Record<string, string>[]) {
      const res = await app.inject({ url: '/orders', headers });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(Object.keys(res.json<object>())).toEqual(['error', 'status']);
    }
  });

  it('bearer tokens named after Object.prototype members are 401 on POST /orders, never a caller', async () => {
    for (const token of ['toString', 'constructor', '__proto__', 'valueOf', 'hasOwnProperty']) {
      const res = await app.inject({
        method: 'POST',
        url: '/orders',
        headers: { authorization: `Bearer ${token}`, ...key() },
        body: { sku: 'abc', qty: 1 },
      });
      expect([token, res.status]).toEqual([token, 401]);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('POST /orders answers 201 with the order and Location, once per Idempotency-Key', async () => {
    const k = key();
    const res = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...alice, ...k },
      body: { sku: 'abc', qty: 2 },
    });
    expect(res.status).toBe(201);
    const order = res.json<{ id: string }>();
    expect(order).toMatchObject({ sku: 'abc', qty: 2, account: 'alice', status: 'placed' });
    expect(Object.keys(order).sort()).toEqual([
      'account',
      'createdAt',
      'id',
      'qty',
      'sku',
      'status',
    ]);
    expect(res.headers.location).toBe(`/orders/${order.id}`);
    const again = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...alice, ...k },
      body: { sku: 'abc', qty: 2 },
    });
    expect(again.body).toBe(res.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await app.inject({ url: '/orders', headers: alice })).json<unknown[]>()).toHaveLength(
      1,
    );
  });

  it('POST /orders validates sku 1..32 and qty 1..100 and needs a key', async () => {
    for (const body of [
      { sku: '', qty: 1 },
      { sku: 'a'.repeat(33), qty: 1 },
      { sku: 'a', qty: 0 },
      { sku: 'a', qty: 101 },
      { sku: 'a', qty: 1.5 },
    ]) {
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/orders',
            headers: { ...alice, ...key() },
            body,
          })
        ).status,
      ).toBe(400);
    }
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/orders',
          headers: alice,
          body: { sku: 'a', qty: 1 },
        })
      ).status,
    ).toBe(400);
  });

  it("GET /orders lists the caller's orders newest first; GET /orders/{id} is Versioned and private", async () => {
    const first = (
      await app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...key() },
        body: { sku: 'one', qty: 1 },
      })
    ).json<{ id: string }>();
    const second = (
      await app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...key() },
        body: { sku: 'two', qty: 1 },
      })
    ).json<{ id: string }>();
    expect(
      (await app.inject({ url: '/orders', headers: alice }))
        .json<{ id: string }[]>()
        .map((o) => o.id),
    ).toEqual([second.id, first.id]);
    expect((await app.inject({ url: '/orders', headers: bob })).json()).toEqual([]);
    const one = await app.inject({ url: `/orders/${first.id}`, headers: alice });
    expect(one.headers.etag).toBe('W/"1"');
    expect(
      (
        await app.inject({
          url: `/orders/${first.id}`,
          headers: { ...alice, 'if-none-match': 'W/"1"' },
        })
      ).status,
    ).toBe(304);
    expect((await app.inject({ url: `/orders/${first.id}`, headers: bob })).status).toBe(404);
    expect((await app.inject({ url: '/orders/nope', headers: alice })).status).toBe(404);
  });

  it('POST /orders/{id}/cancel: 200 cancelled (version up), then a typed 409 kept and replayed', async () => {
    const order = (
      await app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...key() },
        body: { sku: 'c', qty: 1 },
      })
    ).json<{ id: string }>();
    const k1 = key();
    const cancelled = await app.inject({
      method: 'POST',
      url: `/orders/${order.id}/cancel`,
      headers: { ...alice, ...k1 },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json()).toMatchObject({ id: order.id, status: 'cancelled' });
    expect((await app.inject({ url: `/orders/${order.id}`, headers: alice })).headers.etag).toBe(
      'W/"2"',
    );
    const k2 = key();
    const twice = await app.inject({
      method: 'POST',
      url: `/orders/${order.id}/cancel`,
      headers: { ...alice, ...k2 },
    });
    expect(twice.status).toBe(409);
    expect(twice.json()).toEqual({ reason: 'already cancelled', orderId: order.id });
    const replay = await app.inject({
      method: 'POST',
      url: `/orders/${order.id}/cancel`,
      headers: { ...alice, ...k2 },
    });
    expect([replay.status, replay.body, replay.headers['idempotent-replayed']]).toEqual([
      409,
      twice.body,
      'true',
    ]);
  });

  it('GET /orders/{id}/receipt.csv and POST /exports answer text/csv; exports are kept and replayed', async () => {
    const order = (
      await app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...key() },
        body: { sku: 'r', qty: 3 },
      })
    ).json<{ id: string }>();
    const receipt = await app.inject({ url: `/orders/${order.id}/receipt.csv`, headers: alice });
    expect(receipt.headers['content-type']).toBe('text/csv');
    expect(receipt.body).toBe(`id,sku,qty,status\n${order.id},r,3,placed\n`);
    const k = key();
    const exp = await app.inject({ method: 'POST', url: '/exports', headers: { ...alice, ...k } });
    expect([exp.status, exp.headers['content-type']]).toEqual([201, 'text/csv']);
    expect(exp.body.split('\n')[0]).toBe('id,sku,qty,status');
    const replay = await app.inject({
      method: 'POST',
      url: '/exports',
      headers: { ...alice, ...k },
    });
    expect([
      replay.headers['content-type'],
      replay.body,
      replay.headers['idempotent-replayed'],
    ]).toEqual(['text/csv', exp.body, 'true']);
  });

  it('GET /catalog is at least 200 items and gzipped for clients that accept it; /old-catalog is 301', async () => {
    const plain = await app.inject({ url: '/catalog' });
    expect(plain.json<unknown[]>().length).toBeGreaterThanOrEqual(200);
    const zipped = await app.inject({ url: '/catalog', headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.bytes).toString()).toBe(plain.body);
    const old = await app.inject({ url: '/old-catalog' });
    expect([old.status, old.headers.location]).toEqual([301, '/catalog']);
  });

  it('GET /healthz is 200 { status: ok }; every failure has the default body', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect(
      (await app.inject({ url: '/nope', headers: { accept: 'application/json' } })).json(),
    ).toEqual({ error: 'no route for GET /nope', status: 404 });
  });

  it('GET /files/{name} serves sample/files; .., absolute names and NUL are 404', async () => {
    const res = await app.inject({ url: '/files/terms.txt' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('Terms of the fw sample shop');
    expect(res.headers['accept-ranges']).toBe('bytes');
    for (const bad of ['..%2Fpackage.json', '%2Fetc%2Fpasswd', 'terms.txt%00', 'missing.txt']) {
      const r = await app.inject({ url: `/files/${bad}` });
      expect([r.status, r.body]).toEqual([404, '{"error":"Not Found","status":404}']);
    }
  });

  it("log lines are JSON in pino's shape: method, path, status, us and the request id", async () => {
    const lines: string[] = [];
    const logged = shop({ log: (l) => lines.push(l), warehouseUrl, openapiOut: null });
    const res = await logged.inject({ url: '/catalog' });
    await new Promise((r) => setImmediate(r));
    const line = lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.req);
    expect(line).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/catalog' },
      res: { statusCode: 200 },
      reqId: res.headers['x-request-id'],
    });
    expect(typeof line.us).toBe('number');
    expect(line.msg).toMatch(/^GET \/catalog 200 \d+µs$/);
  });

  it('GET /quote/{sku}?qty=N asks the warehouse through the Target; the request id travels as X-Request-Id', async () => {
    const res = await app.inject({
      url: '/quote/a%2Fb?qty=3',
      headers: { 'x-request-id': 'trace-quote-1' },
    });
    const q = res.json<{
      sku: string;
      qty: number;
      available: number;
      unitPrice: number;
      total: number;
    }>();
    expect(q).toMatchObject({ sku: 'a/b', qty: 3, available: 1000 });
    expect(q.total).toBe(q.unitPrice * 3);
    expect((await app.inject({ url: '/quote/sold-out?qty=1' })).json()).toMatchObject({
      available: 0,
    });
    for (const bad of ['', '?qty=0', '?qty=101', '?qty=x'])
      expect((await app.inject({ url: `/quote/x${bad}` })).status).toBe(400);
    await new Promise((r) => setTimeout(r, 20));
    const seen = warehouseLines.map((l) => JSON.parse(l)).find((l) => l.reqId === 'trace-quote-1');
    expect(seen).toMatchObject({
      req: { method: 'GET', url: '/stock/a%2Fb' },
      res: { statusCode: 200 },
    });
  });

  it('POST /orders with sku sold-out is a 409 failure from the warehouse, not kept', async () => {
    const k = key();
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...k },
        body: { sku: 'sold-out', qty: 1 },
      });
    const res = await send();
    expect(res.json()).toEqual({ error: 'sku sold-out is sold out', status: 409 });
    expect((await send()).headers['idempotent-replayed']).toBeUndefined();
  });

  it('HEALTH-02 HEALTH-03 GET /healthz is 503 while the warehouse is not ready', async () => {
    const down = shop({ log: () => {}, warehouseUrl: 'http://127.0.0.1:9', openapiOut: null });
    await down.listen({ port: 0 });
    try {
      const res = await down.inject({ url: '/healthz' });
      expect(res.status).toBe(503);
      expect(res.json()).toEqual({ error: 'not ready: warehouse', status: 503 });
    } finally {
      await down.close();
    }
  });
});

describe('the sample shop on Redis', () => {
  it('CACHE-11 two shop instances on one Redis share idempotency records: one handler run, replayed on the other', async () => {
    const redis = await startRedis();
    const slow = warehouse({ log: () => {}, delayMs: 300 });
    const slowUrl = (await slow.listen({ port: 0 })).url;
    const a = shop({ log: () => {}, redisUrl: redis.url, warehouseUrl: slowUrl, openapiOut: null });
    const b = shop({ log: () => {}, redisUrl: redis.url, warehouseUrl: slowUrl, openapiOut: null });
    await a.listen({ port: 0 });
    await b.listen({ port: 0 });
    try {
      const k = key();
      const body = { sku: 'shared', qty: 1 };
      const first = a.inject({ method: 'POST', url: '/orders', headers: { ...alice, ...k }, body });
      await new Promise((r) => setTimeout(r, 100));
      const during = await b.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...k },
        body,
      });
      expect(during.status).toBe(409);
      const placed = await first;
      expect(placed.status).toBe(201);
      const other = await b.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...alice, ...k },
        body,
      });
      expect(other.headers['idempotent-replayed']).toBe('true');
      expect(other.body).toBe(placed.body);
    } finally {
      await slow.close();
      await a.close();
      await b.close();
      await redis.stop();
    }
  });
});
