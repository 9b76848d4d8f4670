import { App, Controller, Get, logger, Returns } from 'fw-http';

@Controller()
class V {
  @Returns(Object)
  @Get('/thing')
  thing() {
    return { ok: true };
  }
}

describe('versioning', () => {
  it('VERS-01 the framework puts no version marker in its own paths or headers', async () => {
    const app = new App({ log: () => {} })
      .controllers(V)
      .use(logger.with({ format: 'json', requestId: true }))
      .health()
      .openapi({})
      .docs();
    app.build();
    for (const r of app.routes) expect(r.path).not.toMatch(/\/v\d+(\/|$)/);
    for (const url of ['/thing', '/healthz', '/openapi.json', '/nowhere']) {
      const res = await app.inject({ url });
      for (const [name, value] of Object.entries(res.headers)) {
        expect(name).not.toMatch(/version/i);
        expect(String(value)).not.toMatch(/\bfw\/\d/);
      }
    }
  });
});
