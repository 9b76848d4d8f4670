import { createHash } from 'node:crypto';
import { App, Controller, Ctx, Get, Post, RateLimit, fail, Returns } from 'fw-http';
import { connect } from 'node:net';
import { post, send } from '../support/post';
import { exchange, parseResponses, raw } from '../support/raw';

class Problem {
  constructor(readonly problem: string) {}
  static failure(_s: number, m: string) {
    return new Problem(m);
  }
}

let released: () => void = () => {};
@Controller()
class LimitsController {
  @Returns(Object)
  @Post('/upload')
  async upload(c: Ctx) {
    const hash = createHash('sha256');
    let n = 0;
    for await (const chunk of c.bodyStream({ maxBytes: 1000 })) {
      hash.update(chunk);
      n += chunk.length;
    }
    return { n, sha: hash.digest('hex').slice(0, 8) };
  }
  @Returns(Object)
  @Post('/login')
  @RateLimit({ max: 2, perSeconds: 60 })
  login() {
    return { ok: true };
  }
  @Returns(Object)
  @Get('/nap')
  async nap(c: Ctx) {
    await c.sleep(10_000);
    return { woke: true };
  }
  @Returns(Object)
  @Get('/hold')
  async hold() {
    await new Promise<void>((r) => (released = r));
    return { held: true };
  }
  @Returns(Object)
  @Get('/quick')
  quick() {
    return { quick: true };
  }
  @Get('/never') never() {
    throw fail.conflict('never');
  }
}

describe('limits', () => {
  it('FAIL-26 a body streamed past its maxBytes is 413', async () => {
    const app = new App({ log: () => {} }).controllers(LimitsController);
    expect(
      (await app.inject({ method: 'POST', url: '/upload', body: Buffer.alloc(1000) })).json(),
    ).toMatchObject({ n: 1000 });
    const over = await app.inject({ method: 'POST', url: '/upload', body: Buffer.alloc(1001) });
    expect(over.status).toBe(413);
    expect(over.json()).toEqual({ error: 'request body is larger than 1000 bytes', status: 413 });
  });

  it('FAIL-26 c.bodyStream over a real socket, in pieces: exactly maxBytes is read, maxBytes + 1 is 413', async () => {
    const app = new App({ log: () => {} }).controllers(LimitsController);
    const { port } = await app.listen();
    /** Posts `total` bytes as two pieces that arrive apart: the bound is on the sum, not on a piece. */
    const post = async (total: number) => {
      const socket = connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${total}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(600, 0x61));
      await new Promise((r) => setTimeout(r, 50));
      return parseResponses(
        (await exchange(socket, Buffer.alloc(total - 600, 0x62), { quietMs: 300 })).text,
      )[0];
    };
    try {
      const exact = await post(1000);
      expect(exact.status).toBe(200);
      expect(JSON.parse(exact.body)).toMatchObject({ n: 1000 });
      const over = await post(1001);
      expect(over.status).toBe(413);
      expect(JSON.parse(over.body)).toEqual({
        error: 'request body is larger than 1000 bytes',
        status: 413,
      });
    } finally {
      await app.close();
    }
  });

  it('FAIL-27 an address past its allowance is 429 with Retry-After', async () => {
    const app = new App({ log: () => {} }).controllers(LimitsController);
    expect((await app.inject({ method: 'POST', url: '/login' })).status).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/login' })).status).toBe(200);
    const third = await app.inject({ method: 'POST', url: '/login' });
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(third.json()).toEqual({ error: 'at most 2 requests per 60 s', status: 429 });
  });

  it('FAIL-29 a request cancelled while waiting on a sleep is 503', async () => {
    const app = new App({ log: () => {}, closeGraceMs: 100 }).controllers(LimitsController);
    const { port } = await app.listen();
    const pending = raw(port, 'GET /nap HTTP/1.1\r\nHost: x\r\n\r\n', { quietMs: 2000 });
    await new Promise((r) => setTimeout(r, 100));
    await app.close();
    const [res] = parseResponses((await pending).text);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.body)).toEqual({ error: 'cancelled while waiting', status: 503 });
  });

  it('FAIL-30 FAIL-38 a request past maxRequestsInFlight is shed: 503 in the default shape even with app.failures', async () => {
    const app = new App({ log: () => {}, maxRequestsInFlight: 1 })
      .controllers(LimitsController)
      .failures(Problem);
    const { port } = await app.listen();
    try {
      const held = raw(port, 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n', { quietMs: 1000 });
      await new Promise((r) => setTimeout(r, 100));
      const [shed] = parseResponses(
        (await raw(port, 'GET /quick HTTP/1.1\r\nHost: x\r\n\r\n')).text,
      );
      expect(shed.status).toBe(503);
      expect(shed.headers['retry-after']).toBe('1');
      expect(JSON.parse(shed.body)).toEqual({ error: 'server busy', status: 503 });
      released();
      expect(JSON.parse(parseResponses((await held).text)[0].body)).toEqual({ held: true });
      const [after] = parseResponses(
        (await raw(port, 'GET /never HTTP/1.1\r\nHost: x\r\n\r\n')).text,
      );
      expect(JSON.parse(after.body)).toEqual({ problem: 'never' });
    } finally {
      await app.close();
    }
  });
});

@Controller()
class BoundedRateController {
  @Returns(Object)
  @Post('/signin')
  @RateLimit({ max: 1, perSeconds: 60, maxAddresses: 2 })
  signin() {
    return { ok: true };
  }
}

describe('rate-limit table bound', () => {
  it('FAIL-27 OPEN-49 over real sockets: after maxAddresses + 1 clients, a new client is served by a window of its own; the least recently seen is forgotten, the others still 429', async () => {
    const app = new App({ log: () => {} }).controllers(BoundedRateController);
    const { port } = await app.listen();
    try {
      expect((await post(port, '/signin', '127.0.0.1')).status).toBe(200);
      expect((await post(port, '/signin', '127.0.0.2')).status).toBe(200);
      // The table holds 2: the third client takes the place of the first, never a 503.
      const third = await send(port, '/signin', { localAddress: '127.0.0.3' });
      expect([third.status, third.headers['ratelimit']]).toEqual([200, '"default";r=0;t=60']);
      for (const known of ['127.0.0.2', '127.0.0.3']) {
        const over = await post(port, '/signin', known);
        expect([over.status, JSON.parse(over.body)]).toEqual([
          429,
          { error: 'at most 1 requests per 60 s', status: 429 },
        ]);
        expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(59);
      }
      // A fourth new client is served too, in the place of 127.0.0.2 (seen least recently now).
      expect((await post(port, '/signin', '127.0.0.4')).status).toBe(200);
      // The forgotten first client starts afresh: what serving every new client costs.
      expect((await post(port, '/signin', '127.0.0.1')).status).toBe(200);
      expect((await post(port, '/signin', '127.0.0.4')).status).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('refuses a maxAddresses that is not a positive whole number, naming the route', () => {
    @Controller()
    class Bad {
      @Post('/x') @RateLimit({ max: 1, perSeconds: 1, maxAddresses: 0 }) x() {}
    }
    expect(() => new App({ log: () => {} }).controllers(Bad).build()).toThrow(
      /POST \/x.*maxAddresses/s,
    );
  });
});
