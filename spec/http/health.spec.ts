import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, Controller, Get } from 'fw';
import { Client, Target } from 'fw/fetch';

@Controller()
class Slow {
  @Get('/slow') async slow() {
    await new Promise((r) => setTimeout(r, 300));
    return { done: true };
  }
}

describe('health', () => {
  let upstream: Server;
  let ready = true;
  let base = '';
  beforeAll(async () => {
    upstream = createServer((req, res) => res.writeHead(req.url === '/ready' && ready ? 200 : 503).end());
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => upstream.close(r)));

  it('HEALTH-01 HEALTH-03 FETCH-15 the framework provides a health route that probes each target; app.listen() starts the client', async () => {
    const client = new Client();
    const app = new App({ log: () => {} }).provide(client).provide(Target('upstream', { ready: '/ready' }).open(client, { base })).health();
    expect(client.started).toBe(false);
    await app.listen();
    try {
      expect(client.started).toBe(true);
      ready = true;
      expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
      ready = false;
      const down = await app.inject({ url: '/healthz' });
      expect([down.status, down.json()]).toEqual([503, { error: 'not ready: upstream', status: 503 }]);
    } finally {
      ready = true;
      await app.close();
    }
  });

  it('HEALTH-04 a target with ready: null counts as ready once the client has started', async () => {
    const client = new Client();
    const app = new App({ log: () => {} }).provide(client).provide(Target('plain').open(client, { base })).health('/health');
    expect((await app.inject({ url: '/health' })).status).toBe(503);
    client.start();
    expect((await app.inject({ url: '/health' })).status).toBe(200);
    await client.close();
  });

  it('HEALTH-05 the health route answers 503 while the server is stopping', async () => {
    const app = new App({ log: () => {} }).controllers(Slow).health();
    await app.listen();
    const inFlight = app.inject({ url: '/slow' });
    const closing = app.close();
    const res = await app.inject({ url: '/healthz' });
    expect([res.status, res.json()]).toEqual([503, { error: 'server is stopping', status: 503 }]);
    expect((await inFlight).json()).toEqual({ done: true });
    await closing;
  });
});
