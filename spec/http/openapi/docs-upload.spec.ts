import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { App } from 'fw-http';
import { shop } from '../../../sample/shop/shop';
import { emptied } from '../../support/multipart';

const CHROMIUM = '/usr/bin/chromium';

/** An upload through the docs page's "Try it out", in a real browser. */
describe('POST /orders/import from /docs in Debian chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-docs-upload-'));
  let app: App;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    app = shop({ log: () => {}, openapiOut: null, uploadDir: dir });
    ({ url } = await app.listen({ port: 0 }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Authorize, choose a CSV file in "Try it out", Execute: 201 with the import', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/docs`);
    await page.click('.scheme-container button.authorize');
    await page.fill('.modal-ux input[aria-label="auth-bearer-value"]', 'alice-token');
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux button.btn-done');

    const op = page.locator('.opblock.opblock-post', {
      has: page.locator('.opblock-summary-path[data-path="/orders/import"]'),
    });
    await op.locator('.opblock-summary-control').click();
    await op.locator('button.try-out__btn').click();
    // The import is idempotent: its key is a header parameter of the form.
    await op.locator('tr[data-param-name="Idempotency-Key"] input').fill('docs-import-1');
    await op.locator('input[type="file"]').setInputFiles({
      name: 'orders.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('sku,qty\ndocs-a,3\n'),
    });
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ timeout: 15_000 });
    expect((await status.textContent())?.trim()).toBe('201');
    const body = await op
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .textContent();
    expect(JSON.parse(body ?? '{}')).toMatchObject({ imported: 1, bytes: 17 });
    expect(errors).toEqual([]);
    expect(await emptied(dir)).toEqual([]);
    await context.close();
  }, 60_000);
});
