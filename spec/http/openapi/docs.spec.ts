import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { App } from 'fw';
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
      args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('lists the sample\'s operations, loading nothing from outside the app', async () => {
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

    const res = await page.goto(`${url}/docs`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(listed).toEqual(expect.arrayContaining(['POST /orders', 'GET /orders', 'GET /catalog', 'GET /healthz', 'GET /old-catalog']));
    expect(listed).not.toContain('GET /openapi.json');
    expect(await page.textContent('.info .title')).toContain('fw sample shop');
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
