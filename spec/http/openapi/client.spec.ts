import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { App } from 'fw-http';
import { shop } from '../../../sample/shop/shop';
import { warehouse } from '../../../sample/warehouse/warehouse';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/**
 * The document is useful to real clients: openapi-typescript turns it into types, tsc checks a
 * small openapi-fetch program against them, and the program's calls succeed against the sample.
 */
describe("a typed client generated from the sample's document", () => {
  let app: App;
  let store: App;
  let url: string;
  // Inside the project (tmp/ is ignored by git) so the program resolves openapi-fetch from node_modules.
  const dir = join(ROOT, 'tmp', `openapi-client-${process.pid}`);

  beforeAll(async () => {
    // POST /orders reserves stock at the warehouse, so the sample's warehouse runs too.
    store = warehouse({ log: () => {} });
    const warehouseUrl = (await store.listen({ port: 0 })).url;
    app = shop({ log: () => {}, openapiOut: null, warehouseUrl });
    ({ url } = await app.listen({ port: 0 }));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('OAS-05 openapi-typescript types compile with tsc and the calls succeed against the running sample', async () => {
    const doc = app.document();
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
    await run(bin('openapi-typescript'), ['openapi.json', '-o', 'schema.ts'], { cwd: dir });
    expect(readFileSync(join(dir, 'schema.ts'), 'utf8')).toContain('export interface paths');

    // POST /orders may or may not require the key as a declared parameter; send it either way.
    const post = doc.paths['/orders'].post as { parameters?: { name: string }[] };
    const keyDeclared = (post.parameters ?? []).some((p) => p.name === 'Idempotency-Key');
    const keyOption = keyDeclared
      ? `params: { header: { 'Idempotency-Key': key } }, headers: auth`
      : `headers: { ...auth, 'Idempotency-Key': key }`;

    writeFileSync(
      join(dir, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './schema';

async function main(): Promise<void> {
  const client = createClient<paths>({ baseUrl: process.env.BASE_URL });
  const auth = { Authorization: 'Bearer alice-token' };
  const key = 'client-' + Date.now();

  const catalog = await client.GET('/catalog');
  if (catalog.data === undefined) throw new Error('GET /catalog: ' + catalog.response.status);
  const sku: string = catalog.data[0].sku;
  const price: number = catalog.data[0].unitPrice;

  const placed = await client.POST('/orders', { body: { sku, qty: 2 }, ${keyOption} });
  if (placed.data === undefined) throw new Error('POST /orders: ' + placed.response.status + ' ' + JSON.stringify(placed.error));
  const id: string = placed.data.id;
  const qty: number = placed.data.qty;

  const mine = await client.GET('/orders', { headers: auth });
  if (mine.data === undefined) throw new Error('GET /orders: ' + mine.response.status);

  const refused = await client.GET('/orders');
  if (refused.error === undefined) throw new Error('GET /orders without a token was not refused');
  const reason: string = refused.error.error;

  const health = await client.GET('/healthz');
  if (health.data === undefined) throw new Error('GET /healthz: ' + health.response.status);
  const status: 'ok' = health.data.status;

  console.log(JSON.stringify({ items: catalog.data.length, price, placed: placed.response.status, id, qty, mine: mine.data.map((o) => o.id), refused: refused.response.status, reason, status }));
}

// Never run: only here so that tsc proves the types are real (an 'any' would make these unused).
export async function typeChecks(client: ReturnType<typeof createClient<paths>>): Promise<void> {
  // @ts-expect-error qty is an integer, not text
  await client.POST('/orders', { body: { sku: 'a', qty: 'two' }, headers: {}, params: { header: { 'Idempotency-Key': 'k' } } });
  // @ts-expect-error no such path
  await client.GET('/nowhere');
  const c = await client.GET('/catalog');
  // @ts-expect-error a catalog item has no colour
  void c.data?.[0].colour;
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
`,
    );
    const tsc = await run(
      bin('tsc'),
      [
        'client.ts',
        '--strict',
        '--noEmit',
        'false',
        '--outDir',
        'out',
        '--module',
        'node16',
        '--moduleResolution',
        'node16',
        '--target',
        'es2022',
        '--lib',
        'es2022,dom',
        '--types',
        'node',
        '--skipLibCheck',
      ],
      { cwd: dir },
    ).catch((e: { stdout: string; stderr: string }) => {
      throw new Error(`tsc failed:\n${e.stdout}${e.stderr}`);
    });
    expect(tsc.stdout).toBe('');

    const { stdout } = await run(process.execPath, [join(dir, 'out', 'client.js')], {
      cwd: dir,
      env: { ...process.env, BASE_URL: url },
    });
    const result = JSON.parse(stdout) as {
      items: number;
      placed: number;
      id: string;
      qty: number;
      mine: string[];
      refused: number;
      reason: string;
      status: string;
    };
    expect(result.items).toBeGreaterThanOrEqual(200);
    expect(result.placed).toBe(201);
    expect(result.qty).toBe(2);
    expect(result.mine).toEqual([result.id]);
    expect(result.refused).toBe(401);
    expect(result.reason.length).toBeGreaterThan(0);
    expect(result.status).toBe('ok');
  }, 90_000);
});
