import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { App } from 'fw-http';
import { shop } from '../../../sample/shop/shop';

const CHROMIUM = '/usr/bin/chromium';

/** The docs page in a real browser: Swagger UI served by the sample itself, offline. */
describe('GET /docs in Debian chromium', () => {
  let app: App;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    app = shop({ log: () => {}, openapiOut: null });
    ({ url } = await app.listen({ port: 0 }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("lists every operation of the sample's OpenAPI 3.2 document, loading nothing from outside the app", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const outside: string[] = [];
    const failed: string[] = [];
    // Anything not from the app is refused and remembered: the page must work offline.
    await page.route('**/*', (route) => {
      const target = route.request().url();
      if (target.startsWith(url)) return route.continue();
      outside.push(target);
      return route.abort();
    });
    page.on('requestfailed', (r) => failed.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Chromium reports what the page's Content-Security-Policy blocked on the console.
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });

    const res = await page.goto(`${url}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map(
        (b) =>
          `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    );
    expect(listed).toEqual(
      expect.arrayContaining([
        'POST /orders',
        'GET /orders',
        'GET /catalog',
        'GET /healthz',
        'GET /old-catalog',
      ]),
    );
    expect(listed).not.toContain('GET /openapi.json');
    // Every operation of the OpenAPI 3.2 document is rendered, the typed event stream's included
    // (swagger-ui shows its media type; it does not draw an itemSchema).
    const operations = Object.entries(app.document().paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect([...listed].sort()).toEqual([...operations].sort());
    expect(listed).toContain('GET /events');
    expect(await page.textContent('.info')).toContain('OAS 3.2');
    expect(await page.textContent('.info .title')).toContain('fw sample shop');
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  }, 60_000);

  it('Authorize with a bearer token, then GET /orders through "Try it out" answers 200', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    // What the page sends to GET /orders, to see the token go out.
    const sent: (string | undefined)[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/orders' && r.method() === 'GET')
        sent.push(r.headers()['authorization']);
    });

    await page.goto(`${url}/docs`);
    // The top "Authorize" button is there only because the document lists a security scheme.
    await page.click('.scheme-container button.authorize');
    await page.fill('.modal-ux input[aria-label="auth-bearer-value"]', 'alice-token');
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux button.btn-done');

    const list = page.locator('.opblock.opblock-get', {
      has: page.locator('.opblock-summary-path[data-path="/orders"]'),
    });
    await list.locator('.opblock-summary-control').click();
    await list.locator('button.try-out__btn').click();
    await list.locator('button.execute').click();
    const status = list.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ timeout: 15_000 });
    expect((await status.textContent())?.trim()).toBe('200');
    expect(sent).toEqual(['Bearer alice-token']);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  }, 60_000);
});
