import type { Pool } from 'pg';
import type { Tx } from 'fw-http';
import { Order } from './order';
import { newOrder, OrderBook, type Entry } from './order-book';

/** The orders table, created at startup when missing. */
const MIGRATE = `CREATE TABLE IF NOT EXISTS shop_orders (
  id text PRIMARY KEY,
  account text NOT NULL,
  sku text NOT NULL,
  qty int NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  version int NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS shop_orders_account ON shop_orders (account, created_at DESC);`;

interface Row {
  id: string;
  account: string;
  sku: string;
  qty: number;
  status: 'placed' | 'cancelled';
  created_at: Date;
  version: number;
}

const toEntry = (r: Row): Entry => ({
  order: Order.of({
    id: r.id,
    account: r.account,
    sku: r.sku,
    qty: r.qty,
    status: r.status,
    createdAt: r.created_at.toISOString(),
  }),
  version: r.version,
});

/**
 * The shop's orders in Postgres (with DATABASE_URL). An order is placed in the atomic route's
 * transaction, so the order row commits with the kept answer or not at all.
 */
export class PgOrderBook extends OrderBook {
  /** What /healthz calls this book's probe: `not ready: database` while Postgres does not answer. */
  readonly name = 'database';
  readonly #pool: Pool;

  constructor(pool: Pool) {
    super();
    this.#pool = pool;
  }

  /** Creates the orders table when missing (idempotent). */
  async migrate(): Promise<void> {
    await this.#pool.query(MIGRATE);
  }

  override async place(account: string, sku: string, qty: number, tx: Tx | null): Promise<Order> {
    const order = newOrder(account, sku, qty);
    const sql =
      'INSERT INTO shop_orders (id, account, sku, qty, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)';
    const values = [order.id, account, sku, qty, order.status, order.createdAt];
    if (tx === null) await this.#pool.query(sql, values);
    else await tx.query(sql, values);
    return order;
  }

  override async list(account: string): Promise<Order[]> {
    const { rows } = await this.#pool.query<Row>(
      'SELECT * FROM shop_orders WHERE account = $1 ORDER BY created_at DESC, id DESC',
      [account],
    );
    return rows.map((r) => toEntry(r).order);
  }

  override async find(account: string, id: string): Promise<Entry | null> {
    const { rows } = await this.#pool.query<Row>(
      'SELECT * FROM shop_orders WHERE id = $1 AND account = $2',
      [id, account],
    );
    return rows.length === 0 ? null : toEntry(rows[0]!);
  }

  override async cancel(entry: Entry): Promise<Order> {
    const { rows } = await this.#pool.query<Row>(
      "UPDATE shop_orders SET status = 'cancelled', version = version + 1 WHERE id = $1 RETURNING *",
      [entry.order.id],
    );
    const now = toEntry(rows[0]!);
    entry.order = now.order;
    entry.version = now.version;
    return now.order;
  }

  override async count(): Promise<number> {
    const { rows } = await this.#pool.query<{ n: string }>('SELECT count(*) AS n FROM shop_orders');
    return Number(rows[0]!.n);
  }

  override async probe(): Promise<boolean> {
    try {
      await this.#pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }
}
