// The server the crash harness kills: POST /transfers writes one ledger row per transfer and
// answers it, idempotent per Idempotency-Key. With CRASH_STORE=pg the route is atomic (the ledger
// row and the kept answer commit in one transaction on a PgStore); with CRASH_STORE=redis the row
// is written by the handler outside the store and the answer kept in Redis, as most idempotency
// middleware does. Prints `listening <port>` on stdout once it takes requests.
import { IsInt, IsString } from 'class-validator';
import { Pool } from 'pg';
import { App, Body, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, RedisStore, Space, type Store } from 'fw-http/cache';

class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

const env = process.env;
const atomic = env.CRASH_STORE !== 'redis';
// A short lease, so a claim left by a killed process frees its key soon and retries go on.
const Transfers = Space('transfers', { ttlSeconds: 3600, maxBytes: 4096, leaseMs: 300 });
const pool = new Pool({ connectionString: env.DATABASE_URL, max: 8 });
pool.on('error', () => undefined);
/** Up to CRASH_DELAY_MS (default 10) between the ledger write and the answer: the window a kill lands in. */
const delayMs = Number(env.CRASH_DELAY_MS ?? 10);
const pause = () => new Promise((r) => setTimeout(r, Math.random() * delayMs));
const key = (c: Ctx) => String(c.header('idempotency-key'));

@Controller()
class AtomicTransfers {
  @Post('/transfers')
  @Idempotent(Transfers, { atomic: true })
  @Returns(Status(201, Object))
  async create(@Body() t: Transfer, tx: Tx, c: Ctx) {
    const { rows } = await tx.query<{ id: number }>(
      'INSERT INTO ledger (key, to_account, amount) VALUES ($1, $2, $3) RETURNING id',
      [key(c), t.to, t.amount],
    );
    await pause();
    return { id: rows[0]!.id, to: t.to, amount: t.amount };
  }
}

@Controller()
class CacheTransfers {
  @Post('/transfers')
  @Idempotent(Transfers)
  @Returns(Status(201, Object))
  async create(@Body() t: Transfer, c: Ctx) {
    const { rows } = await pool.query<{ id: number }>(
      'INSERT INTO ledger (key, to_account, amount) VALUES ($1, $2, $3) RETURNING id',
      [key(c), t.to, t.amount],
    );
    await pause();
    return { id: rows[0]!.id, to: t.to, amount: t.amount };
  }
}

async function main(): Promise<void> {
  let store: Store;
  if (atomic) {
    const pg = new PgStore({ connectionString: env.DATABASE_URL!, commandTimeoutMs: 5000 });
    await pg.migrate();
    store = pg;
  } else store = new RedisStore({ url: env.REDIS_URL!, commandTimeoutMs: 5000 });
  const app = new App({ log: () => undefined })
    .controllers(atomic ? AtomicTransfers : CacheTransfers)
    .provide(Transfers.open(store));
  const { port } = await app.listen({ port: Number(env.PORT ?? 0), host: '127.0.0.1' });
  console.log(`listening ${port}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
