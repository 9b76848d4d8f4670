import type { Order } from './order';

const HEADER = 'id,sku,qty,status\n';
const cell = (v: string | number) =>
  /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v);
const row = (o: Order) => `${cell(o.id)},${cell(o.sku)},${o.qty},${o.status}\n`;

/** One order as CSV: written by the answer type itself. */
export class Receipt {
  static contentType = 'text/csv';
  static openapi = { type: 'string' };
  constructor(readonly order: Order) {}
  write(out: { write(chunk: string): void }): void {
    out.write(HEADER);
    out.write(row(this.order));
  }
}

/** All of an account's orders as CSV. */
export class OrdersCsv {
  static contentType = 'text/csv';
  static openapi = { type: 'string' };
  constructor(readonly orders: readonly Order[]) {}
  write(out: { write(chunk: string): void }): void {
    out.write(HEADER);
    for (const o of this.orders) out.write(row(o));
  }
}
