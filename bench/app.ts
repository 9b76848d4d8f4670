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
import { MemoryStore, RedisStore, Space } from 'fw-http/cache';
import { BIG, SMALL, Small } from './data';

// Every first POST comes from one caller: its per-caller bound is lifted so the case measures the
// claim, handler and keep, not 429s. Kept answers are held until their TTL; the 256 MiB store holds
// a whole run of first POSTs (about 0.4 M records).
const Kept = Space('bench', { ttlSeconds: 3600, maxBytes: 64 * 1024, maxBytesPerCaller: 1 << 30 });
// The same, kept in a redis-server the bench starts (a whole run is a few tens of MB there): the
// plain one, with no replica attached.
const KeptInRedis = Space('bench-redis', {
  ttlSeconds: 3600,
  maxBytes: 64 * 1024,
  maxBytesPerCaller: 1 << 30,
});

// The same again, on the primary that has a replica, without waiting for it: the baseline of the
// `replicas: 1` route (both pay for the replication stream, only one waits for it).
const KeptInPrimary = Space('bench-primary', {
  ttlSeconds: 3600,
  maxBytes: 64 * 1024,
  maxBytesPerCaller: 1 << 30,
});

// And on that primary, a store that waits for its replica (`replicas: 1`).
const KeptInReplicas = Space('bench-replicas', {
  ttlSeconds: 3600,
  maxBytes: 64 * 1024,
  maxBytesPerCaller: 1 << 30,
});

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

class Tags {
  @IsOptional() @IsArray() @IsString({ each: true }) tag?: string[];
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

  // Bound keeps every field as sent, so both forms are read and kept in full.
  @Post('/form')
  @Returns(Object)
  form(@Form(Tags) b: Bound<Tags>) {
    return { ok: b.ok, tags: b.value?.tag?.length ?? 0 };
  }

  @Get('/big')
  @Returns([Object])
  big() {
    return BIG;
  }
}

// Only in the app given a standalone Redis URL: the idle footprint is measured on the app without it.
@Controller()
class RedisController {
  @Post('/idem-redis')
  @Idempotent(KeptInRedis, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  idem(@Body() order: NewOrder) {
    return order;
  }
}

// On the primary with a replica: the same route without waiting, and with WAIT 1.
@Controller()
class ReplicatedController {
  @Post('/idem-redis-primary')
  @Idempotent(KeptInPrimary, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  primary(@Body() order: NewOrder) {
    return order;
  }

  @Post('/idem-redis-replicas')
  @Idempotent(KeptInReplicas, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  replicas(@Body() order: NewOrder) {
    return order;
  }
}

/** The bench's redis-servers the fw app is given (servers.ts `--standalone`, `--primary`). */
export interface BenchRedisUrls {
  /** A redis-server with no replica: POST /idem-redis. */
  readonly standalone?: string;
  /** A primary with one replica linked: POST /idem-redis-primary and /idem-redis-replicas. */
  readonly primary?: string;
}

/** The app every fw case is served by; given Redis URLs, it also serves their routes. */
export function benchApp(redis: BenchRedisUrls = {}): App {
  // maxParams lifted so that the 1 MiB forms are read in full rather than refused at 10,000.
  const app = new App({ log: () => {}, maxParams: 1 << 20 })
    .controllers(BenchController)
    .provide(Kept.open(new MemoryStore({ bytes: 3 * 2 ** 30 })))
    .compress();
  if (redis.standalone !== undefined)
    app
      .controllers(RedisController)
      .provide(KeptInRedis.open(new RedisStore({ url: redis.standalone })));
  if (redis.primary !== undefined)
    app
      .controllers(ReplicatedController)
      .provide(KeptInPrimary.open(new RedisStore({ url: redis.primary })))
      .provide(
        KeptInReplicas.open(
          new RedisStore({
            url: redis.primary,
            keyPrefix: 'r:',
            replicas: 1,
            replicaTimeoutMs: 500,
          }),
        ),
      );
  return app;
}
