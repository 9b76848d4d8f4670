import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { emptied, multipart, post, type Part } from '../support/multipart';

const alice = { authorization: 'Bearer alice-token' };
let keys = 0;
/** Alice with a fresh Idempotency-Key: each import its own request. */
const fresh = () => ({ ...alice, 'idempotency-key': `import-${++keys}` });

describe('the sample shop: POST /orders/import (SAMPLE.md contract)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-sample-import-'));
  let app: App;
  let port = 0;
  beforeAll(async () => {
    app = shop({
      log: () => {},
      warehouseUrl: 'http://127.0.0.1:9',
      openapiOut: null,
      uploadDir: dir,
    });
    port = Number(new URL((await app.listen({ port: 0 })).url).port);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect(await emptied(dir)).toEqual([]);
  });

  const send = (parts: Part[], headers: Record<string, string> = fresh()) => {
    const m = multipart(parts);
    return post(port, '/orders/import', m.body, { 'content-type': m.type, ...headers });
  };
  const csv = (data: string | Buffer, type = 'text/csv') => ({
    name: 'csv',
    filename: 'orders.csv',
    type,
    data,
  });

  it('answers 201 { imported, bytes, sha256 } and places the orders', async () => {
    const text = 'sku,qty\nimport-a,2\nimport-b,5\n';
    const res = await send([{ name: 'note', value: 'monday' }, csv(text)]);
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      imported: 2,
      bytes: Buffer.byteLength(text),
      sha256: createHash('sha256').update(text).digest('hex'),
    });
    const orders = await app.inject({ url: '/orders', headers: alice });
    expect(
      orders.json<{ sku: string; qty: number }[]>().filter((o) => o.sku.startsWith('import-')),
    ).toEqual([
      expect.objectContaining({ sku: 'import-b', qty: 5 }),
      expect.objectContaining({ sku: 'import-a', qty: 2 }),
    ]);
  });

  it('note is optional; a file of exactly 1 MiB is read', async () => {
    // Two orders, then blank lines (skipped) up to exactly 1 MiB.
    const head = 'big-a,1\nbig-b,2\n';
    const data = Buffer.from(head + '\n'.repeat(1024 * 1024 - head.length));
    expect(data.length).toBe(1024 * 1024);
    const res = await send([csv(data)]);
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ imported: 2, bytes: data.length });
  });

  it('a file over 1 MiB is 413', async () => {
    const res = await send([csv(Buffer.alloc(1024 * 1024 + 1, 0x61))]);
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({
      error: 'form.csv: file larger than 1048576 bytes (maxBytes)',
      status: 413,
    });
  });

  it('another type is 415, no file is 400, a note over 200 chars is 400', async () => {
    const other = await send([csv('a,1\n', 'application/json')]);
    expect(other.status).toBe(415);
    expect(other.json<{ error: string }>().error).toMatch(/^form\.csv: /);
    const none = await send([{ name: 'note', value: 'n' }]);
    expect(none.status).toBe(400);
    expect(none.json()).toEqual({ error: 'form.csv: a file is required', status: 400 });
    const long = await send([{ name: 'note', value: 'n'.repeat(201) }, csv('a,1\n')]);
    expect(long.status).toBe(400);
    expect(long.json<{ error: string }>().error).toMatch(/^form\.note: /);
  });

  it('bearer required: none or an unknown token is 401 with WWW-Authenticate: Bearer', async () => {
    const res = await send([csv('a,1\n')], {});
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('a bad line is 400 naming it, and nothing is imported', async () => {
    const res = await send([csv('ok-sku,1\nbad line\n')]);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      error: 'csv line 2: expected sku,qty with qty 1..100',
      status: 400,
    });
    const orders = await app.inject({ url: '/orders', headers: alice });
    expect(orders.json<{ sku: string }[]>().some((o) => o.sku === 'ok-sku')).toBe(false);
  });

  /** How many orders alice holds, every page of GET /orders read. */
  const aliceOrders = async (): Promise<number> => {
    let n = 0;
    for (let url: string | null = '/orders'; url !== null;) {
      const res = await app.inject({ url, headers: alice });
      n += res.json<unknown[]>().length;
      const link = res.headers['link'] as string | undefined;
      url = link === undefined ? null : /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
    }
    return n;
  };
  const lines = (n: number, sku = 'line') =>
    Array.from({ length: n }, (_, i) => `${sku}-${i},1`).join('\n');

  it('an import takes 1000 order lines; a header, blank lines and CRLF do not count', async () => {
    const before = await aliceOrders();
    const text = `sku,qty\r\n\r\n${lines(1000).replace(/\n/g, '\r\n')}\r\n\r\n`;
    const res = await send([csv(text)]);
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ imported: 1000 });
    expect(await aliceOrders()).toBe(before + 1000);
  });

  it('1001 order lines are 413 naming the limit, and nothing is imported (a 1 MiB file of a,1 places no order)', async () => {
    const before = await aliceOrders();
    const over = await send([csv(`sku,qty\n${lines(1001)}\n`)]);
    expect(over.status).toBe(413);
    expect(over.json()).toEqual({
      error: 'csv: more than 1000 order lines (an import takes at most 1000)',
      status: 413,
    });
    const mib = Buffer.from('a,1\n'.repeat(256 * 1024));
    expect(mib.length).toBe(1024 * 1024);
    expect((await send([csv(mib)])).status).toBe(413);
    expect(await aliceOrders()).toBe(before);
  });

  it('checked in order: over 1000 order lines is 413 even when a line is bad; then a bad line is 400', async () => {
    const both = await send([csv(`bad line\n${lines(1001)}\n`)]);
    expect(both.status).toBe(413);
    const bad = await send([csv(`${lines(999)}\nbad line\n`)]);
    expect(bad.json()).toEqual({
      error: 'csv line 1000: expected sku,qty with qty 1..100',
      status: 400,
    });
  });

  it('Idempotency-Key is required: missing is 400, as on POST /orders', async () => {
    const m = multipart([csv('a,1\n')]);
    const res = await post(port, '/orders/import', m.body, { 'content-type': m.type, ...alice });
    const order = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...alice, 'content-type': 'application/json' },
      body: '{"sku":"a","qty":1}',
    });
    expect(res.status).toBe(400);
    expect(order.status).toBe(400);
    expect(res.text).toBe(order.body);
    expect(res.headers['link']).toBe(order.headers['link']);
  });

  it('a retry with the key replays the answer and imports once; the key with another file is 422', async () => {
    const before = await aliceOrders();
    const key = { ...alice, 'idempotency-key': 'import-retried' };
    const first = await send([csv(lines(30, 'retried'))], key);
    expect(first.status).toBe(201);
    const again = await send([csv(lines(30, 'retried'))], key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    const other = await send([csv(lines(31, 'retried'))], key);
    expect(other.status).toBe(422);
    expect(await aliceOrders()).toBe(before + 30);
    // Per account: bob's import under the same key is his own.
    const bob = await send([csv(lines(2, 'bobs'))], {
      authorization: 'Bearer bob-token',
      'idempotency-key': 'import-retried',
    });
    expect(bob.status).toBe(201);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
  });
});
