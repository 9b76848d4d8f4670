// A process of the PgStore bench (bench/pg.ts), so the load generator, the app and the upstream
// each have an event loop of their own: `node pg-server.js app <database-url> <upstream-url>
// <pool-size>` (the app of pg-app.ts on one pool) or `node pg-server.js upstream <delay-ms>`. Sends its port
// once listening; the upstream answers 'counts' with its counts; 'close' ends either cleanly.
import { Pool } from 'pg';
import { pgBenchApp } from './pg-app';
import { listenUpstream, type UpstreamCounts } from './pg-upstream';

/** What the bench learns of a pg-server process. */
export type PgServerMessage = { readonly port: number } | { readonly counts: UpstreamCounts };

/** Where the app's database and upstream are, and its pool's size. */
interface AppArgs {
  readonly databaseUrl: string;
  readonly upstream: string;
  readonly poolSize: number;
}

async function serveApp({
  databaseUrl,
  upstream,
  poolSize,
}: AppArgs): Promise<() => Promise<void>> {
  const pool = new Pool({
    connectionString: databaseUrl,
    max: poolSize,
    application_name: 'fw-bench-pg',
  });
  pool.on('error', () => undefined); // an idle connection cut is not the bench's failure
  await pool.query('CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, sku text, qty int)');
  const { app, store } = pgBenchApp({ pool, upstream });
  await store.migrate();
  const { port } = await app.listen({ port: 0, host: '127.0.0.1' });
  process.send!({ port } satisfies PgServerMessage);
  return async () => {
    await app.close();
    await store.close();
    await pool.end();
  };
}

async function serveUpstream(delayMs: number): Promise<() => Promise<void>> {
  const up = await listenUpstream(delayMs);
  process.on('message', (m) => {
    if (m === 'counts') process.send!({ counts: up.counts() } satisfies PgServerMessage);
  });
  process.send!({ port: up.port } satisfies PgServerMessage);
  return () => up.close();
}

async function main(): Promise<void> {
  const [kind, a, b, c] = process.argv.slice(2);
  const close =
    kind === 'app'
      ? await serveApp({ databaseUrl: a!, upstream: b!, poolSize: Number(c) })
      : await serveUpstream(Number(a));
  process.on('message', (m) => {
    if (m === 'close') void close().then(() => process.exit(0));
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
