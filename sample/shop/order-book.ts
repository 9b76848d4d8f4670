import { randomUUID } from 'node:crypto';
import { Order } from './order';

interface Entry {
  order: Order;
  version: number;
}

/** The shop's orders, in memory, per account. */
export class OrderBook {
  readonly #byId = new Map<string, Entry>();

  place(account: string, sku: string, qty: number): Order {
    const order = Order.of({
      id: randomUUID(),
      sku,
      qty,
      account,
      status: 'placed',
      createdAt: new Date().toISOString(),
    });
    this.#byId.set(order.id, { order, version: 1 });
    return order;
  }

  /** The account's orders, newest first. */
  list(account: string): Order[] {
    return [...this.#byId.values()]
      .filter((e) => e.order.account === account)
      .map((e) => e.order)
      .reverse();
  }

  /** An order of this account with its version, or null (another account's order is null too). */
  find(account: string, id: string): Entry | null {
    const e = this.#byId.get(id);
    return e && e.order.account === account ? e : null;
  }

  cancel(entry: Entry): Order {
    entry.order = Order.of({ ...entry.order, status: 'cancelled' });
    entry.version++;
    return entry.order;
  }

  /** How many orders the book holds, of every account. */
  count(): number {
    return this.#byId.size;
  }
}
