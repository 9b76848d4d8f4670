// The fw side of the benchmark: one app holding every case's route, served by servers.ts.
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { App, Body, Controller, Get, Idempotent, Post, Returns, Status, Versioned } from 'fw';
import { MemoryStore, Space } from 'fw/cache';

const Kept = Space('bench', { ttlSeconds: 3600, maxBytes: 64 * 1024 });
/** About 16 KiB of JSON. */
export const BIG = Array.from({ length: 160 }, (_, i) => ({ sku: `sku-${i}`, name: `Catalog item number ${i}`, unitPrice: 100 + i, tags: ['a', 'b'] }));
export const KIB = JSON.stringify({ pad: 'x'.repeat(1012) });

class Small {
  constructor(readonly id: number, readonly name: string, readonly tags: string[]) {}
}
export const SMALL = new Small(1, 'small answer', ['a', 'b']);

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

@Controller()
class BenchController {
  @Get('/small')
  @Returns(Small)
  small() {
    return SMALL;
  }

  @Post('/orders')
  @Returns(Status(201, NewOrder))
  create(@Body() order: NewOrder) {
    return order;
  }

  @Post('/idem')
  @Idempotent(Kept, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  idem(@Body() order: NewOrder) {
    return order;
  }

  @Get('/versioned')
  @Returns(Versioned(Small))
  versioned() {
    return Versioned.of(7, SMALL);
  }

  @Get('/big')
  @Returns([Object])
  big() {
    return BIG;
  }
}

/** The app every fw case is served by. */
export function benchApp(): App {
  return new App({ log: () => {} }).controllers(BenchController).provide(Kept.open(new MemoryStore({ bytes: 256 << 20 }))).compress();
}
