import { IsInt, IsString, Max, Min } from 'class-validator';
import { Controller, Ctx, Get, Param, Query, Returns } from 'fw-http';
import { WarehouseClient } from './warehouse-client';

export class QuoteQuery {
  @IsInt() @Min(1) @Max(100) qty!: number;
}

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
  async quote(@Param('sku') sku: string, @Query() q: QuoteQuery, c: Ctx): Promise<Quote> {
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
