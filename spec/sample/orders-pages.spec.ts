import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { multipart, post } from '../support/multipart';

// GET /orders as SAMPLE.md says: pages of at most 100, newest first in a stable order (ties broken
// by a sequence), `Link: </orders?after=ID>; rel="next"` while more follow and never on the last
// page, an `after` naming no order of the caller's → 400. Orders are placed by imports here (the
// in-memory book; spec/sample/database.spec.ts pages the Postgres one).

const alice = { authorization: 'Bearer alice-token' };
const bob = { authorization: 'Bearer bob-token' };

interface Listed {
  id: string;
  sku: string;
  createdAt: string;
}

let app: App;
let port = 0;
let keys = 0;
beforeAll(async () => {
  app = shop({ log: () => {}, warehouseUrl: 'http://127.0.0.1:9', openapiOut: null });
  port = Number(new URL((await app.listen({ port: 0 })).url).port);
});
afterAll(async () => {
  await app.close();
});

/** Imports `n` orders `prefix-0` … `prefix-(n-1)` for the caller. */
async function importOrders(headers: Record<string, string>, prefix: string, n: number) {
  const text = Array.from({ length: n }, (_, i) => `${prefix}-${i},1`).join('\n');
  const m = multipart([{ name: 'csv', filename: 'o.csv', type: 'text/csv', data: text }]);
  const res = await post(port, '/orders/import', m.body, {
    'content-type': m.type,
    'idempotency-key': `pages-${++keys}`,
    ...headers,
  });
  expect(res.status).toBe(201);
}

/** Every page from `/orders`, following each `Link`: the pages and the links seen. */
async function allPages(headers: Record<string, string>) {
  const pages: Listed[][] = [];
  const links: (string | undefined)[] = [];
  for (let url: string | null = '/orders'; url !== null;) {
    const res = await app.inject({ url, headers });
    expect(res.status).toBe(200);
    pages.push(res.json<Listed[]>());
    const link = res.headers['link'] as string | undefined;
    links.push(link);
    url = link === undefined ? null : /^<(\/orders\?after=[^>]+)>; rel="next"$/.exec(link)![1]!;
  }
  return { pages, links };
}

const skus = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${n - 1 - i}`);

describe('the sample shop: GET /orders in pages (SAMPLE.md contract)', () => {
  it('250 orders: pages of 100, 100 and 50, newest first, each Link naming the last order of its page, every order once', async () => {
    await importOrders(alice, 'a', 120);
    await importOrders(alice, 'b', 130);
    const { pages, links } = await allPages(alice);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(links).toEqual([
      `</orders?after=${pages[0]![99]!.id}>; rel="next"`,
      `</orders?after=${pages[1]![99]!.id}>; rel="next"`,
      undefined,
    ]);
    const all = pages.flat();
    // An import's orders share one createdAt: the sequence breaks the tie, the last line newest.
    expect(all.map((o) => o.sku)).toEqual([...skus(130, 'b'), ...skus(120, 'a')]);
    expect(new Set(all.map((o) => o.id)).size).toBe(250);
    for (let i = 1; i < all.length; i++)
      expect(all[i - 1]!.createdAt >= all[i]!.createdAt).toBe(true);
  });

  it('exactly 100 orders are one page with no Link; a 101st makes a Link and a page of one', async () => {
    await importOrders(bob, 'x', 100);
    const hundred = await allPages(bob);
    expect(hundred.pages.map((p) => p.length)).toEqual([100]);
    expect(hundred.links).toEqual([undefined]);
    await importOrders(bob, 'y', 1);
    const more = await allPages(bob);
    expect(more.pages.map((p) => p.length)).toEqual([100, 1]);
    expect(more.pages[1]![0]!.sku).toBe('x-0');
    expect(more.links[1]).toBeUndefined();
  });

  it('an after naming no order of the caller’s is 400: unknown, or another account’s', async () => {
    const bobs = (await app.inject({ url: '/orders', headers: bob })).json<Listed[]>();
    for (const after of ['no-such-order', bobs[0]!.id]) {
      const res = await app.inject({ url: `/orders?after=${after}`, headers: alice });
      expect(res.status).toBe(400);
      expect(res.json()).toEqual({ error: `after: no order ${after} of yours`, status: 400 });
    }
    // The caller's oldest order names an empty last page.
    const oldest = (await allPages(bob)).pages.flat().pop()!;
    const after = await app.inject({ url: `/orders?after=${oldest.id}`, headers: bob });
    expect(after.status).toBe(200);
    expect(after.json()).toEqual([]);
    expect(after.headers['link']).toBeUndefined();
  });
});
