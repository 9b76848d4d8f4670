import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';

// SAMPLE.md's `/` (static) row: sample/public/ held in memory, app.js gzipped, media/ spilled, SPA fallback for navigations.
describe('the sample shop: static files under /', () => {
  let app: App;
  const lines: string[] = [];
  beforeAll(async () => {
    app = shop({
      // fw's lines are JSON; the sample's own SESSION_SECRET warning is plain text
      log: (l) => lines.push(l.startsWith('{') ? JSON.parse(l).msg : l),
      warehouseUrl: 'http://127.0.0.1:9',
      openapiOut: null,
    });
    await app.inject({ url: '/healthz' }); // builds the app
    await new Promise((r) => setImmediate(r));
  });
  afterAll(() => app.close());

  it('STATIC-02 STATIC-05 GET / is index.html: "fw sample shop", linking app.js and style.css', async () => {
    const res = await app.inject({ url: '/', headers: { accept: 'text/html' } });
    expect([res.status, res.headers['content-type'], res.headers['cache-control']]).toEqual([
      200,
      'text/html; charset=utf-8',
      'public, max-age=3600',
    ]);
    expect(res.body).toContain('fw sample shop');
    expect(res.body).toContain('app.js');
    expect(res.body).toContain('style.css');
    expect((await app.inject({ url: '/style.css' })).headers['content-type']).toBe(
      'text/css; charset=utf-8',
    );
  });

  it('STATIC-27 STATIC-32 app.js is over 1 KiB and has a gzipped copy (Vary on both answers)', async () => {
    const plain = await app.inject({ url: '/app.js' });
    expect(plain.bytes.length).toBeGreaterThan(1024);
    const zipped = await app.inject({ url: '/app.js', headers: { 'accept-encoding': 'gzip' } });
    expect([zipped.headers['content-encoding'], zipped.headers.vary, plain.headers.vary]).toEqual([
      'gzip',
      'Accept-Encoding',
      'Accept-Encoding',
    ]);
    expect(gunzipSync(zipped.bytes).equals(plain.bytes)).toBe(true);
  });

  it('STATIC-50 STATIC-52 STATIC-56 media/big.bin is over 256 KiB and spilled (ETag "<mtime hex>-<size hex>"); the startup line says so', async () => {
    const st = statSync(resolve(process.cwd(), 'sample/public/media/big.bin'));
    expect(st.size).toBeGreaterThan(256 * 1024);
    const res = await app.inject({ url: '/media/big.bin' });
    expect([res.status, res.bytes.length, res.headers.etag]).toEqual([
      200,
      st.size,
      `"${Math.trunc(st.mtimeMs).toString(16)}-${st.size.toString(16)}"`,
    ]);
    expect(lines.find((l) => l.startsWith('static /'))).toMatch(
      /: 4 files, \d+ bytes held, \d+ bytes gzipped, 1 spilled$/,
    );
  });

  it('STATIC-22 STATIC-25 navigations to unknown paths get index.html; other Accept is 404', async () => {
    const page = await app.inject({ url: '/shop/cart', headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('fw sample shop');
    const json = await app.inject({ url: '/shop/cart', headers: { accept: 'application/json' } });
    expect([json.status, json.json<{ error: string }>().error]).toEqual([
      404,
      'no route for GET /shop/cart',
    ]);
  });

  it('OPEN-30 /docs, /openapi.json, /healthz and the API routes win over static', async () => {
    const nav = { accept: 'text/html' };
    const health = await app.inject({ url: '/healthz', headers: nav }); // no warehouse here: the route's 503, not index.html
    expect([health.headers['content-type'], health.json<{ status: unknown }>().status]).toEqual([
      'application/json',
      503,
    ]);
    expect(
      (await app.inject({ url: '/openapi.json', headers: nav })).json<{ openapi: string }>()
        .openapi,
    ).toMatch(/^3\./);
    const docs = await app.inject({ url: '/docs', headers: nav });
    expect([
      docs.status,
      docs.body.includes('fw sample shop') && docs.body.includes('app.js'),
    ]).toEqual([200, false]);
    expect(
      (await app.inject({ url: '/catalog', headers: nav })).json<unknown[]>().length,
    ).toBeGreaterThanOrEqual(200);
    expect((await app.inject({ url: '/orders', headers: nav })).status).toBe(401);
  });
});
