import { Pool } from 'pg';
import { PgStore } from 'fw-http/cache';
import { PgOrderBook } from './pg-order-book';
import type { ShopDatabase } from './shop';

/**
 * Connects to DATABASE_URL and creates the shop's tables when missing (the orders, and the
 * PgStore's table of idempotency records): the shop's orders then live in Postgres.
 */
export async function openDatabase(url: string): Promise<ShopDatabase> {
  // Named, so that pg_stat_activity shows which connections (and transactions) are the shop's.
  const pool = new Pool({ connectionString: url, max: 10, application_name: 'fw-sample-shop' });
  // An idle connection lost (Postgres restarting) is reported here; the next query reconnects.
  pool.on('error', () => undefined);
  const store = new PgStore({ pool });
  const book = new PgOrderBook(pool);
  try {
    await store.migrate();
    await book.migrate();
  } catch (e) {
    await store.close();
    await pool.end();
    throw e;
  }
  return {
    book,
    store,
    close: async () => {
      await store.close();
      await pool.end();
    },
  };
}
