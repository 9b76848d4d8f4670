import { createServer, type Server } from 'node:net';
import { RefusalError } from 'fw-http';
import { start, startFailure } from '../../sample/start';

describe('npm start: startup failures', () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  it('LOG-09 a port in use: start rejects with the whole message, naming the address, and closes what had started', async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const warehousePort = (free.address() as { port: number }).port;
    await new Promise<void>((r) => free.close(() => r()));
    const e = await start(
      { PORT: String(port), WAREHOUSE_PORT: String(warehousePort) },
      () => {},
    ).catch((err: unknown) => err);
    expect(startFailure(e)).toBe(
      `fw sample did not start: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
    );
    // the warehouse it had started is closed again: its port is free (the process can exit)
    const again = createServer();
    await new Promise<void>((r, j) => again.once('error', j).listen(warehousePort, '127.0.0.1', r));
    await new Promise<void>((r) => again.close(() => r()));
  });

  it('LOG-09 a refusal prints every problem, not a stack', () => {
    const text = startFailure(new RefusalError(['GET /a (A.a): one', 'GET /b (B.b): two']));
    expect(text).toBe(
      'fw sample did not start: fw refused 2 declarations:\n  - GET /a (A.a): one\n  - GET /b (B.b): two',
    );
    expect(text).not.toMatch(/\n\s+at /);
  });

  it('starts on a free port and stops', async () => {
    const { url, stop } = await start({ PORT: '0' }, () => {});
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await stop();
  });
});
