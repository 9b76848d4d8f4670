// `node dist/bench/pg.js` (after `npm run build`): the first idempotent POST on PgStore, plain and
// atomic, as a ratio of a validated POST doing the same insert without idempotency. Each request
// has a fresh key (every case sends one: autocannon rebuilds every request once setupRequest is
// used). One Postgres of the bench's own; the app runs in this process beside autocannon (both
// share the machine alike for the three cases). PG_BENCH_SECONDS (4) per run, PG_BENCH_ROUNDS (3)
// rounds of the three cases in turn; the median of each case's rounds is reported.
import autocannon from 'autocannon';
import { IsInt, IsString } from 'class-validator';
import { Pool } from 'pg';
import { App, Body, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, Space } from 'fw-http/cache';
import { startPostgres } from './crash/postgres';

class NewOrder {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

const seconds = Number(process.env.PG_BENCH_SECONDS ?? 4);
const rounds = Number(process.env.PG_BENCH_ROUNDS ?? 3);
const INSERT = 'INSERT INTO orders (sku, qty) VALUES ($1, $2) RETURNING id';

function app(pool: Pool, store: PgStore): App {
  const Plain = Space('plain', { ttlSeconds: 3600, maxBytes: 4096 });
  const Atomic = Space('atomic', { ttlSeconds: 3600, maxBytes: 4096 });
  @Controller()
  class Orders {
    @Post('/validated') @Returns(Status(201, Object)) async validated(@Body() o: NewOrder) {
      const { rows } = await pool.query<{ id: number }>(INSERT, [o.sku, o.qty]);
      return { id: rows[0]!.id };
    }
    @Post('/plain') @Idempotent(Plain) @Returns(Status(201, Object)) async plain(
      @Body() o: NewOrder,
    ) {
      const { rows } = await pool.query<{ id: number }>(INSERT, [o.sku, o.qty]);
      return { id: rows[0]!.id };
    }
    @Post('/atomic')
    @Idempotent(Atomic, { atomic: true })
    @Returns(Status(201, Object))
    async atomic(@Body() o: NewOrder, tx: Tx) {
      const { rows } = await tx.query<{ id: number }>(INSERT, [o.sku, o.qty]);
      return { id: rows[0]!.id };
    }
  }
  return new App({ log: () => undefined })
    .controllers(Orders)
    .provide(Plain.open(store))
    .provide(Atomic.open(store));
}

let keys = 0;
async function run(url: string): Promise<number> {
  const r = await autocannon({
    url,
    method: 'POST',
    duration: seconds,
    connections: 16,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sku: 'tea', qty: 2 }),
    requests: [
      {
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          headers: { ...req.headers, 'idempotency-key': `k${process.pid}-${keys++}` },
        }),
      },
    ],
  });
  if (r.non2xx + r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

async function main(): Promise<void> {
  const pg = await startPostgres(['bench']);
  if ('missing' in pg) throw new Error(pg.missing);
  const pool = new Pool({ connectionString: pg.urlOf('bench'), max: 10 });
  pool.on('error', () => undefined); // an idle connection cut when Postgres stops is not a failure
  const store = new PgStore({ connectionString: pg.urlOf('bench'), poolSize: 10 });
  try {
    await pool.query('CREATE TABLE orders (id serial PRIMARY KEY, sku text, qty int)');
    await store.migrate();
    const server = app(pool, store);
    const { url } = await server.listen({ port: 0 });
    const cases = ['validated', 'plain', 'atomic'] as const;
    const seen: Record<(typeof cases)[number], number[]> = { validated: [], plain: [], atomic: [] };
    await run(`${url}/validated`); // warm-up
    for (let i = 0; i < rounds; i++) for (const c of cases) seen[c].push(await run(`${url}/${c}`));
    await server.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const base = median(seen.validated);
    console.log('| first POST (fresh key), Postgres insert | req/s (median) | × validated POST |');
    console.log('|---|---|---|');
    for (const c of cases)
      console.log(
        `| ${c} | ${median(seen[c]).toFixed(0)} | ${(median(seen[c]) / base).toFixed(2)}× |`,
      );
  } finally {
    await store.close();
    await pool.end();
    await pg.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
