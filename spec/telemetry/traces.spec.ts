// OTEL-01..06: a server span per request, named by the route
// template, continuing the caller's W3C trace; fw/fetch calls made with a Ctx are client spans
// under it and send traceparent upstream; a 5xx records the exception; idempotent routes carry
// their outcome. Checked with the real SDK and an in-memory exporter.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { request } from 'undici';
import { App, Controller, Ctx, Get, Idempotent, Param, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';
import { httpPeer } from '../fetch/loopback';
import { shop } from '../../sample/shop/shop';
import { warehouse } from '../../sample/warehouse/warehouse';

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The finished spans, once at least `n` have ended (a server span ends as its answer closes). */
async function spans(n: number): Promise<ReadableSpan[]> {
  for (let i = 0; i < 100 && exporter.getFinishedSpans().length < n; i++)
    await new Promise((r) => setTimeout(r, 10));
  return exporter.getFinishedSpans();
}

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe('traces through the sample (OTEL-01..03)', () => {
  let shopApp: App;
  let warehouseApp: App;
  let url = '';
  beforeAll(async () => {
    warehouseApp = warehouse({ log: () => {} });
    const w = await warehouseApp.listen({ port: 0 });
    shopApp = shop({ log: () => {}, warehouseUrl: w.url, openapiOut: null });
    url = (await shopApp.listen({ port: 0 })).url;
  });
  afterAll(async () => {
    await shopApp.close();
    await warehouseApp.close();
  });
  beforeEach(() => exporter.reset());

  it('OTEL-01 OTEL-02: POST /orders gives a server span and a client span to the warehouse in the caller’s trace', async () => {
    const res = await request(`${url}/orders`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer alice-token',
        'idempotency-key': `trace-${Date.now()}`,
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'vendor=x',
      },
      body: JSON.stringify({ sku: 'abc', qty: 1 }),
    });
    expect(res.statusCode).toBe(201);
    await res.body.text();
    const all = await spans(3);
    const server = all.find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /orders')!;
    const client = all.find((s) => s.kind === SpanKind.CLIENT)!;
    const upstream = all.find((s) => s.name === 'POST /reservations')!;
    expect(server).toBeDefined();
    expect(server.spanContext().traceId).toBe(CALLER_TRACE);
    expect(server.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(server.spanContext().traceState?.get('vendor')).toBe('x');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/orders',
      'http.response.status_code': 201,
      'url.path': '/orders',
      'server.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'fw.idempotency.outcome': 'stored',
      'fw.idempotency.replayed': false,
    });
    // The client span is the server span's child, in the same trace, per Target.
    expect(client.name).toBe('POST warehouse');
    expect(client.spanContext().traceId).toBe(CALLER_TRACE);
    expect(client.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(client.attributes).toMatchObject({
      'http.request.method': 'POST',
      'fw.target': 'warehouse',
      'http.response.status_code': 201,
      'server.address': '127.0.0.1',
    });
    // traceparent went upstream: the warehouse's own server span is the client span's child.
    expect(upstream.spanContext().traceId).toBe(CALLER_TRACE);
    expect(upstream.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
  });

  it('OTEL-01: without traceparent a request starts its own trace, still shared with its calls', async () => {
    const res = await shopApp.inject({ url: '/quote/abc?qty=2', headers: {} });
    expect(res.status).toBe(200);
    const all = await spans(3);
    const server = all.find((s) => s.name === 'GET /quote/{sku}')!;
    const client = all.find((s) => s.kind === SpanKind.CLIENT)!;
    expect(server.parentSpanContext).toBeUndefined();
    expect(client.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(client.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
  });

  it('OTEL-05: a replay carries fw.idempotency.replayed and its outcome', async () => {
    const headers = {
      authorization: 'Bearer bob-token',
      'idempotency-key': `replay-${Date.now()}`,
    };
    const body = { sku: 'abc', qty: 1 };
    await shopApp.inject({ method: 'POST', url: '/orders', headers, body });
    const again = await shopApp.inject({ method: 'POST', url: '/orders', headers, body });
    expect(again.headers['idempotent-replayed']).toBe('true');
    const all = await spans(4);
    const servers = all.filter((s) => s.name === 'POST /orders');
    expect(servers.map((s) => s.attributes['fw.idempotency.outcome'])).toEqual([
      'stored',
      'replayed',
    ]);
    expect(servers[1].attributes['fw.idempotency.replayed']).toBe(true);
  });
});

const Kept = Space('kept', { ttlSeconds: 60, maxBytes: 4096 });

@Controller()
class Broken {
  @Get('/boom/{id}')
  @Returns(String)
  boom(@Param('id') _id: string): string {
    throw new Error('database connection lost to db-7', { cause: new Error('ECONNRESET') });
  }

  @Get('/missing')
  @Returns(String)
  missing(): string {
    const e = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    throw e;
  }

  @Get('/context')
  @Returns(String)
  ctx(c: Ctx): string {
    const active = trace.getSpan(context.active())?.spanContext().spanId;
    return `${active === trace.getSpan(c.traceContext()!)?.spanContext().spanId}`;
  }

  @Post('/once')
  @Idempotent(Kept)
  @Returns(Status(201, String))
  once(): string {
    return 'ok';
  }
}

describe('server spans (OTEL-01, OTEL-04)', () => {
  const app = new App({ log: () => {} })
    .controllers(Broken)
    .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })));
  beforeEach(() => exporter.reset());

  it('OTEL-04: a 500 sets the error status and records the exception', async () => {
    const res = await app.inject({ url: '/boom/7' });
    expect(res.status).toBe(500);
    const [span] = await spans(1);
    expect(span.name).toBe('GET /boom/{id}');
    expect(span.attributes['http.route']).toBe('/boom/{id}');
    expect(span.attributes['http.response.status_code']).toBe(500);
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'database connection lost to db-7',
    });
    const event = span.events.find((e) => e.name === 'exception')!;
    expect(event.attributes).toMatchObject({
      'exception.type': 'Error',
      'exception.message': 'database connection lost to db-7',
    });
    expect(String(event.attributes!['exception.stacktrace'])).toContain('boom');
  });

  it('OTEL-04: a mapped 404 is no error on the server span and records no exception', async () => {
    const res = await app.inject({ url: '/missing' });
    expect(res.status).toBe(404);
    const [span] = await spans(1);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events).toEqual([]);
  });

  it('OTEL-01: an unrouted request is named by its method alone (no route template)', async () => {
    await app.inject({ url: '/nowhere/12345' });
    const [span] = await spans(1);
    expect(span.name).toBe('GET');
    expect(span.attributes['http.route']).toBeUndefined();
    expect(span.attributes['url.path']).toBe('/nowhere/12345');
  });

  it('OTEL-06: the handler runs with the server span active (its own spans are children)', async () => {
    const res = await app.inject({ url: '/context' });
    expect(res.body).toBe('true');
  });

  it('OTEL-05: a mismatched reuse of a key is marked mismatch', async () => {
    const headers = { 'idempotency-key': `m-${Date.now()}` };
    await app.inject({ method: 'POST', url: '/once', headers, body: 'a' });
    const res = await app.inject({ method: 'POST', url: '/once', headers, body: 'b' });
    expect(res.status).toBe(422);
    const all = await spans(2);
    expect(all.map((s) => s.attributes['fw.idempotency.outcome'])).toEqual(['stored', 'mismatch']);
  });
});

describe('retried calls', () => {
  it('each try of a retried call is its own client span, retries with http.request.resend_count', async () => {
    let n = 0;
    const peer = await httpPeer((_req, res) => {
      res.statusCode = ++n < 3 ? 503 : 200;
      res.end();
    });
    const client = new Client();
    client.start();
    try {
      exporter.reset();
      const up = Target('flaky', { retry: { attempts: 3, backoff: { baseMs: 1, maxMs: 2 } } });
      const res = await up.open(client, { base: peer.origin }).get({ requestId: () => null }, '/x');
      expect(res.status).toBe(200);
      const tries = (await spans(3)).filter((s) => s.kind === SpanKind.CLIENT);
      expect(tries.map((s) => s.attributes['http.request.resend_count'])).toEqual([
        undefined,
        1,
        2,
      ]);
      expect(tries.map((s) => s.attributes['http.response.status_code'])).toEqual([503, 503, 200]);
    } finally {
      await client.close();
      await peer.close();
    }
  });
});
