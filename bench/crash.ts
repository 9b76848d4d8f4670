// `npm run bench:crash`: the crash harness, long form (bench/crash/harness.ts says what a run
// does). CRASH_REQUESTS transfers (10,000), each sent as three concurrent copies over two
// instances, with CRASH_KILLS SIGKILLs (200) aimed at the steps of a request and CRASH_PG_STOPS
// immediate stops of Postgres (10), Postgres running with fsync on; the handler calls an upstream
// CRASH_UPSTREAM_MS slow (50) under a derived key and throws after writing one run in ten. First
// on an atomic route over PgStore (with the two stalls past the lease), then on the same route
// over RedisStore with the handler writing outside the store. Prints each run's table and exits 1
// when a run broke what it must hold (`breaches`). `npm test` runs a short form (spec/crash).
import path from 'node:path';
import { breaches, runCrash, type CrashReport } from './crash/harness';
import { startPostgres, type BenchPostgres } from './crash/postgres';
import { startRedis } from './redis';

const env = process.env;
const requests = Number(env.CRASH_REQUESTS ?? 10_000);
const kills = Number(env.CRASH_KILLS ?? 200);
const pgStops = Number(env.CRASH_PG_STOPS ?? 10);
const upstreamDelayMs = Number(env.CRASH_UPSTREAM_MS ?? 50);

async function run(
  store: 'pg' | 'redis',
  at: { pg: BenchPostgres; redisUrl: string },
): Promise<CrashReport> {
  const databaseUrl = at.pg.urlOf('crash');
  return runCrash({
    store,
    databaseUrl,
    ...(store === 'pg' ? { database: at.pg, pgStops, pgDownMs: 1000 } : {}),
    requests,
    kills,
    concurrency: 16,
    upstreamDelayMs,
    log: (line) => process.stderr.write(`${store}: ${line}\n`),
    server: (own) => ({
      command: process.execPath,
      args: [path.join(__dirname, 'crash', 'server.js')],
      env: {
        ...env,
        ...own,
        CRASH_STORE: store,
        // The upstream's delay stays under the lease's margin (a third of it): a run whose lease
        // lapsed finds it before a call of its could still be at the upstream when another runs.
        CRASH_LEASE_MS: String(Math.max(500, upstreamDelayMs * 10)),
        CRASH_THROW: '0.1',
        CRASH_PROBE_MS: '4',
        DATABASE_URL: databaseUrl,
        REDIS_URL: at.redisUrl,
      },
    }),
  });
}

/** The report of one run as a row of the docs' table. */
function row(name: string, r: CrashReport): string {
  const cells = [
    name,
    r.requests,
    r.kills,
    r.pgStops,
    r.killsInsideTx,
    r.threw,
    r.claimsLost,
    r.duplicatedKeys,
    r.lost,
    r.differingAnswers,
    r.answerWithoutRow,
    r.upstreamTwice,
    r.upstream.concurrent,
    r.seconds.toFixed(0),
  ];
  return `| ${cells.join(' | ')} |`;
}

async function main(): Promise<void> {
  const pg = await startPostgres(['crash'], { fsync: true });
  if ('missing' in pg) throw new Error(pg.missing);
  const redis = await startRedis({ replica: false });
  try {
    const rows: [string, CrashReport][] = [
      ['atomic route, PgStore', await run('pg', { pg, redisUrl: '' })],
    ];
    if ('missing' in redis) console.log(`RedisStore: skipped (${redis.missing})`);
    else rows.push(['RedisStore, effect outside', await run('redis', { pg, redisUrl: redis.url })]);
    console.log(
      `crash harness, long form: ${requests} transfers × 3 copies, ${kills} SIGKILLs, ${pgStops} Postgres stops (fsync on), a ${upstreamDelayMs} ms upstream`,
    );
    console.log(
      '| store | transfers | kills | Postgres stops | kills inside a transaction | runs that threw | claim races | duplicated keys | lost | differing answers | answers without their row | upstream effects twice | two calls of a key at once | seconds |',
    );
    console.log(`|${'---|'.repeat(14)}`);
    for (const [name, r] of rows) console.log(row(name, r));
    for (const [name, r] of rows) {
      console.log(`\n${name}: kills cut ${JSON.stringify(r.killLandings)}`);
      if (r.store === 'pg') console.log(`${name}: stops found ${JSON.stringify(r.stopLandings)}`);
      console.log(
        `${name}: stalls ${JSON.stringify(r.stalls)}; answers ${JSON.stringify(r.answers)}`,
      );
      const broke = breaches(r, { kills, pgStops: r.store === 'pg' ? pgStops : 0 });
      if (broke.length > 0) {
        console.error(`${name} broke: ${broke.join('; ')}`);
        process.exitCode = 1;
      }
    }
  } finally {
    if (!('missing' in redis)) await redis.stop();
    await pg.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
