import { App, Controller, Ctx, Get, Param, Post, fail, Returns } from 'fw-http';
import { connect } from 'node:net';
import { exchange, parseResponses, raw } from '../support/raw';

class Problem {
  constructor(
    readonly problem: string,
    readonly code: number,
  ) {}
  static failure(status: number, message: string) {
    return new Problem(message, status);
  }
}

@Controller()
class ConnController {
  @Returns(Object)
  @Get('/hi')
  hi() {
    return { hi: true };
  }
  @Returns(Object)
  @Get('/slow/{ms}')
  async slow(@Param('ms') ms: number, c: Ctx) {
    await new Promise((r) => setTimeout(r, ms));
    return { slept: true, keep: c.keepAlive() };
  }
  @Returns(Object)
  @Get('/keep')
  keep(c: Ctx) {
    return { keep: c.keepAlive() };
  }
  @Get('/fails') fails() {
    throw fail.conflict('no');
  }
  @Get('/late') late(c: Ctx) {
    c.sendText(200, 'answered');
    throw new Error('after');
  }
  @Returns(Object)
  @Post('/echo')
  async echo(c: Ctx) {
    return { n: (await c.body()).length };
  }
}

describe('over real sockets', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l), headTimeoutMs: 500, requestTimeoutMs: 800 })
    .controllers(ConnController)
    .failures(Problem);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen({ port: 0 })).port;
  });
  afterAll(() => app.close());

  it('CORE-38 CORE-41 every answer carries Date; a kept HTTP/1.1 connection gets no Connection header', async () => {
    const [r] = parseResponses((await raw(port, 'GET /hi HTTP/1.1\r\nHost: x\r\n\r\n')).text);
    expect(r.status).toBe(200);
    expect(r.headers.date).toMatch(/GMT$/);
    expect(r.headers.connection).toBeUndefined();
    expect(r.headers['keep-alive']).toBeUndefined();
  });

  it('CORE-05 pipelined requests are answered in order on one connection', async () => {
    const { text } = await raw(
      port,
      'GET /slow/60 HTTP/1.1\r\nHost: x\r\n\r\nGET /hi HTTP/1.1\r\nHost: x\r\n\r\nGET /fails HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    const rs = parseResponses(text);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 409]);
    expect(JSON.parse(rs[0].body)).toEqual({ slept: true, keep: true });
  });

  it('CORE-39 Connection: close only on an answer after which the server closes', async () => {
    const { text, closed } = await raw(
      port,
      'GET /hi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      { quietMs: 1000 },
    );
    expect(parseResponses(text)[0].headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('CORE-40 CORE-42 Connection: keep-alive only to an HTTP/1.0 client being kept; keepAlive() tells', async () => {
    const kept = parseResponses(
      (await raw(port, 'GET /keep HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')).text,
    )[0];
    expect(kept.headers.connection).toBe('keep-alive');
    expect(JSON.parse(kept.body)).toEqual({ keep: true });
    const { text, closed } = await raw(port, 'GET /keep HTTP/1.0\r\n\r\n', { quietMs: 1000 });
    const r = parseResponses(text)[0];
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body)).toEqual({ keep: false });
    expect(closed).toBe(true);
  });

  it('FAIL-41 the connection stays open after a failure and serves the next request', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const first = await exchange(socket, 'GET /fails HTTP/1.1\r\nHost: x\r\n\r\n', {
      keepOpen: true,
    });
    expect(parseResponses(first.text)[0].status).toBe(409);
    expect(first.closed).toBe(false);
    const second = await exchange(socket, 'GET /hi HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(parseResponses(second.text)[0].status).toBe(200);
  });

  it('FAIL-42 FAIL-43 a handler failing after it answered closes the connection and logs a warning', async () => {
    const { text, closed } = await raw(
      port,
      'GET /late HTTP/1.1\r\nHost: x\r\n\r\nGET /hi HTTP/1.1\r\nHost: x\r\n\r\n',
      { quietMs: 1000 },
    );
    const rs = parseResponses(text);
    expect(rs.map((r) => r.body)).toEqual(['answered']);
    expect(closed).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(lines.join('\n')).toMatch(
      /warning: GET \/late \(ConnController.late\) failed after answering 200/,
    );
  });

  it('FAIL-36 a malformed request head is 400 in the default shape, even with app.failures set', async () => {
    const { text, closed } = await raw(port, 'GARBAGE\r\n\r\n', { quietMs: 1000 });
    const r = parseResponses(text)[0];
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: 'Bad Request', status: 400 });
    expect(r.headers.date).toBeDefined();
    expect(closed).toBe(true);
  });

  it('FAIL-28 FAIL-37 LIMITS-14 a head larger than the read buffer is 431 in the default shape; one that fits is served', async () => {
    const big = await raw(
      port,
      `GET /hi HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      { quietMs: 1000 },
    );
    const r = parseResponses(big.text)[0];
    expect(r.status).toBe(431);
    expect(JSON.parse(r.body)).toEqual({ error: 'Request Header Fields Too Large', status: 431 });
    const fits = await raw(
      port,
      `GET /hi HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(15 * 1024)}\r\n\r\n`,
    );
    expect(parseResponses(fits.text)[0].status).toBe(200);
  });

  it('FAIL-25 FAIL-39 a head that stops arriving is 408 in the default shape', async () => {
    const { text, closed } = await raw(port, 'GET /hi HTTP/1.1\r\nHost: x\r\n', { quietMs: 3000 });
    const r = parseResponses(text)[0];
    expect(r.status).toBe(408);
    expect(JSON.parse(r.body)).toEqual({ error: 'Request Timeout', status: 408 });
    expect(closed).toBe(true);
  });

  it('FAIL-25 a body that stops arriving is 408 too', async () => {
    const { text } = await raw(
      port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\nonly-some',
      { quietMs: 3000 },
    );
    expect(parseResponses(text)[0]?.status).toBe(408);
  });

  it('a failure routed normally takes the custom shape over a socket', async () => {
    const r = parseResponses((await raw(port, 'GET /fails HTTP/1.1\r\nHost: x\r\n\r\n')).text)[0];
    expect(JSON.parse(r.body)).toEqual({ problem: 'no', code: 409 });
  });
});

describe('a requestTimeoutMs shorter than the head deadline', () => {
  it('FAIL-25 listens (Node refuses a head deadline past the request one) and a stalled head is 408 within the request deadline', async () => {
    const app = new App({ log: () => {}, requestTimeoutMs: 600 }).controllers(ConnController); // head default: 10 s
    const { port } = await app.listen();
    try {
      const { text, closed } = await raw(port, 'GET /hi HTTP/1.1\r\nHost: x\r\n', {
        quietMs: 3000,
      });
      expect(parseResponses(text)[0].status).toBe(408);
      expect(closed).toBe(true);
    } finally {
      await app.close();
    }
  });
});
