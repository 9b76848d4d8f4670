import { IsInt, IsString } from 'class-validator';
import { z } from 'zod';
import { Controller, Ctx, Get, Param, Query, Returns, type Infer } from 'fw-http';
import { WarehouseClient } from './warehouse-client';

/** The quote's query as a zod schema (issue 24 §5): `?qty=3` is read as the integer it types. */
export const QuoteQuery = z.object({ qty: z.number().int().min(1).max(100) });

export class Quote {
  @IsString() sku!: string;
  @IsInt() qty!: number;
  @IsInt() available!: number;
  @IsInt() unitPrice!: number;
  @IsInt() total!: number;
}

@Controller()
export class QuoteController {
  constructor(readonly warehouse: WarehouseClient) {}

  @Get('/quote/{sku}')
  @Returns(Quote)
  async quote(
    @Param('sku') sku: string,
    @Query(QuoteQuery) q: Infer<typeof QuoteQuery>,
    c: Ctx,
  ): Promise<Quote> {
    const stock = await this.warehouse.stock(c, sku);
    return Object.assign(new Quote(), {
      sku,
      qty: q.qty,
      available: stock.available,
      unitPrice: stock.unitPrice,
      total: stock.unitPrice * q.qty,
    });
  }
}
