import { WebSocket as Client } from 'ws';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';
import { securityHeaders } from 'fw-http/browser';
import { WebSocketRoute } from 'fw-http/ws';
import { raw } from '../support/raw';

// The security headers of `securityHeaders()` on the answers no middleware sees: those
// written before routing (431 for a head too large, 400 for bad framing, a shed 503) and a
// WebSocket's 101. Real sockets.

@Controller()
class Routes {
  @Get('/ok') @Returns(String) ok() {
    return 'ok';
  }
  @WebSocketRoute('/ws', { origins: '*' }) ws(c: Ctx) {
    c.upgrade((socket) => socket.send('hi'), null);
  }
}

const NOSNIFF = /\r\nx-content-type-options: nosniff\r\n/i;
const FRAMES = /\r\nx-frame-options: DENY\r\n/i;

describe('security headers on answers written before routing, and on a 101', () => {
  let secured: App;
  let plain: App;
  let port = 0;
  let plainPort = 0;
  beforeAll(async () => {
    secured = new App({ log: () => {}, maxHeaderBytes: 1024 })
      .use(securityHeaders())
      .controllers(Routes);
    plain = new App({ log: () => {}, maxHeaderBytes: 1024 }).controllers(Routes);
    port = (await secured.listen({ port: 0 })).port;
    plainPort = (await plain.listen({ port: 0 })).port;
  });
  afterAll(async () => {
    await secured.close();
    await plain.close();
  });

  const tooLarge = `GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`;

  it('a 431 for a head too large carries them; without securityHeaders() it does not', async () => {
    const { text } = await raw(port, tooLarge);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(text).toMatch(NOSNIFF);
    expect(text).toMatch(FRAMES);
    const bare = await raw(plainPort, tooLarge);
    expect(bare.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(bare.text).not.toMatch(NOSNIFF);
  });

  it('a 400 for bad framing (two Host headers) carries them', async () => {
    const { text } = await raw(port, 'GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(NOSNIFF);
  });

  it('a WebSocket 101 carries them', async () => {
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const ws = new Client(`ws://127.0.0.1:${port}/ws`);
      ws.on('upgrade', (res) => resolve(res.headers));
      ws.on('message', () => ws.close());
      ws.on('error', reject);
    });
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
  });
});

it('a shed 503 carries them', async () => {
  let release: () => void = () => {};
  @Controller()
  class Slow {
    @Get('/slow') @Returns(String) async slow() {
      await new Promise<void>((r) => (release = r));
      return 'done';
    }
  }
  const app = new App({ log: () => {}, maxRequestsInFlight: 1 })
    .use(securityHeaders())
    .controllers(Slow);
  const { port } = await app.listen({ port: 0 });
  try {
    const first = fetch(`http://127.0.0.1:${port}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const { text } = await raw(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).toMatch(NOSNIFF);
    release();
    expect((await first).status).toBe(200);
  } finally {
    await app.close();
  }
});
