import { App, Controller, Get, fail, type Middleware, Returns } from 'fw-http';
import { cors } from 'fw-http/browser';

class Problem {
  constructor(readonly problem: string) {}
  static failure(_status: number, message: string) {
    return new Problem(message);
  }
}

@Controller()
class MwController {
  @Returns(Object)
  @Get('/ok')
  ok() {
    return { ok: true };
  }
  @Get('/fails') fails() {
    throw fail.conflict('no');
  }
}

describe('middleware', () => {
  it('CORE-09 app.use wraps every route and framework answer (404, 405), in order; the chain is put together at build', async () => {
    const seen: string[] = [];
    const tag =
      (name: string): Middleware =>
      async (c, next) => {
        seen.push(`${name}>`);
        c.setHeader(`x-${name}`, '1');
        await next();
        seen.push(`<${name}:${c.status}`);
      };
    const app = new App({ log: () => {} }).controllers(MwController).use(tag('a'));
    app.build();
    expect(() => app.use(tag('late'))).toThrow(/app\.use\(\) called after the app was built/); // REF-39
    await app.inject({ url: '/ok' });
    const missing = await app.inject({ url: '/missing' });
    const wrong = await app.inject({ method: 'DELETE', url: '/ok' });
    expect(seen).toEqual(['a>', '<a:200', 'a>', '<a:404', 'a>', '<a:405']);
    expect(missing.headers['x-a']).toBe('1');
    expect(wrong.headers['x-a']).toBe('1');
  });

  it('CORE-10 the in-process test client goes through routing, middleware and failures without a socket', async () => {
    const app = new App({ log: () => {} }).controllers(MwController).use(async (c, next) => {
      c.setHeader('x-wrapped', 'yes');
      await next();
    });
    const res = await app.inject({ url: '/fails' });
    expect([res.status, res.headers['x-wrapped'], res.json()]).toEqual([
      409,
      'yes',
      { error: 'no', status: 409 },
    ]);
    expect(app.server.listening).toBe(false);
  });

  it('a middleware that throws answers in the failure shape', async () => {
    const app = new App({ log: () => {} }).controllers(MwController).use(() => {
      throw fail.forbidden('blocked');
    });
    expect((await app.inject({ url: '/ok' })).json()).toEqual({ error: 'blocked', status: 403 });
  });
});

describe('cors', () => {
  const app = new App({ log: () => {} })
    .controllers(MwController)
    .failures(Problem)
    .use(cors({ origins: ['https://shop.example'], maxAge: 600 }));
  const origin = { origin: 'https://shop.example' };

  it('FAIL-35 a custom-shaped failure still carries the CORS headers', async () => {
    const res = await app.inject({ url: '/fails', headers: origin });
    expect(res.json()).toEqual({ problem: 'no' });
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(res.headers.vary).toBe('Origin');
    expect(
      (await app.inject({ url: '/nowhere', headers: origin })).headers[
        'access-control-allow-origin'
      ],
    ).toBe('https://shop.example');
  });

  it('answers a preflight itself and ignores unknown origins', async () => {
    const pre = await app.inject({
      method: 'OPTIONS',
      url: '/ok',
      headers: {
        ...origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-methods']).toContain('POST');
    expect(pre.headers['access-control-allow-headers']).toBe('content-type');
    expect(pre.headers['access-control-max-age']).toBe('600');
    expect(
      (await app.inject({ url: '/ok', headers: { origin: 'https://evil.example' } })).headers[
        'access-control-allow-origin'
      ],
    ).toBeUndefined();
  });
});
