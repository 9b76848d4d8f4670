import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { warehouse } from '../../sample/warehouse/warehouse';

// The sample's browser-facing defaults: security headers on its answers, failures
// and static files, and POST /login refusing another site while curl-like callers pass.

let warehouseApp: App;
let app: App;
let url = '';
beforeAll(async () => {
  warehouseApp = warehouse({ log: () => {} });
  const warehouseUrl = (await warehouseApp.listen({ port: 0 })).url;
  app = shop({ log: () => {}, warehouseUrl, openapiOut: null });
  url = (await app.listen({ port: 0 })).url;
});
afterAll(async () => {
  await app.close();
  await warehouseApp.close();
});

describe('the sample', () => {
  it('answers, failures and static files carry nosniff, Referrer-Policy and frame-ancestors', async () => {
    for (const path of ['/catalog', '/orders', '/index.html', '/files/nope']) {
      const res = await fetch(url + path);
      await res.arrayBuffer();
      expect([path, res.headers.get('x-content-type-options')]).toEqual([path, 'nosniff']);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    }
  });

  it('POST /login from another site is 403 CrossSiteRequest; without browser headers it still logs in', async () => {
    const login = (headers: Record<string, string>) =>
      fetch(`${url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"account":"alice"}',
      });
    const refused = await login({ 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' });
    expect(refused.status).toBe(403);
    expect(Object.keys((await refused.json()) as object)).toEqual(['error', 'status']);
    const ok = await login({});
    expect(ok.status).toBe(200);
    expect(ok.headers.get('set-cookie')).toMatch(/^fw_session=/);
  });
});
