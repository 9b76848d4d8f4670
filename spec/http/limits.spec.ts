import { createHash } from 'node:crypto';
import { App, Controller, Ctx, Get, Post, RateLimit, fail } from 'fw';
import { parseResponses, raw } from '../support/raw';

class Problem {
  constructor(readonly problem: string) {}
  static failure(_s: number, m: string) {
    return new Problem(m);
  }
}

let released: () => void = () => {};
@Controller()
class LimitsController {
  @Post('/upload') async upload(c: Ctx) {
    const hash = createHash('sha256');
    let n = 0;
    for await (const chunk of c.bodyStream({ maxBytes: 1000 })) {
      hash.update(chunk);
      n += chunk.length;
    }
    return { n, sha: hash.digest('hex').slice(0, 8) };
  }
  @Post('/login') @RateLimit({ max: 2, perSeconds: 60 }) login() {
    return { ok: true };
  }
  @Get('/nap') async nap(c: Ctx) {
    await c.sleep(10_000);
    return { woke: true };
  }
  @Get('/hold') async hold() {
    await new Promise<void>((r) => (released = r));
    return { held: true };
  }
  @Get('/quick') quick() {
    return { quick: true };
  }
  @Get('/never') never() {
    throw fail.conflict('never');
  }
}

describe('limits', () => {
  it('FAIL-26 a body streamed past its maxBytes is 413', async () => {
    const app = new App({ log: () => {} }).controllers(LimitsController);
    expect((await app.inject({ method: 'POST', url: '/upload', body: Buffer.alloc(1000) })).json()).toMatchObject({ n: 1000 });
    const over = await app.inject({ method: 'POST', url: '/upload', body: Buffer.alloc(1001) });
    expect(over.status).toBe(413);
    expect(over.json()).toEqual({ error: 'request body is larger than 1000 bytes', status: 413 });
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
    const app = new App({ log: () => {}, maxRequestsInFlight: 1 }).controllers(LimitsController).failures(Problem);
    const { port } = await app.listen();
    try {
      const held = raw(port, 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n', { quietMs: 1000 });
      await new Promise((r) => setTimeout(r, 100));
      const [shed] = parseResponses((await raw(port, 'GET /quick HTTP/1.1\r\nHost: x\r\n\r\n')).text);
      expect(shed.status).toBe(503);
      expect(shed.headers['retry-after']).toBe('1');
      expect(JSON.parse(shed.body)).toEqual({ error: 'server busy', status: 503 });
      released();
      expect(JSON.parse(parseResponses((await held).text)[0].body)).toEqual({ held: true });
      const [after] = parseResponses((await raw(port, 'GET /never HTTP/1.1\r\nHost: x\r\n\r\n')).text);
      expect(JSON.parse(after.body)).toEqual({ problem: 'never' });
    } finally {
      await app.close();
    }
  });
});
