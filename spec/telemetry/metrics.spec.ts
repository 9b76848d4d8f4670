// OTEL-10..15: fw's metrics through @opentelemetry/api, read with the
// real SDK's MeterProvider and a reader collected on demand.
import { type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { App, Controller, Ctx, Get, Idempotent, Post, RateLimit, Returns, Status } from 'fw-http';
import { Deprecated } from 'fw-http/openapi';
import { MemoryStore, Space, type Store } from 'fw-http/cache';
import { globalMetricReader } from '../support/metric-reader';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

const reader = globalMetricReader();

async function metric(name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics)
    for (const m of scope.metrics) if (m.descriptor.name === name) return m;
  return undefined;
}

/** The data points of `name` whose attributes hold `attrs`. */
async function points(name: string, attrs: Record<string, unknown>): Promise<DataPoint<unknown>[]> {
  const m = await metric(name);
  return ((m?.dataPoints ?? []) as DataPoint<unknown>[]).filter((p) =>
    Object.entries(attrs).every(([k, v]) => p.attributes[k] === v),
  );
}

const sum = async (name: string, attrs: Record<string, unknown>): Promise<number> =>
  (await points(name, attrs)).reduce((n, p) => n + (p.value as number), 0);

const Kept = Space('kept-metrics', { ttlSeconds: 60, maxBytes: 4096 });
// A space whose store takes claims and refuses every keep: each first answer is sent, not kept.
const Unkept = Space('unkept-metrics', { ttlSeconds: 60, maxBytes: 4096 });
const claimsOnly = new MemoryStore({ bytes: 1 << 20 });
// A MemoryStore provided only through its space, as a shop provides one: its gauges are reported too.
const Aside = Space('aside-metrics', { ttlSeconds: 60, maxBytes: 4096 });
const asideStore = new MemoryStore({ bytes: 3 << 20 });
const refusingKeeps: Store = {
  get: (k) => claimsOnly.get(k),
  putIfAbsent: (k, v, t) => claimsOnly.putIfAbsent(k, v, t),
  put: () => Promise.reject(new Error('store down')),
  del: (k, o) => claimsOnly.del(k, o),
  close: () => claimsOnly.close(),
};
const Upstream = Target('upstream', {});

let release: () => void = () => {};

@Controller()
class UpRoutes {
  @Get('/small')
  @Returns(String)
  small(): string {
    return 'hi';
  }
}

@Controller()
class Routes {
  constructor(readonly upstream: OpenTarget) {}

  @Get('/small')
  @Returns(String)
  small(): string {
    return 'hi';
  }

  @Post('/once')
  @Idempotent(Kept)
  @Returns(Status(201, String))
  once(): string {
    return 'ok';
  }

  @Post('/unkept')
  @Idempotent(Unkept)
  @Returns(Status(201, String))
  unkept(): string {
    return 'sent';
  }

  @Get('/slow')
  @Returns(String)
  async slow(): Promise<string> {
    await new Promise<void>((r) => (release = r));
    return 'done';
  }

  @Get('/limited')
  @RateLimit({ max: 1, perSeconds: 60 })
  @Returns(String)
  limited(): string {
    return 'ok';
  }

  @Get('/via')
  @Returns(String)
  async via(c: Ctx): Promise<string> {
    const res = await this.upstream.get(c, '/small');
    return Buffer.from(res.bytes).toString();
  }
}

describe('metrics (OTEL-10..15)', () => {
  const store = new MemoryStore({ bytes: 1 << 20 });
  const client = new Client();
  let app: App;
  let up: App;
  beforeAll(async () => {
    up = new App({ log: () => {} }).controllers(UpRoutes);
    const { url } = await up.listen({ port: 0 });
    app = new App({ log: () => {}, maxRequestsInFlight: 1 })
      .controllers(Routes)
      .provide(client)
      .provide(Kept.open(store))
      .provide(Unkept.open(refusingKeeps))
      .provide(Aside.open(asideStore))
      .provide(store)
      .provide(Upstream.open(client, { base: url }));
    await app.listen({ port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await up.close();
  });

  it('OTEL-10: http.server.request.duration is a histogram in seconds by method, route and status', async () => {
    await app.inject({ url: '/small' });
    await app.inject({ url: '/small' });
    await new Promise((r) => setImmediate(r));
    const m = await metric('http.server.request.duration');
    expect(m?.descriptor.unit).toBe('s');
    const [p] = await points('http.server.request.duration', {
      'http.request.method': 'GET',
      'http.route': '/small',
      'http.response.status_code': 200,
    });
    expect((p.value as Histogram).count).toBe(2);
    expect((p.value as Histogram).sum).toBeGreaterThan(0);
  });

  it('OTEL-11: http.server.active_requests counts a request while it runs, and not after', async () => {
    const running = app.inject({ url: '/slow' });
    await new Promise((r) => setTimeout(r, 20));
    expect(await sum('http.server.active_requests', { 'http.request.method': 'GET' })).toBe(1);
    // OTEL-12: past maxRequestsInFlight the request is shed, and counted.
    expect((await app.inject({ url: '/small' })).status).toBe(503);
    expect(await sum('fw.server.shed', {})).toBe(1);
    release();
    await running;
    await new Promise((r) => setImmediate(r));
    expect(await sum('http.server.active_requests', { 'http.request.method': 'GET' })).toBe(0);
  });

  it('OTEL-13: idempotency outcomes are counted: stored, replayed, mismatch', async () => {
    const headers = { 'idempotency-key': `k-${Date.now()}` };
    await app.inject({ method: 'POST', url: '/once', headers, body: 'a' });
    await app.inject({ method: 'POST', url: '/once', headers, body: 'a' });
    await app.inject({ method: 'POST', url: '/once', headers, body: 'a' });
    expect((await app.inject({ method: 'POST', url: '/once', headers, body: 'b' })).status).toBe(
      422,
    );
    const at = { 'http.route': '/once' };
    const count = (outcome: string) =>
      sum('fw.idempotency.outcomes', { ...at, 'fw.idempotency.outcome': outcome });
    expect(await count('stored')).toBe(1);
    expect(await count('replayed')).toBe(2);
    expect(await count('mismatch')).toBe(1);
    // OTEL-15: the bytes of the provided MemoryStore are a gauge.
    expect(await sum('fw.store.bytes', { 'fw.store': 0 })).toBe(store.bytesUsed);
    expect(store.bytesUsed).toBeGreaterThan(0);
  });

  it('an answer sent but not kept is counted not_kept; its retry (503) is not run again', async () => {
    const headers = { 'idempotency-key': `u-${Date.now()}` };
    expect((await app.inject({ method: 'POST', url: '/unkept', headers })).status).toBe(201);
    expect((await app.inject({ method: 'POST', url: '/unkept', headers })).status).toBe(503);
    await new Promise((r) => setImmediate(r));
    const at = { 'http.route': '/unkept' };
    expect(
      await sum('fw.idempotency.outcomes', { ...at, 'fw.idempotency.outcome': 'not_kept' }),
    ).toBe(1);
    expect(
      await sum('fw.idempotency.outcomes', { ...at, 'fw.idempotency.outcome': 'stored' }),
    ).toBe(0);
  });

  it('a MemoryStore provided only through its space is reported by the fw.store gauges', async () => {
    expect(await sum('fw.store.budget', { 'fw.store': 1 })).toBe(3 << 20);
    expect(await sum('fw.store.bytes', { 'fw.store': 1 })).toBe(asideStore.bytesUsed);
  });

  it('OTEL-14: rate-limited requests are counted by route', async () => {
    await app.inject({ url: '/limited' });
    expect((await app.inject({ url: '/limited' })).status).toBe(429);
    expect(
      await sum('fw.rate_limit.refused', {
        'http.route': '/limited',
        'fw.rate_limit.outcome': 'over_limit',
      }),
    ).toBe(1);
  });

  it('OTEL-16: http.client.request.duration is recorded per Target', async () => {
    expect((await app.inject({ url: '/via' })).body).toBe('hi');
    const [p] = await points('http.client.request.duration', {
      'fw.target': 'upstream',
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    expect((p.value as Histogram).count).toBe(1);
  });
});

describe('deprecated routes', () => {
  it('fw.deprecated.requests counts the use of a @Deprecated route, by route', async () => {
    @Controller()
    class Old {
      @Get('/old-thing')
      @Deprecated()
      @Returns(String)
      old(): string {
        return 'old';
      }
    }
    const app = new App({ log: () => {} }).controllers(Old);
    const { url } = await app.listen({ port: 0 });
    try {
      const before = await sum('fw.deprecated.requests', { 'http.route': '/old-thing' });
      for (let i = 0; i < 3; i++) await (await fetch(`${url}/old-thing`)).text();
      expect(await sum('fw.deprecated.requests', { 'http.route': '/old-thing' })).toBe(before + 3);
    } finally {
      await app.close();
    }
  });
});
