import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { fail } from 'fw-http';
import { type Tx } from 'fw-http/atomic';
import { Order } from './order';
import { newOrder, OrderBook, type Entry, type OrderLine, type OrdersPage } from './order-book';

/**
 * The orders table, created at startup when missing. `seq` breaks ties between orders of one
 * `created_at` (an import's share one); a table made before it had one gets it, numbered in the
 * order its rows are stored.
 */
const MIGRATE = `CREATE TABLE IF NOT EXISTS shop_orders (
  id text PRIMARY KEY,
  account text NOT NULL,
  sku text NOT NULL,
  qty int NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  version int NOT NULL DEFAULT 1,
  seq bigserial NOT NULL
);
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'shop_orders' AND column_name = 'seq') THEN
    ALTER TABLE shop_orders ADD COLUMN seq bigserial NOT NULL;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS shop_orders_page ON shop_orders (account, created_at DESC, seq DESC);
DROP INDEX IF EXISTS shop_orders_account;`;

/** An import's lines in one statement, numbered in the order given (the last is the newest). */
const INSERT_ALL = `INSERT INTO shop_orders (id, account, sku, qty, status, created_at)
SELECT l.id, $1, l.sku, l.qty, 'placed', $2
FROM unnest($3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS l(id, sku, qty, n)
ORDER BY l.n`;

/** SQLSTATE classes of a database that failed, not of a statement that was wrong: connection, resources, operator, system. */
const OUTAGE = /^(08|53|57|58)/;

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
    await this.#query(tx, sql, [order.id, account, sku, qty, order.status, order.createdAt]);
    return order;
  }

  /** Every line in one statement: all of them are placed or none (in `tx`, with the route's kept answer). */
  override async placeAll(account: string, lines: readonly OrderLine[], tx: Tx | null) {
    await this.#query(tx, INSERT_ALL, [
      account,
      new Date().toISOString(),
      lines.map(() => randomUUID()),
      lines.map((l) => l.sku),
      lines.map((l) => l.qty),
    ]);
    return lines.length;
  }

  override async list(account: string): Promise<Order[]> {
    const { rows } = await this.#query<Row>(
      null,
      'SELECT * FROM shop_orders WHERE account = $1 ORDER BY created_at DESC, seq DESC',
      [account],
    );
    return rows.map((r) => toEntry(r).order);
  }

  /** A page after the order `after`: orders before it in (created_at, seq), read through the page index. */
  override async page(
    account: string,
    after: string | null,
    limit: number,
  ): Promise<OrdersPage | null> {
    let rows: Row[];
    if (after === null) {
      rows = (
        await this.#query<Row>(
          null,
          'SELECT * FROM shop_orders WHERE account = $1 ORDER BY created_at DESC, seq DESC LIMIT $2',
          [account, limit + 1],
        )
      ).rows;
    } else {
      const from = await this.#query<{ created_at: Date; seq: string }>(
        null,
        'SELECT created_at, seq FROM shop_orders WHERE id = $1 AND account = $2',
        [after, account],
      );
      if (from.rows.length === 0) return null;
      const { created_at, seq } = from.rows[0]!;
      rows = (
        await this.#query<Row>(
          null,
          `SELECT * FROM shop_orders WHERE account = $1 AND (created_at, seq) < ($2, $3)
           ORDER BY created_at DESC, seq DESC LIMIT $4`,
          [account, created_at, seq, limit + 1],
        )
      ).rows;
    }
    return { orders: rows.slice(0, limit).map((r) => toEntry(r).order), more: rows.length > limit };
  }

  override async find(account: string, id: string): Promise<Entry | null> {
    const { rows } = await this.#query<Row>(
      null,
      'SELECT * FROM shop_orders WHERE id = $1 AND account = $2',
      [id, account],
    );
    return rows.length === 0 ? null : toEntry(rows[0]!);
  }

  override async cancel(entry: Entry): Promise<Order> {
    const { rows } = await this.#query<Row>(
      null,
      "UPDATE shop_orders SET status = 'cancelled', version = version + 1 WHERE id = $1 RETURNING *",
      [entry.order.id],
    );
    const now = toEntry(rows[0]!);
    entry.order = now.order;
    entry.version = now.version;
    return now.order;
  }

  override async count(): Promise<number> {
    const sql = 'SELECT count(*) AS n FROM shop_orders';
    const { rows } = await this.#query<{ n: string }>(null, sql, []);
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

  /**
   * One statement, in `tx` when given: a database that fails under it (the connection lost, Postgres
   * stopping) is a 503, never a 500; a statement Postgres refuses leaves as it is (an atomic route
   * tries a serialization failure again).
   */
  async #query<R>(tx: Tx | null, sql: string, values: readonly unknown[]): Promise<{ rows: R[] }> {
    try {
      return tx === null
        ? ((await this.#pool.query(sql, values as unknown[])) as unknown as { rows: R[] })
        : ((await tx.query(sql, values)) as unknown as { rows: R[] });
    } catch (e) {
      if (!isOutage(e)) throw e;
      throw fail.status(503, 'the database is unavailable: retry later');
    }
  }
}

/** A failure of the database itself: an outage SQLSTATE, or no SQLSTATE at all (a socket error, a lost connection). */
function isOutage(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return OUTAGE.test(code);
  return !(e instanceof TypeError || e instanceof RangeError);
}
