// SAMPLE.md GET /metrics, OTEL-20: the sample registers the SDK's
// MeterProvider and serves fw's metrics in the Prometheus text format; a replay is counted.
import type { App } from 'fw-http';
import { request } from 'undici';
import { shop } from '../../sample/shop/shop';
import { warehouse } from '../../sample/warehouse/warehouse';

describe('the sample’s GET /metrics (OTEL-20)', () => {
  let w: App;
  let app: App;
  let url = '';
  beforeAll(async () => {
    w = warehouse({ log: () => {} });
    const wh = await w.listen({ port: 0 });
    app = shop({ log: () => {}, warehouseUrl: wh.url, openapiOut: null });
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(async () => {
    await app.close();
    await w.close();
  });

  it('OTEL-20: after the README’s order and its retry, /metrics shows the replay counted', async () => {
    const order = {
      method: 'POST' as const,
      headers: {
        authorization: 'Bearer alice-token',
        'idempotency-key': 'metrics-order-1',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ sku: 'abc-123', qty: 2 }),
    };
    expect((await request(`${url}/orders`, order)).statusCode).toBe(201);
    const again = await request(`${url}/orders`, order);
    expect(again.headers['idempotent-replayed']).toBe('true');
    await again.body.text();

    const res = await request(`${url}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.body.text();
    const line = (name: string, ...labels: string[]) =>
      text.split('\n').find((l) => l.startsWith(name + '{') && labels.every((x) => l.includes(x)));
    expect(
      line(
        'fw_idempotency_outcomes_total',
        'http_route="/orders"',
        'fw_idempotency_outcome="replayed"',
      ),
    ).toMatch(/ 1$/);
    expect(
      line(
        'fw_idempotency_outcomes_total',
        'http_route="/orders"',
        'fw_idempotency_outcome="stored"',
      ),
    ).toMatch(/ 1$/);
    expect(
      line(
        'http_server_request_duration_count',
        'http_request_method="POST"',
        'http_route="/orders"',
        'http_response_status_code="201"',
      ),
    ).toMatch(/ 2$/);
    expect(line('http_client_request_duration_count', 'fw_target="warehouse"')).toMatch(/ 1$/);
    expect(line('fw_store_bytes')).toMatch(/ \d+$/);
  });
});
