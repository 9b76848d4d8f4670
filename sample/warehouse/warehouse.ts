import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import {
  App,
  Body,
  Controller,
  Get,
  Idempotent,
  Param,
  Post,
  Returns,
  Status,
  fail,
  logger,
  type Middleware,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

/** Kept answers of the reserve route: a reservation retried with its key is made once. */
const Reservations = Space('reservations', { ttlSeconds: 24 * 60 * 60, maxBytes: 4096 });

export class Stock {
  @IsString() sku!: string;
  @IsInt() available!: number;
  @IsInt() unitPrice!: number;
}

export class Reservation {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

/** Every sku is stocked (any text, `/` included) except `sold-out`; prices are fixed per sku. */
function stockOf(sku: string): Stock {
  let h = 7;
  for (const ch of sku) h = (h * 31 + ch.charCodeAt(0)) % 997;
  return Object.assign(new Stock(), {
    sku,
    available: sku === 'sold-out' ? 0 : 1000,
    unitPrice: 100 + h,
  });
}

@Controller()
class WarehouseController {
  @Get('/stock/{sku}')
  @Returns(Stock)
  stock(@Param('sku') sku: string): Stock {
    return stockOf(sku);
  }

  @Post('/reservations')
  @Idempotent(Reservations)
  @Returns(Status(201, Reservation))
  reserve(@Body() r: Reservation): Reservation {
    if (stockOf(r.sku).available < r.qty) throw fail.conflict('sku %s is sold out', r.sku);
    return r;
  }

  @Get('/ready')
  @Returns(String)
  ready(): string {
    return 'ready';
  }
}

/** Makes every answer `ms` late, to show what slow upstreams do. */
const delay =
  (ms: number): Middleware =>
  async (_c, next) => {
    await new Promise((r) => setTimeout(r, ms));
    await next();
  };

/** The warehouse: a second service the shop reaches only through its outbound Target. */
export function warehouse(options: { delayMs?: number; log?: (line: string) => void } = {}): App {
  const app = new App({ title: 'fw sample warehouse', version: '1.0.0', log: options.log })
    .use(logger.with({ format: 'json', requestId: true }))
    .provide(Reservations.open(new MemoryStore({ bytes: 16 * 1024 * 1024 })));
  if (options.delayMs) app.use(delay(options.delayMs));
  return app.controllers(WarehouseController);
}
