import { App, Controller, Get, HttpError, cors, type CorsOptions, Returns } from 'fw-http';

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
