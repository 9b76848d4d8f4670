import { randomUUID } from 'node:crypto';
import type { Tx } from 'fw-http';
import { Order } from './order';

export interface Entry {
  order: Order;
  version: number;
}

/**
 * The shop's orders, in memory, per account. `PgOrderBook` keeps them in Postgres instead (with
 * DATABASE_URL); both answer through promises, so the routes read the same either way.
 */
export class OrderBook {
  readonly #byId = new Map<string, Entry>();

  /** Places an order; `tx` is the atomic route's transaction when the book is in Postgres (unused here). */
  async place(account: string, sku: string, qty: number, _tx: Tx | null): Promise<Order> {
    const order = newOrder(account, sku, qty);
    this.#byId.set(order.id, { order, version: 1 });
    return order;
  }

  /** The account's orders, newest first. */
  async list(account: string): Promise<Order[]> {
    return [...this.#byId.values()]
      .filter((e) => e.order.account === account)
      .map((e) => e.order)
      .reverse();
  }

  /** An order of this account with its version, or null (another account's order is null too). */
  async find(account: string, id: string): Promise<Entry | null> {
    const e = this.#byId.get(id);
    return e && e.order.account === account ? e : null;
  }

  async cancel(entry: Entry): Promise<Order> {
    entry.order = Order.of({ ...entry.order, status: 'cancelled' });
    entry.version++;
    return entry.order;
  }

  /** How many orders the book holds, of every account. */
  async count(): Promise<number> {
    return this.#byId.size;
  }

  /** Whether the book can be read (health); memory always can. */
  async probe(): Promise<boolean> {
    return true;
  }
}

/** A new placed order. */
export function newOrder(account: string, sku: string, qty: number): Order {
  return Order.of({
    id: randomUUID(),
    sku,
    qty,
    account,
    status: 'placed',
    createdAt: new Date().toISOString(),
  });
}
