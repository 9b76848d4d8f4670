import { breaches, runCrash, type CrashReport } from '../../bench/crash/harness';
import { startPostgres, type BenchPostgres } from '../../bench/crash/postgres';
import { startRedis, type RedisServer } from '../support/redis';
import { tsChild } from '../support/ts-child';

// The crash harness, short form (bench/crash/harness.ts says what one run does): two instances,
// each transfer's key sent as three concurrent copies over both, a slow upstream called under a
// derived key, handlers that throw after writing, SIGKILLs aimed at the steps of a request,
// immediate Postgres stops, and two stalls past the lease with a takeover. Each check of
// `breaches` can fail: `npm run check:mutants` breaks atomicity six ways in a scratch copy of
// lib/ and expects this spec to fail on each. The long form is `npm run bench:crash`.

// On Postgres: 200 transfers, 10 kills, 2 stops, 2 stalls. On Redis, where it only shows what
// the atomic route is for: 100 transfers, 6 kills.
const RUNS = {
  pg: { requests: 200, kills: 10, pgStops: 2 },
  redis: { requests: 100, kills: 6, pgStops: 0 },
} as const;

let pg: BenchPostgres;
let redis: RedisServer;
beforeAll(async () => {
  const started = await startPostgres(['crash']);
  if ('missing' in started) throw new Error(started.missing);
  pg = started;
  redis = await startRedis();
}, 60_000);
afterAll(async () => {
  await Promise.all([pg?.stop(), redis?.stop()]);
});

async function crash(store: 'pg' | 'redis'): Promise<CrashReport> {
  const { command, args } = tsChild('bench/crash/server.ts');
  const databaseUrl = pg.urlOf('crash');
  return runCrash({
    store,
    databaseUrl,
    ...(store === 'pg' ? { database: pg, pgDownMs: 300 } : {}),
    ...RUNS[store],
    ...(process.env.CRASH_LOG === '1'
      ? {
          log: (l: string) =>
            process.stderr.write(`${(performance.now() / 1000).toFixed(1)} ${l}\n`),
        }
      : {}),
    server: (own) => ({
      command,
      args,
      env: {
        ...process.env,
        ...own,
        CRASH_STORE: store,
        CRASH_THROW: '0.1',
        CRASH_PROBE_MS: '4',
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
      },
    }),
  });
}

describe('crash harness (short form)', () => {
  it('atomic route on PgStore under kills aimed inside the transaction, Postgres stops, racing copies, throws and stalls past the lease: every effect once in the ledger and at the upstream, one answer per key, nothing lost', async () => {
    const report = await crash('pg');
    console.log(`crash harness, atomic on PgStore: ${JSON.stringify(report)}`);
    expect(breaches(report, RUNS.pg)).toEqual([]);
    // Each stalled run is refused at its commit (or cut as its lease is found lost): 503, the claim named.
    expect(report.stalls).toEqual([
      expect.stringMatching(/^plain: 503 .*claim/),
      expect.stringMatching(/^hidden: 503 .*claim/),
    ]);
  }, 180_000);

  it('RedisStore (the handler writes outside the store) under the same kills, copies and throws: nothing lost, each upstream effect once; its duplicates are counted', async () => {
    const report = await crash('redis');
    console.log(`crash harness, RedisStore: ${JSON.stringify(report)}`);
    expect(breaches(report, RUNS.redis)).toEqual([]);
  }, 180_000);
});
