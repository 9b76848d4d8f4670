// The fw side of the benchmark: one app holding every case's route, served by servers.ts.
import { IsArray, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import {
  App,
  Body,
  Bound,
  Controller,
  Form,
  Get,
  Idempotent,
  Post,
  Returns,
  Status,
  Versioned,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

// Every first POST comes from one caller: its per-caller bound is lifted so the case measures the
// claim, handler and keep, not 429s. Kept answers are held until their TTL; the 256 MiB store holds
// a whole run of first POSTs (about 0.4 M records).
const Kept = Space('bench', { ttlSeconds: 3600, maxBytes: 64 * 1024, maxBytesPerCaller: 1 << 30 });
/** About 16 KiB of JSON. */
export const BIG = Array.from({ length: 160 }, (_, i) => ({
  sku: `sku-${i}`,
  name: `Catalog item number ${i}`,
  unitPrice: 100 + i,
  tags: ['a', 'b'],
}));
export const KIB = JSON.stringify({ pad: 'x'.repeat(1012) });

class Small {
  constructor(
    readonly id: number,
    readonly name: string,
    readonly tags: string[],
  ) {}
}
export const SMALL = new Small(1, 'small answer', ['a', 'b']);

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

class Tags {
  @IsOptional() @IsArray() @IsString({ each: true }) tag?: string[];
}

/** A form of exactly 1 MiB (the body limit) made of `piece(i)`s joined by `&`. */
function mibForm(piece: (i: number) => string): string {
  const parts: string[] = [];
  let size = -1;
  for (let i = 0; ; i++) {
    const p = piece(i);
    if (size + 1 + p.length > 1024 * 1024) break;
    parts.push(p);
    size += 1 + p.length;
  }
  return parts.join('&');
}
/** One name, repeated (about 175,000 times): the case that once cost an hour. */
export const ONE_KEY_FORM = mibForm(() => 'tag=x');
/** Distinct names (about 116,000): what reading 1 MiB costs when no name repeats. */
export const DISTINCT_FORM = mibForm((i) => `k${i}=x`);

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

  // Bound keeps every field as sent, so both forms are read and kept in full.
  @Post('/form')
  form(@Form(Tags) b: Bound<Tags>) {
    return { ok: b.ok, tags: b.value?.tag?.length ?? 0 };
  }

  @Get('/big')
  @Returns([Object])
  big() {
    return BIG;
  }
}

/** The app every fw case is served by. */
export function benchApp(): App {
  // maxParams lifted so that the 1 MiB forms are read in full rather than refused at 10,000.
  return new App({ log: () => {}, maxParams: 1 << 20 })
    .controllers(BenchController)
    .provide(Kept.open(new MemoryStore({ bytes: 256 << 20 })))
    .compress();
}
