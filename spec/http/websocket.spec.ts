import { WebSocket as Client } from 'ws';
import { App, Controller, Ctx, Get, RefusalError, logger, Returns } from 'fw-http';
import { cors } from 'fw-http/browser';
import { WebSocketRoute, type UpgradeLoop } from 'fw-http/ws';
import { parseResponses, raw } from '../support/raw';

const echo: UpgradeLoop<{ prefix: string }> = (ws, state) => {
  ws.on('message', (data, binary) =>
    ws.send(binary ? data : state.prefix + data.toString(), { binary }),
  );
};

@Controller('/ws')
class SocketsController {
  @WebSocketRoute('/echo', { origins: ['http://good.example'] }) echo(c: Ctx) {
    c.upgrade(echo, { prefix: 'echo: ' });
  }
  @WebSocketRoute('/open', { origins: '*' }) open(c: Ctx) {
    c.upgrade((ws) => ws.send('hello'), null);
  }
  @WebSocketRoute('/by-port', { origins: (origin, at) => origin === `http://127.0.0.1:${at.port}` })
  byPort(c: Ctx) {
    c.upgrade((ws) => ws.send('port ok'), null);
  }
  @WebSocketRoute('/fails', { origins: '*' }) fails(c: Ctx) {
    c.upgrade(async () => {
      throw new Error('loop broke');
    }, null);
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

/** Connects; `first` is the first message (listened for before the handshake ends, as a server may send at once). */
function connect(
  url: string,
  origin?: string,
): Promise<{ ws: Client | null; status: number; body: string; first: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const ws = new Client(url, origin === undefined ? {} : { origin });
    const first = next(ws);
    ws.once('open', () => resolve({ ws, status: 101, body: '', first }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ ws: null, status: res.statusCode ?? 0, body, first }));
    });
    ws.once('error', reject);
  });
}

const next = (ws: Client) =>
  new Promise<string>((resolve) => ws.once('message', (d) => resolve(d.toString())));

describe('WebSocket routes', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(SocketsController);
  let port = 0;
  let base = '';
  beforeAll(async () => {
    port = (await app.listen()).port;
    base = `ws://127.0.0.1:${port}`;
  });
  afterAll(() => app.close());

  it('EVENTS-04 c.upgrade(loop, state) turns the connection into a WebSocket and hands it, with state, to loop', async () => {
    const { ws, status } = await connect(`${base}/ws/echo`, 'http://good.example');
    expect(status).toBe(101);
    const reply = next(ws!);
    ws!.send('hi');
    expect(await reply).toBe('echo: hi');
    const bin = new Promise<Buffer>((resolve) => ws!.once('message', (d) => resolve(d as Buffer)));
    ws!.send(Buffer.from([1, 2, 3]));
    expect([...(await bin)]).toEqual([1, 2, 3]);
    ws!.close();
  });

  it('AUTH-12 a handshake from an Origin the route did not name is 403, in the default failure shape with Connection: close', async () => {
    const r = await connect(`${base}/ws/echo`, 'http://evil.example');
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ error: 'WebSocket origin not allowed', status: 403 });
    const { text } = await raw(
      port,
      'GET /ws/echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://evil.example\r\n\r\n',
    );
    expect(text).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(text).toMatch(/\r\nDate: /);
    expect(text).toMatch(/\r\nConnection: close\r\n/);
  });

  it("OPEN-47 with origins named, a handshake without Origin is 403; with origins: '*' any origin (or none) is accepted", async () => {
    expect((await connect(`${base}/ws/echo`)).status).toBe(403);
    const open = await connect(`${base}/ws/open`);
    expect(await open.first).toBe('hello');
    open.ws!.close();
    const other = await connect(`${base}/ws/open`, 'http://anywhere.example');
    expect(other.status).toBe(101);
    other.ws!.close();
  });

  it('OPEN-47 origins may be a function of the origin and the local port (for services that learn their port at listen)', async () => {
    const ok = await connect(`${base}/ws/by-port`, `http://127.0.0.1:${port}`);
    expect(await ok.first).toBe('port ok');
    ok.ws!.close();
    expect((await connect(`${base}/ws/by-port`, 'http://127.0.0.1:1')).status).toBe(403);
  });

  it('EVENTS-05 a request to an upgrade route that is not a valid WebSocket upgrade is 400', async () => {
    const plain = await raw(port, 'GET /ws/open HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(plain.text).toMatch(/^HTTP\/1\.1 400 /);
    const badKey = await raw(
      port,
      'GET /ws/open HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n',
    );
    expect(badKey.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(badKey.text).toMatch(/\r\nConnection: close\r\n/);
    expect(badKey.text).toContain('{"error":"not a valid WebSocket upgrade","status":400}');
    const notWs = await raw(
      port,
      'GET /ws/open HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n',
    );
    expect(notWs.text).toMatch(/^HTTP\/1\.1 400 /);
    const injected = await app.inject({ url: '/ws/open' });
    expect(injected.status).toBe(400);
    expect(injected.json()).toEqual({ error: 'not a WebSocket upgrade', status: 400 });
  });

  it('an Upgrade header on an ordinary route is ignored: the route answers and the connection closes', async () => {
    const { text, closed } = await raw(
      port,
      'GET /ws/plain HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    );
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text.endsWith('plain')).toBe(true);
    expect(closed).toBe(true);
  });

  it('a loop that fails closes the socket with 1011 and is logged', async () => {
    const { ws } = await connect(`${base}/ws/fails`);
    const code = await new Promise<number>((resolve) => ws!.once('close', resolve));
    expect(code).toBe(1011);
    expect(lines.some((l) => l.includes('WebSocket loop failed: loop broke'))).toBe(true);
  });

  it('close() closes open WebSockets with 1001 and does not wait for them', async () => {
    const other = new App({ log: () => {} }).controllers(SocketsController);
    const p = (await other.listen()).port;
    const { ws } = await connect(`ws://127.0.0.1:${p}/ws/open`);
    const code = new Promise<number>((resolve) => ws!.once('close', resolve));
    const started = Date.now();
    await other.close();
    expect(await code).toBe(1001);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

class Problem {
  constructor(
    readonly problem: string,
    readonly code: number,
  ) {}
  static failure(status: number, message: string) {
    return new Problem(message, status);
  }
}

describe('WebSocket handshake refusals are routed answers', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(SocketsController)
    .failures(Problem)
    .use(logger)
    .use(cors({ origins: ['http://evil.example', 'http://good.example'] }));
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  const handshake = (path: string, extra: string, body = '') =>
    `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n${body}`;

  it("FAIL-36 FAIL-37 a 403 from the Origin check takes app.failures' shape, the CORS headers and a request log line", async () => {
    const { text } = await raw(
      port,
      handshake(
        '/ws/echo',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://evil.example\r\n',
      ),
    );
    const [r] = parseResponses(text);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toEqual({ problem: 'WebSocket origin not allowed', code: 403 });
    expect(r.headers['access-control-allow-origin']).toBe('http://evil.example');
    expect(r.headers.connection).toBe('close');
    expect(lines.some((l) => /^GET \/ws\/echo 403 /.test(l))).toBe(true);
  });

  it("FAIL-36 FAIL-37 a 400 for a bad handshake (key, version, a body) takes app.failures' shape, CORS and the request log", async () => {
    for (const [extra, body] of [
      ['Sec-WebSocket-Key: short\r\nOrigin: http://good.example\r\n', ''],
      [
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://good.example\r\nContent-Length: 2\r\n',
        'hi',
      ],
      [
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: a b\r\nOrigin: http://good.example\r\n',
        '',
      ],
    ]) {
      const before = lines.length;
      const { text } = await raw(port, handshake('/ws/echo', extra, body));
      const [r] = parseResponses(text);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ problem: 'not a valid WebSocket upgrade', code: 400 });
      expect(r.headers['access-control-allow-origin']).toBe('http://good.example');
      await new Promise((res) => setImmediate(res));
      expect(lines.slice(before).some((l) => /^GET \/ws\/echo 400 /.test(l))).toBe(true);
    }
  });

  it('an admitted handshake is logged as 101 and still works with middleware around it', async () => {
    const { ws, status } = await connect(`ws://127.0.0.1:${port}/ws/echo`, 'http://good.example');
    expect(status).toBe(101);
    const reply = next(ws!);
    ws!.send('hi');
    expect(await reply).toBe('echo: hi');
    ws!.close();
    expect(lines.some((l) => /^GET \/ws\/echo 101 /.test(l))).toBe(true);
  });
});

describe('WebSocket limits are checked at startup', () => {
  it('LIMITS a maxMessageBytes under 1, or a negative or fractional ping or idle time, is a Refusal naming the route', () => {
    @Controller()
    class BadLimits {
      @WebSocketRoute('/a', { origins: '*', maxMessageBytes: 0 }) a(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/b', { origins: '*', pingIntervalMs: -1 }) b(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/c', { origins: '*', idleTimeoutMs: 1.5 }) c(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/d', {
        origins: '*',
        maxMessageBytes: 1,
        pingIntervalMs: 0,
        idleTimeoutMs: 0,
      })
      d(c: Ctx) {
        c.upgrade(() => {}, null);
      }
    }
    let err: unknown;
    try {
      new App({ log: () => {} }).controllers(BadLimits).build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError);
    const problems = (err as RefusalError).problems;
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(
      /GET \/a .*maxMessageBytes must be a whole number of bytes from 1, got 0/,
    );
    expect(problems[1]).toMatch(
      /GET \/b .*pingIntervalMs must be a whole number of ms from 0, got -1/,
    );
    expect(problems[2]).toMatch(
      /GET \/c .*idleTimeoutMs must be a whole number of ms from 0, got 1.5/,
    );
  });
});

describe('a WebSocket route must name its origins', () => {
  it("@WebSocketRoute without origins (or with an empty list) is a Refusal naming the route; origins: '*' is accepted", () => {
    @Controller('/ws')
    class Unsaid {
      @WebSocketRoute('/none') none(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/empty', { origins: [] }) empty(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/any', { origins: '*' }) any(c: Ctx) {
        c.upgrade(() => {}, null);
      }
    }
    let err: unknown;
    try {
      new App({ log: () => {} }).controllers(Unsaid).build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError);
    const problems = (err as RefusalError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^GET \/ws\/none \(Unsaid\.none\): @WebSocketRoute names no origins: .*origins: '\*'/,
    );
    expect(problems[1]).toMatch(
      /^GET \/ws\/empty \(Unsaid\.empty\): @WebSocketRoute names no origins/,
    );
  });
});

describe('maxBufferedBytes is checked at startup', () => {
  it('a maxBufferedBytes under 1 or fractional is a Refusal naming the route; 1 is accepted', () => {
    @Controller('/ws')
    class Buffered {
      @WebSocketRoute('/zero', { origins: '*', maxBufferedBytes: 0 }) zero(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/half', { origins: '*', maxBufferedBytes: 0.5 }) half(c: Ctx) {
        c.upgrade(() => {}, null);
      }
      @WebSocketRoute('/one', { origins: '*', maxBufferedBytes: 1 }) one(c: Ctx) {
        c.upgrade(() => {}, null);
      }
    }
    let err: unknown;
    try {
      new App({ log: () => {} }).controllers(Buffered).build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError);
    const problems = (err as RefusalError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^GET \/ws\/zero .*maxBufferedBytes must be a whole number of bytes from 1, got 0/,
    );
    expect(problems[1]).toMatch(/^GET \/ws\/half .*, got 0\.5/);
  });
});
