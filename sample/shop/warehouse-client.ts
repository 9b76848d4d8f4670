import { IsInt, IsString } from 'class-validator';
import { fail, type Ctx } from 'fw-http';
import { Target, type OpenTarget } from 'fw-http/fetch';

/** The warehouse as the shop sees it: a typed outbound service with a readiness probe. */
export const Warehouse = Target('warehouse', {
  timeoutMs: 5_000,
  maxInFlight: 16,
  ready: '/ready',
  // The warehouse's reserve route is idempotent: a reservation made inside POST /orders carries a
  // key derived from the order's, so a rerun of the order after a crash reserves once.
  idempotencyKeys: true,
});

export class StockLevel {
  @IsString() sku!: string;
  @IsInt() available!: number;
  @IsInt() unitPrice!: number;
}

/** The shop's calls to the warehouse (the request id travels with each one as X-Request-Id). */
export class WarehouseClient {
  constructor(readonly target: OpenTarget) {}

  async stock(c: Ctx, sku: string): Promise<StockLevel> {
    const res = await this.target.get(c, '/stock/{sku}', { sku });
    if (!res.ok) throw fail.status(502, 'warehouse answered %d', res.status);
    return res.json(StockLevel);
  }

  /** Reserves stock; a sold-out sku is the shop's 409. */
  async reserve(c: Ctx, sku: string, qty: number): Promise<void> {
    const res = await this.target.postJson(c, '/reservations', {}, { sku, qty });
    if (res.status === 409) throw fail.conflict('sku %s is sold out', sku);
    if (!res.ok) throw fail.status(502, 'warehouse answered %d', res.status);
  }
}
