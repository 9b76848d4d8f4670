import type { Pool } from 'pg';
import { App, Controller, Ctx, Idempotent, Post, Returns, Status, Tx } from 'fw-http';
import { PgStore, Space } from 'fw-http/cache';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { testPool } from '../support/pg-pool';

// I23.3 on an atomic route `c.step` just runs fn: a failed run's transaction rolls back whole,
// and a step record kept outside it would claim a write that is gone.

let server: PostgresServer;
let pool: Pool;
beforeAll(async () => {
  server = await startPostgres();
  pool = testPool(server.url, 2);
  await pool.query('CREATE TABLE charges (id serial PRIMARY KEY, amount int)');
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

it('on an atomic route a step inside the rolled-back run is run again on the rerun (its write went with the rollback), and no step record is written', async () => {
  const store = new PgStore({ connectionString: server.url, table: 'fw_steps' });
  await store.migrate();
  const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096 });
  let runs = 0;
  let fail = true;
  @Controller()
  class Pay {
    @Post('/pay')
    @Idempotent(Payments, { atomic: true })
    @Returns(Status(201, Object))
    async pay(c: Ctx, tx: Tx) {
      const id = await c.step('charge', async () => {
        runs++;
        const { rows } = await tx.query<{ id: number }>(
          'INSERT INTO charges (amount) VALUES (5) RETURNING id',
        );
        return rows[0]!.id;
      });
      if (fail) throw new Error('crashed after the charge');
      return { id };
    }
  }
  const app = new App({ log: () => {} }).controllers(Pay).provide(Payments.open(store));
  try {
    const send = () =>
      app.inject({ method: 'POST', url: '/pay', headers: { 'idempotency-key': 'p-1' } });
    expect((await send()).status).toBe(500);
    expect((await pool.query('SELECT count(*)::int AS n FROM charges')).rows[0].n).toBe(0);
    fail = false;
    const rerun = await send();
    expect(rerun.status).toBe(201);
    expect(runs).toBe(2);
    const { rows } = await pool.query<{ id: number }>('SELECT id FROM charges');
    expect(rows.map((r) => r.id)).toEqual([(rerun.json() as { id: number }).id]);
    const steps = await pool.query(
      `SELECT count(*)::int AS n FROM fw_steps WHERE key LIKE '%step:%'`,
    );
    expect(steps.rows[0].n).toBe(0);
  } finally {
    await store.close();
  }
}, 60_000);
