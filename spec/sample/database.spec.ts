import type { Pool } from 'pg';
import { start, type Started } from '../../sample/start';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// The sample with DATABASE_URL (SAMPLE.md): orders in Postgres, POST /orders atomic (the order row
// and the kept answer in one transaction), tables created at startup, /healthz reporting the database.

let pg: PostgresServer;
let pool: Pool;
let shop: Started;

beforeAll(async () => {
  pg = await startPostgres();
  await pg.createDatabase('shop');
  pool = testPool(pg.urlOf('shop'), 2); // its idle connections are cut when the health test stops Postgres
  shop = await start({ PORT: '0', DATABASE_URL: pg.urlOf('shop') }, () => {});
}, 60_000);
afterAll(async () => {
  await shop?.stop();
  await pool?.end();
  await pg?.stop();
});

const alice = { authorization: 'Bearer alice-token', 'content-type': 'application/json' };

async function order(key: string, sku = 'tea') {
  const res = await fetch(`${shop.url}/orders`, {
    method: 'POST',
    headers: { ...alice, 'idempotency-key': key },
    body: JSON.stringify({ sku, qty: 2 }),
  });
  return { res, body: await res.text() };
}

describe('I23.6 the sample with DATABASE_URL', () => {
  it('I23.6 creates its tables at startup; POST /orders places the order in Postgres once, a retry replays it', async () => {
    const { rows: tables } = await pool.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    expect(tables.map((t: { table_name: string }) => t.table_name)).toEqual([
      'fw_store',
      'shop_orders',
    ]);
    const first = await order('db-1');
    expect(first.res.status).toBe(201);
    const placed = JSON.parse(first.body) as { id: string; status: string };
    expect(placed.status).toBe('placed');
    expect(first.res.headers.get('location')).toBe(`/orders/${placed.id}`);
    const again = await order('db-1');
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toBe(first.body);
    const { rows } = await pool.query('SELECT id, account, qty FROM shop_orders WHERE id = $1', [
      placed.id,
    ]);
    expect(rows).toEqual([{ id: placed.id, account: 'alice', qty: 2 }]);
    const listed = await fetch(`${shop.url}/orders`, { headers: alice });
    expect(((await listed.json()) as { id: string }[]).map((o) => o.id)).toContain(placed.id);
  });

  it('I23.6 a sold-out sku is 409 and leaves neither an order row nor a kept answer', async () => {
    const before = (await pool.query('SELECT count(*)::int AS n FROM shop_orders')).rows[0].n;
    const kept = (await pool.query('SELECT count(*)::int AS n FROM fw_store')).rows[0].n;
    expect((await order('db-2', 'sold-out')).res.status).toBe(409);
    expect((await pool.query('SELECT count(*)::int AS n FROM shop_orders')).rows[0].n).toBe(before);
    expect((await pool.query('SELECT count(*)::int AS n FROM fw_store')).rows[0].n).toBe(kept);
  });

  it('I23.6 cancel and the versioned GET read and write the order in Postgres', async () => {
    const placed = JSON.parse((await order('db-3')).body) as { id: string };
    const one = await fetch(`${shop.url}/orders/${placed.id}`, { headers: alice });
    expect(one.status).toBe(200);
    const etag = one.headers.get('etag');
    const cancel = await fetch(`${shop.url}/orders/${placed.id}/cancel`, {
      method: 'POST',
      headers: { ...alice, 'idempotency-key': 'db-3-cancel' },
    });
    expect(cancel.status).toBe(200);
    const after = await fetch(`${shop.url}/orders/${placed.id}`, { headers: alice });
    expect(after.headers.get('etag')).not.toBe(etag);
    const { rows } = await pool.query('SELECT status, version FROM shop_orders WHERE id = $1', [
      placed.id,
    ]);
    expect(rows).toEqual([{ status: 'cancelled', version: 2 }]);
  });

  it('I23.6 /healthz reports the database: 200 while it answers, 503 naming it while it is down', async () => {
    expect((await fetch(`${shop.url}/healthz`)).status).toBe(200);
    await pg.halt();
    try {
      let res: Response | undefined;
      for (const until = Date.now() + 10_000; Date.now() < until;) {
        res = await fetch(`${shop.url}/healthz`);
        if (res.status === 503) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(res!.status).toBe(503);
      expect(await res!.text()).toMatch(/not ready: (database|space:orders)/);
    } finally {
      await pg.restart();
    }
  }, 60_000);
});
