import type { Pool } from 'pg';
import { start, type Started } from '../../sample/start';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';
import { multipart, post } from '../support/multipart';
import { openDatabase } from '../../sample/shop/database';

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

describe('the sample with DATABASE_URL', () => {
  it('creates its tables at startup; POST /orders places the order in Postgres once, a retry replays it', async () => {
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

  it("the shop's pool names itself: its connections are application_name fw-sample-shop in pg_stat_activity", async () => {
    expect((await order('db-name')).res.status).toBe(201);
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'fw-sample-shop' AND datname = 'shop'",
    );
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it('a sold-out sku is 409 and leaves neither an order row nor a kept answer', async () => {
    const before = (await pool.query('SELECT count(*)::int AS n FROM shop_orders')).rows[0].n;
    const kept = (await pool.query('SELECT count(*)::int AS n FROM fw_store')).rows[0].n;
    expect((await order('db-2', 'sold-out')).res.status).toBe(409);
    expect((await pool.query('SELECT count(*)::int AS n FROM shop_orders')).rows[0].n).toBe(before);
    expect((await pool.query('SELECT count(*)::int AS n FROM fw_store')).rows[0].n).toBe(kept);
  });

  it('cancel and the versioned GET read and write the order in Postgres', async () => {
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

  /** POSTs a CSV to /orders/import over a real socket. */
  async function importCsv(key: string, text: string, account = 'alice') {
    const m = multipart([{ name: 'csv', filename: 'o.csv', type: 'text/csv', data: text }]);
    return post(Number(new URL(shop.url).port), '/orders/import', m.body, {
      'content-type': m.type,
      authorization: `Bearer ${account}-token`,
      'idempotency-key': key,
    });
  }
  const rowsOf = async (account: string) =>
    (await pool.query('SELECT count(*)::int AS n FROM shop_orders WHERE account = $1', [account]))
      .rows[0].n as number;
  const csvOf = (n: number, sku: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => `${sku(i)},1`).join('\n');

  it('the import is one transaction: the database failing at line 600 is 503 and imports nothing; the retry of the key imports once', async () => {
    // The backend serving the import ends itself at line 600's row: the connection is lost mid-import.
    await pool.query(`CREATE FUNCTION shop_test_kill() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.sku = 'kill-db' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END $$`);
    await pool.query(
      'CREATE TRIGGER shop_test_kill BEFORE INSERT ON shop_orders FOR EACH ROW EXECUTE FUNCTION shop_test_kill()',
    );
    const text = csvOf(1000, (i) => (i === 599 ? 'kill-db' : `imp-${i}`));
    const before = await rowsOf('alice');
    try {
      const failed = await importCsv('db-import-1', text);
      expect(failed.status).toBe(503);
      expect(failed.headers['retry-after']).toBe('1');
      expect(failed.json()).toEqual({
        error: 'the database is unavailable: retry later',
        status: 503,
      });
      expect(await rowsOf('alice')).toBe(before);
    } finally {
      await pool.query('DROP TRIGGER shop_test_kill ON shop_orders');
      await pool.query('DROP FUNCTION shop_test_kill()');
    }
    const retried = await importCsv('db-import-1', text);
    expect(retried.status).toBe(201);
    expect(retried.json()).toMatchObject({ imported: 1000 });
    expect(await rowsOf('alice')).toBe(before + 1000);
    const again = await importCsv('db-import-1', text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(retried.text);
    expect((await importCsv('db-import-1', `${text}\nmore,1`)).status).toBe(422);
    expect(await rowsOf('alice')).toBe(before + 1000);
  }, 60_000);

  it('GET /orders pages the Postgres book: 100 a page in (created_at, seq) order, no Link on exactly 100, every order once', async () => {
    expect(
      (
        await importCsv(
          'db-pages-1',
          csvOf(100, (i) => `p1-${i}`),
          'bob',
        )
      ).status,
    ).toBe(201);
    const pages = async () => {
      const got: { id: string }[][] = [];
      const links: (string | null)[] = [];
      for (let url: string | null = '/orders'; url !== null;) {
        const res = await fetch(`${shop.url}${url}`, {
          headers: { authorization: 'Bearer bob-token' },
        });
        got.push((await res.json()) as { id: string }[]);
        const link = res.headers.get('link');
        links.push(link);
        url = link === null ? null : /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
      }
      return { got, links };
    };
    const hundred = await pages();
    expect(hundred.got.map((p) => p.length)).toEqual([100]);
    expect(hundred.links).toEqual([null]);
    expect(
      (
        await importCsv(
          'db-pages-2',
          csvOf(150, (i) => `p2-${i}`),
          'bob',
        )
      ).status,
    ).toBe(201);
    const all = await pages();
    expect(all.got.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(all.links[0]).toBe(`</orders?after=${all.got[0]![99]!.id}>; rel="next"`);
    const { rows } = await pool.query(
      "SELECT id FROM shop_orders WHERE account = 'bob' ORDER BY created_at DESC, seq DESC",
    );
    expect(all.got.flat().map((o) => o.id)).toEqual(rows.map((r: { id: string }) => r.id));
    const alices = await fetch(`${shop.url}/orders`, { headers: alice });
    const theirs = ((await alices.json()) as { id: string }[])[0]!.id;
    const other = await fetch(`${shop.url}/orders?after=${theirs}`, {
      headers: { authorization: 'Bearer bob-token' },
    });
    expect(other.status).toBe(400);
  }, 60_000);

  it('a table made before seq existed gets it at startup, its rows numbered', async () => {
    await pg.createDatabase('older');
    const old = testPool(pg.urlOf('older'), 1);
    try {
      await old.query(`CREATE TABLE shop_orders (id text PRIMARY KEY, account text NOT NULL,
        sku text NOT NULL, qty int NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
        version int NOT NULL DEFAULT 1)`);
      await old.query(`INSERT INTO shop_orders (id, account, sku, qty, status, created_at)
        VALUES ('o1', 'alice', 'a', 1, 'placed', now()), ('o2', 'alice', 'b', 1, 'placed', now())`);
      const db = await openDatabase(pg.urlOf('older'));
      try {
        const page = await db.book.page('alice', null, 100);
        expect(page!.orders.map((o) => o.id)).toEqual(['o2', 'o1']);
      } finally {
        await db.close();
      }
      // A second start leaves it as it is.
      await (await openDatabase(pg.urlOf('older'))).close();
      const { rows } = await old.query(
        "SELECT count(*)::int AS n FROM pg_class WHERE relkind = 'S' AND relname LIKE 'shop_orders_seq%'",
      );
      expect(rows[0].n).toBe(1);
    } finally {
      await old.end();
    }
  }, 60_000);

  it('/healthz reports the database: 200 while it answers, 503 naming it while it is down', async () => {
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

describe('the sample with DATABASE_URL under a slow warehouse (WAREHOUSE_DELAY_MS=2000, a pool of 10)', () => {
  let slow: Started;
  beforeAll(async () => {
    await pg.createDatabase('slow');
    slow = await start(
      { PORT: '0', DATABASE_URL: pg.urlOf('slow'), WAREHOUSE_DELAY_MS: '2000' },
      () => {},
    );
  }, 60_000);
  afterAll(async () => {
    await slow?.stop();
  });

  const placeAt = async (who: string, key: string) => {
    const res = await fetch(`${slow.url}/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${who}-token`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify({ sku: 'tea', qty: 1 }),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.text(),
    };
  };
  const ordersIn = async (db: Pool, account: string) =>
    (await db.query('SELECT count(*)::int AS n FROM shop_orders WHERE account = $1', [account]))
      .rows[0].n as number;

  it('14 concurrent orders are all 201; another account ordering meanwhile is not refused; /healthz never calls the busy pool a dead store', async () => {
    const db = testPool(pg.urlOf('slow'), 1);
    try {
      const orders = Array.from({ length: 14 }, (_, i) => placeAt('alice', `slow-${i}`));
      await new Promise((r) => setTimeout(r, 300));
      const health = await fetch(`${slow.url}/healthz`);
      const bob = await placeAt('bob', 'bob-slow-1');
      const results = await Promise.all(orders);
      expect(results.map((r) => r.status)).toEqual(Array(14).fill(201));
      expect(bob.status).toBe(201);
      // The warehouse's probe may time out (it is slow by design); the database is never called down.
      expect(await health.text()).not.toMatch(/database|space|store/);
      expect(await ordersIn(db, 'alice')).toBe(14);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('12 duplicates of one key answer only 201 or 409 (with Retry-After) and place one order', async () => {
    const db = testPool(pg.urlOf('slow'), 1);
    try {
      const before = await ordersIn(db, 'bob');
      const results = await Promise.all(
        Array.from({ length: 12 }, () => placeAt('bob', 'dup-slow')),
      );
      for (const r of results) {
        expect([201, 409]).toContain(r.status);
        if (r.status === 409) expect(r.retryAfter).toBe('1');
      }
      expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body)).size).toBe(1);
      expect(await ordersIn(db, 'bob')).toBe(before + 1);
    } finally {
      await db.end();
    }
  }, 60_000);
});
