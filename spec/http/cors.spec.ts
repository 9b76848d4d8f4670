import { App, Controller, Get, HttpError, Returns } from 'fw-http';
import { cors, type CorsOptions } from 'fw-http/browser';
import { parseResponses, raw } from '../support/raw';

@Controller()
class CorsController {
  @Returns(Object)
  @Get('/ok')
  ok() {
    return { ok: true };
  }
}

describe('cors: any origin and credentials', () => {
  it("refuses origins: '*' with credentials: true when cors() is called, naming the combination", () => {
    let thrown: unknown;
    try {
      cors({ origins: '*', credentials: true });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect((thrown as HttpError).code).toBe('CorsAnyOriginWithCredentials');
    expect((thrown as HttpError).message).toContain("origins: '*'");
    expect((thrown as HttpError).message).toContain('credentials: true');
  });

  it("origins: '*' without credentials answers Access-Control-Allow-Origin: * and never allows credentials", async () => {
    const app = new App({ log: () => {} }).controllers(CorsController).use(cors({ origins: '*' }));
    const res = await app.inject({ url: '/ok', headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('a listed origin may be given credentials: it is echoed with Vary: Origin, and an unlisted one gets nothing', async () => {
    const options: CorsOptions = { origins: ['https://shop.example'], credentials: true };
    const app = new App({ log: () => {} }).controllers(CorsController).use(cors(options));
    const ok = await app.inject({ url: '/ok', headers: { origin: 'https://shop.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    expect(ok.headers.vary).toBe('Origin');
    const evil = await app.inject({ url: '/ok', headers: { origin: 'https://evil.example' } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(evil.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('a preflight asking for header names that are not names', () => {
  it('a byte above 0x7F in Access-Control-Request-Headers is left out of the allowed list: 204, never 500', async () => {
    const app = new App({ log: () => {} })
      .controllers(CorsController)
      .use(cors({ origins: ['https://shop.example'] }));
    const { port } = await app.listen();
    try {
      const r = await raw(
        port,
        Buffer.from(
          'OPTIONS /ok HTTP/1.1\r\nHost: x\r\nOrigin: https://shop.example\r\n' +
            'Access-Control-Request-Method: POST\r\n' +
            'Access-Control-Request-Headers: content-type, x-caf\xe9, x-trace\r\n\r\n',
          'latin1',
        ),
      );
      const [res] = parseResponses(r.text);
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-headers']).toBe('content-type, x-trace');
      const only = await raw(
        port,
        Buffer.from(
          'OPTIONS /ok HTTP/1.1\r\nHost: x\r\nOrigin: https://shop.example\r\n' +
            'Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: \xff\xfe\r\n\r\n',
          'latin1',
        ),
      );
      const [bare] = parseResponses(only.text);
      expect(bare.status).toBe(204);
      expect(bare.headers['access-control-allow-headers']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
