import { randomUUID } from 'node:crypto';
import type { Tx } from 'fw-http/atomic';
import { Order } from './order';

export interface Entry {
  order: Order;
  version: number;
}

/** One order line of an import: what `POST /orders` would take. */
export interface OrderLine {
  readonly sku: string;
  readonly qty: number;
}

/** One page of an account's orders, newest first, and whether more follow it. */
export interface OrdersPage {
  readonly orders: Order[];
  readonly more: boolean;
}

/** An entry as the book holds it, with its place in its account's list (the order it was placed in). */
interface Held extends Entry {
  readonly at: number;
}

/**
 * The shop's orders, in memory, per account. `PgOrderBook` keeps them in Postgres instead (with
 * DATABASE_URL); both answer through promises, so the routes read the same either way. Orders are
 * newest first: by `createdAt`, ties broken by the sequence they were placed in.
 */
export class OrderBook {
  readonly #byId = new Map<string, Held>();
  /** Each account's orders, oldest first: a page is a slice of it, whatever the book holds. */
  readonly #byAccount = new Map<string, Held[]>();
  /** The latest `createdAt` given: a clock set back never makes an order older than the one before. */
  #latest = '';

  /** Places an order; `tx` is the atomic route's transaction when the book is in Postgres (unused here). */
  async place(account: string, sku: string, qty: number, _tx: Tx | null): Promise<Order> {
    return this.#add(account, sku, qty, this.#now());
  }

  /**
   * Places every line, or none: nothing between the first and the last can fail or let another
   * request in (no await), so a failure before it imports nothing. The lines share one `createdAt`;
   * the last line is the newest.
   */
  async placeAll(account: string, lines: readonly OrderLine[], _tx: Tx | null): Promise<number> {
    const at = this.#now();
    for (const l of lines) this.#add(account, l.sku, l.qty, at);
    return lines.length;
  }

  /** Every order of the account, newest first. */
  async list(account: string): Promise<Order[]> {
    return (this.#byAccount.get(account) ?? []).map((e) => e.order).reverse();
  }

  /**
   * At most `limit` of the account's orders, newest first, after the order `after` (from the newest
   * when null); null when `after` names no order of this account.
   */
  async page(account: string, after: string | null, limit: number): Promise<OrdersPage | null> {
    const all = this.#byAccount.get(account) ?? [];
    let end = all.length;
    if (after !== null) {
      const from = this.#byId.get(after);
      if (from === undefined || from.order.account !== account) return null;
      end = from.at;
    }
    const start = Math.max(0, end - limit);
    const orders = all
      .slice(start, end)
      .map((e) => e.order)
      .reverse();
    return { orders, more: start > 0 };
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

  #add(account: string, sku: string, qty: number, createdAt: string): Order {
    const order = newOrder(account, sku, qty, createdAt);
    let list = this.#byAccount.get(account);
    if (list === undefined) this.#byAccount.set(account, (list = []));
    const held: Held = { order, version: 1, at: list.length };
    list.push(held);
    this.#byId.set(order.id, held);
    return order;
  }

  #now(): string {
    const now = new Date().toISOString();
    if (now > this.#latest) this.#latest = now;
    return this.#latest;
  }
}

/** A new placed order, made now unless `createdAt` is given. */
export function newOrder(
  account: string,
  sku: string,
  qty: number,
  createdAt = new Date().toISOString(),
): Order {
  return Order.of({ id: randomUUID(), sku, qty, account, status: 'placed', createdAt });
}
