import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { App, Bytes, Controller, Ctx, Get, Param, Post, Returns, Versioned } from 'fw-http';
import { acceptsGzip } from '../../lib/http/features/compress';

const text = (n: number) => 'x'.repeat(n);

@Controller()
class ZipController {
  @Returns(Object)
  @Get('/json/{n}')
  json(@Param('n') n: number) {
    return { pad: text(n - 10) }; // {"pad":"…"} is n bytes
  }
  @Get('/text/{n}') @Returns(String) text(@Param('n') n: number) {
    return text(n);
  }
  @Get('/type/{t}') type(@Param('t') t: string, c: Ctx) {
    c.send(200, decodeURIComponent(t), text(4000));
  }
  @Post('/empty') empty(): void {}
  @Get('/encoded') encoded(c: Ctx) {
    c.setHeader('Content-Encoding', 'br');
    c.send(200, 'text/plain', text(4000));
  }
  @Get('/stream') async stream(c: Ctx) {
    const out = c.stream(200, 'text/plain');
    await out.write(text(4000));
    out.end();
  }
  @Get('/versioned') @Returns(Versioned(String)) versioned() {
    return Versioned.of(3, text(4000));
  }
  @Get('/vary') vary(c: Ctx) {
    c.setHeader('Vary', 'Origin');
    c.send(200, 'application/json', JSON.stringify(text(4000)));
  }
  @Get('/bytes') @Returns(Bytes) bytes() {
    return new Bytes(text(4000), 'application/octet-stream');
  }
}

const gz = { 'accept-encoding': 'gzip' };
const make = (options?: Parameters<App['compress']>[0]) =>
  new App({ log: () => {} }).controllers(ZipController).compress(options);
const app = make();

describe('compression', () => {
  it('GZIP-01 compression is off until app.compress', async () => {
    const off = new App({ log: () => {} }).controllers(ZipController);
    expect(
      (await off.inject({ url: '/json/4000', headers: gz })).headers['content-encoding'],
    ).toBeUndefined();
  });

  it('GZIP-02 GZIP-07 GZIP-09 GZIP-11 LIMITS-09 a text answer of at least minBytes (1024) is gzipped with the compressed length; 1023 is not', async () => {
    const res = await app.inject({ url: '/json/1024', headers: gz });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
    expect(JSON.parse(gunzipSync(res.bytes).toString()).pad.length).toBe(1014);
    expect(
      (await app.inject({ url: '/json/1023', headers: gz })).headers['content-encoding'],
    ).toBeUndefined();
  });

  it('GZIP-02 a gzipped answer reaches a real socket whole, its compressed bytes sent with the head', async () => {
    const live = make();
    const { port } = await live.listen({ port: 0 });
    try {
      for (const n of [2000, 400_000]) {
        const res = await request(`http://127.0.0.1:${port}/json/${n}`, { headers: gz });
        const got = Buffer.from(await res.body.arrayBuffer());
        expect(res.headers['content-encoding']).toBe('gzip');
        expect(Number(res.headers['content-length'])).toBe(got.length);
        expect(JSON.parse(gunzipSync(got).toString()).pad).toBe(text(n - 10));
      }
    } finally {
      await live.close();
    }
  });

  it('GZIP-17 a body under minBytes is not compressed; minBytes is an option', async () => {
    const custom = make({ minBytes: 100 });
    expect(
      (await custom.inject({ url: '/text/100', headers: gz })).headers['content-encoding'],
    ).toBe('gzip');
    expect(
      (await custom.inject({ url: '/text/99', headers: gz })).headers['content-encoding'],
    ).toBeUndefined();
  });

  it('GZIP-03 GZIP-04 GZIP-05 levels: default is 6, fastest 1, best 9', async () => {
    const { gzipSync } = await import('node:zlib');
    const body = JSON.stringify({
      pad: 'ab'.repeat(3000) + Array.from({ length: 500 }, (_, i) => i).join(','),
    });
    const sizes: Record<string, number> = {};
    for (const level of ['default', 'fastest', 'best'] as const) {
      @Controller()
      class L {
        @Get('/b') b(c: Ctx) {
          c.send(200, 'application/json', body);
        }
      }
      const res = await new App({ log: () => {} })
        .controllers(L)
        .compress({ level })
        .inject({ url: '/b', headers: gz });
      sizes[level] = res.bytes.length;
    }
    expect(sizes.default).toBe(gzipSync(body, { level: 6 }).length);
    expect(sizes.fastest).toBe(gzipSync(body, { level: 1 }).length);
    expect(sizes.best).toBe(gzipSync(body, { level: 9 }).length);
  });

  it.each([
    'text/html',
    'application/json',
    'application/javascript',
    'application/xml',
    'application/wasm',
    'application/problem+json',
    'application/atom+xml',
  ])('GZIP-06 %s is compressible', async (t) => {
    expect(
      (await app.inject({ url: `/type/${encodeURIComponent(t)}`, headers: gz })).headers[
        'content-encoding'
      ],
    ).toBe('gzip');
  });

  it.each([
    ['GZIP-14', 'image/png'],
    ['GZIP-15', 'font/woff2'],
    ['GZIP-16', 'application/octet-stream'],
    ['GZIP-21', 'text/event-stream'],
  ])('%s %s is not compressed', async (_id, t) => {
    expect(
      (await app.inject({ url: `/type/${encodeURIComponent(t)}`, headers: gz })).headers[
        'content-encoding'
      ],
    ).toBeUndefined();
  });

  it('GZIP-08 GZIP-12 a request with no Accept-Encoding gets the body as it is', async () => {
    const res = await app.inject({ url: '/json/4000' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.length).toBe(4000);
  });

  it('GZIP-13 gzip;q=0 gets the body as it is; q-values and * are honoured', async () => {
    expect(
      (await app.inject({ url: '/json/4000', headers: { 'accept-encoding': 'gzip;q=0, br' } }))
        .headers['content-encoding'],
    ).toBeUndefined();
    expect(acceptsGzip('gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*, gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
  });

  it('GZIP-10 a gzipped answer carries Vary: Accept-Encoding, added to a Vary already set (OPEN-58: plain ones too)', async () => {
    expect((await app.inject({ url: '/vary', headers: gz })).headers.vary).toBe(
      'Origin, Accept-Encoding',
    );
    expect((await app.inject({ url: '/json/4000' })).headers.vary).toBe('Accept-Encoding');
  });

  it('GZIP-18 a 204 is not compressed', async () => {
    const res = await app.inject({ method: 'POST', url: '/empty', headers: gz });
    expect(res.status).toBe(204);
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('GZIP-19 an answer where the handler set Content-Encoding is left untouched', async () => {
    const res = await app.inject({ url: '/encoded', headers: gz });
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.body.length).toBe(4000);
  });

  it('GZIP-21 streams are not compressed', async () => {
    const res = await app.inject({ url: '/stream', headers: gz });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.length).toBe(4000);
  });

  it('GZIP-22 CORE-56 HEAD carries the Content-Length and Content-Encoding its GET would have', async () => {
    const get = await app.inject({ url: '/json/4000', headers: gz });
    const head = await app.inject({ method: 'HEAD', url: '/json/4000', headers: gz });
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.body).toBe('');
  });

  it('weak ETags survive compression', async () => {
    const res = await app.inject({ url: '/versioned', headers: gz });
    expect(res.headers.etag).toBe('W/"3"');
    expect(res.headers['content-encoding']).toBe('gzip');
  });

  it('octet-stream Bytes are never compressed', async () => {
    expect(
      (await app.inject({ url: '/bytes', headers: gz })).headers['content-encoding'],
    ).toBeUndefined();
  });
});
