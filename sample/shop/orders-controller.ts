import { IsOptional, IsString, Length } from 'class-validator';
import {
  Body,
  Controller,
  Ctx,
  Get,
  Idempotent,
  Param,
  Post,
  Query,
  Reply,
  Returns,
  Status,
  Versioned,
  fail,
  reply,
} from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { Tool } from 'fw-http/mcp';
import { Account } from './account';
import { OrdersCsv, Receipt } from './csv';
import { AlreadyCancelled, NewOrder, Order } from './order';
import { OrderBook } from './order-book';
import { Paged } from './paged';
import { Orders } from './spaces';
import { WarehouseClient } from './warehouse-client';

/** Orders one page of `GET /orders` holds at most. */
export const PAGE_SIZE = 100;

/** `GET /orders?after=ID`: the page after the order `ID` (the last of the page before). */
export class OrdersQuery {
  @IsOptional() @IsString() @Length(1, 64) after?: string;
}

/** Idempotency records are per account: one account's key never replays another's answer. */
const byAccount = async (c: Ctx) => (await c.resolveAsync(Account)).id;

/**
 * The order routes. With `atomic` (the book is in Postgres, the space on a PgStore), POST /orders
 * is an atomic route: the order row and its kept answer commit in one transaction. The class is
 * made once at startup, as decorators are fixed when a class is defined.
 */
export function ordersController(atomic: boolean) {
  @Controller('/orders')
  class OrdersController {
    constructor(
      readonly book: OrderBook,
      readonly warehouse: WarehouseClient,
    ) {}

    /** Reserves stock at the warehouse, then places the order; sold out is a 409 failure (not kept). */
    @Post()
    @Tool({ name: 'place_order', description: 'Places an order of qty (1 to 100) of sku' })
    @Idempotent(Orders, { by: byAccount, atomic })
    @Returns(Reply({ 201: Order }))
    async create(@Body() order: NewOrder, account: Account, c: Ctx) {
      await this.warehouse.reserve(c, order.sku, order.qty);
      const tx = atomic ? c.resolve(Tx) : null;
      const placed = await this.book.place(account.id, order.sku, order.qty, tx);
      return reply(201, placed, { Location: `/orders/${placed.id}` });
    }

    /**
     * The caller's orders, newest first, at most `PAGE_SIZE` a page; `Link: <…>; rel="next"` names
     * the next page when more follow. An `after` naming no order of the caller's is a 400.
     */
    @Get()
    @Paged()
    @Returns(Reply([Order]))
    async list(account: Account, @Query() q: OrdersQuery) {
      const page = await this.book.page(account.id, q.after ?? null, PAGE_SIZE);
      if (page === null) throw fail.badRequest('after: no order %s of yours', q.after);
      const last = page.orders[page.orders.length - 1];
      if (!page.more || last === undefined) return reply(200, page.orders);
      const next = `/orders?after=${encodeURIComponent(last.id)}`;
      return reply(200, page.orders, { Link: `<${next}>; rel="next"` });
    }

    @Get('/{id}')
    @Returns(Versioned(Order))
    async one(@Param('id') id: string, account: Account) {
      const entry = await this.book.find(account.id, id);
      if (entry === null) throw fail.notFound('no order %s', id);
      return Versioned.of(entry.version, entry.order);
    }

    @Post('/{id}/cancel')
    @Idempotent(Orders, { by: byAccount })
    @Returns(Reply({ 200: Order, 409: AlreadyCancelled }))
    async cancel(@Param('id') id: string, account: Account) {
      const entry = await this.book.find(account.id, id);
      if (entry === null) throw fail.notFound('no order %s', id);
      if (entry.order.status === 'cancelled') return reply(409, AlreadyCancelled.of(id));
      return reply(200, await this.book.cancel(entry));
    }

    @Get('/{id}/receipt.csv')
    @Returns(Receipt)
    async receipt(@Param('id') id: string, account: Account): Promise<Receipt> {
      const entry = await this.book.find(account.id, id);
      if (entry === null) throw fail.notFound('no order %s', id);
      return new Receipt(entry.order);
    }
  }
  return OrdersController;
}

@Controller('/exports')
export class ExportsController {
  constructor(readonly book: OrderBook) {}

  /** All the caller's orders as CSV, kept and replayed under text/csv. */
  @Post()
  @Idempotent(Orders, { by: byAccount })
  @Returns(Status(201, OrdersCsv))
  async create(account: Account): Promise<OrdersCsv> {
    return new OrdersCsv(await this.book.list(account.id));
  }
}
