import { spawn } from 'node:child_process';
import { tsChild } from '../support/ts-child';

// With @opentelemetry/instrumentation-http registered, that instrumentation opens the SERVER span
// of every request; fw adds its attributes to it (route, idempotency outcome, exception) rather
// than opening a second SERVER span under it. The real instrumentation and SDK, registered in a
// child node before the app starts (see http-instrumentation-child.ts), over real sockets.

interface Shape {
  scope: string;
  name: string;
  kind: string;
  spanId: string;
  parentId: string | null;
  attributes: Record<string, unknown>;
  events: string[];
}

const HTTP_SCOPE = '@opentelemetry/instrumentation-http';
let ran: Record<string, Shape[]> & { metricRoutes?: (string | null)[] };

beforeAll(async () => {
  const { command, args } = tsChild('spec/telemetry/http-instrumentation-child.ts');
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`the child exited ${code}:\n${err}`);
  ran = JSON.parse(out) as typeof ran;
}, 60_000);

const servers = (spans: readonly Shape[]) => spans.filter((s) => s.kind === 'SERVER');

describe('OTEL-01 with @opentelemetry/instrumentation-http registered', () => {
  it('OTEL-01 one SERVER span per request, the instrumentation’s, named by the route template with fw’s http.route', () => {
    const [server, ...more] = servers(ran.get!);
    expect(more).toEqual([]);
    expect(server).toMatchObject({
      scope: HTTP_SCOPE,
      name: 'GET /orders/{id}',
      attributes: { 'http.route': '/orders/{id}', 'http.response.status_code': 200 },
    });
  });

  it('OTEL-05 an idempotent route’s outcome is an attribute of that one span', () => {
    const [server, ...more] = servers(ran.idempotent!);
    expect(more).toEqual([]);
    expect(server).toMatchObject({
      scope: HTTP_SCOPE,
      name: 'POST /orders',
      attributes: {
        'http.route': '/orders',
        'fw.idempotency.outcome': 'stored',
        'fw.idempotency.replayed': false,
      },
    });
  });

  it('OTEL-04 a 500 records the exception on that one span', () => {
    const [server, ...more] = servers(ran.failure!);
    expect(more).toEqual([]);
    expect(server).toMatchObject({ scope: HTTP_SCOPE, name: 'GET /boom' });
    expect(server!.events).toContain('exception');
  });

  it('OTEL-02 a fw/fetch call from the handler is fw’s CLIENT span under that one SERVER span', () => {
    const spans = ran.outbound!;
    expect(
      servers(spans)
        .map((s) => [s.scope, s.name])
        .sort(),
    ).toEqual([
      [HTTP_SCOPE, 'GET /call'],
      [HTTP_SCOPE, 'GET /who'],
    ]);
    const inbound = spans.find((s) => s.name === 'GET /call')!;
    const clients = spans.filter((s) => s.kind === 'CLIENT');
    expect(clients.map((s) => s.scope)).toEqual(['fw-http']);
    expect(clients[0]!.parentId).toBe(inbound.spanId);
    const upstream = spans.find((s) => s.name === 'GET /who')!;
    expect(upstream.parentId).toBe(clients[0]!.spanId);
  });

  it('the instrumentation’s own http.server.request.duration carries the route fw matched', () => {
    expect([...new Set(ran.metricRoutes)].sort()).toEqual([
      '/boom',
      '/call',
      '/orders',
      '/orders/{id}',
      '/who',
    ]);
  });

  it('OTEL-01 app.inject, which the instrumentation never sees, still gets fw’s own SERVER span', () => {
    expect(servers(ran.inject!).map((s) => [s.scope, s.name])).toEqual([
      ['fw-http', 'GET /orders/{id}'],
    ]);
  });
});
