import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import type { Pool } from 'pg';
import { App, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, Space } from 'fw-http/cache';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// The query-builder adapter of atomic routes: Kysely over the route's transaction (tx.asPool()).

interface Db {
  orders: { id: string; sku: string };
}

/** A Kysely whose every query runs in the atomic route's transaction. */
const kysely = (tx: Tx) =>
  new Kysely<Db>({ dialect: new PostgresDialect({ pool: tx.asPool<PostgresPool>() }) });

let server: PostgresServer;
let pool: Pool;
beforeAll(async () => {
  server = await startPostgres();
  pool = testPool(server.url, 2);
  await pool.query('CREATE TABLE orders (id text PRIMARY KEY, sku text NOT NULL)');
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

describe('atomic routes with Kysely', () => {
  it('Kysely writes through tx.asPool() commit with the kept answer, and roll back with a failing handler', async () => {
    const store = new PgStore({ connectionString: server.url });
    await store.migrate();
    const Orders = Space('kysely-orders', { ttlSeconds: 60, maxBytes: 4096 });
    let failAfterInsert = true;
    @Controller()
    class C {
      @Post('/orders')
      @Idempotent(Orders, { atomic: true })
      @Returns(Status(201, Object))
      async create(tx: Tx) {
        const db = kysely(tx);
        const id = `o-${Date.now()}`;
        await db.insertInto('orders').values({ id, sku: 'tea' }).execute();
        const seen = await db.selectFrom('orders').select('id').where('id', '=', id).execute();
        if (failAfterInsert) throw new Error('after the insert');
        return { id, seenInTx: seen.length };
      }
    }
    const app = new App({ log: () => {} }).controllers(C).provide(Orders.open(store));
    try {
      const post = () =>
        app.inject({ method: 'POST', url: '/orders', headers: { 'idempotency-key': 'k' } });
      expect((await post()).status).toBe(500);
      expect((await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(0);
      failAfterInsert = false;
      const ok = await post();
      expect(ok.status).toBe(201);
      expect(ok.json()).toMatchObject({ seenInTx: 1 });
      const again = await post();
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(ok.body);
      expect((await pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(1);
    } finally {
      await store.close();
    }
  });
});
