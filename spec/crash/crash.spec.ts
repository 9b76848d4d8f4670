import { runCrash, type CrashReport } from '../../bench/crash/harness';
import { startPostgres, type PostgresServer } from '../support/postgres-process';
import { startRedis, type RedisServer } from '../support/redis';
import { freePort } from '../support/redis-process';
import { tsChild } from '../support/ts-child';

// The crash harness, short form: 200 transfers, the server killed with SIGKILL
// 10 times and started again, a client retrying each transfer with its key. On an atomic route
// (PgStore) every effect is there exactly once; the same harness on RedisStore shows why atomic
// routes exist. The long form is `node dist/bench/crash.js`.

let pg: PostgresServer;
let redis: RedisServer;
beforeAll(async () => {
  [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  await pg.createDatabase('crash');
}, 60_000);
afterAll(async () => {
  await Promise.all([pg?.stop(), redis?.stop()]);
});

async function crash(store: 'pg' | 'redis'): Promise<CrashReport> {
  const { command, args } = tsChild('bench/crash/server.ts');
  const databaseUrl = pg.urlOf('crash');
  return runCrash({
    port: await freePort(),
    databaseUrl,
    requests: 200,
    kills: 10,
    server: (port) => ({
      command,
      args,
      env: {
        ...process.env,
        PORT: String(port),
        CRASH_STORE: store,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
      },
    }),
  });
}

describe('crash harness (short form)', () => {
  it('atomic route on PgStore, 200 transfers and 10 SIGKILLs: every effect exactly once, every answer the same on every retry, nothing lost', async () => {
    const report = await crash('pg');
    console.log(`crash harness, atomic on PgStore: ${JSON.stringify(report)}`);
    expect(report).toMatchObject({
      requests: 200,
      kills: 10,
      duplicatedKeys: 0,
      duplicateRows: 0,
      lost: 0,
      differingAnswers: 0,
      answerWithoutRow: 0,
    });
  }, 240_000);

  it('the same harness on RedisStore (handler writes outside the store) counts its duplicates, and loses nothing', async () => {
    const report = await crash('redis');
    console.log(`crash harness, RedisStore: ${JSON.stringify(report)}`);
    expect(report).toMatchObject({ requests: 200, kills: 10, lost: 0 });
    // Reported, not asserted as a number: a kill lands between the effect and the keep only
    // sometimes. What must hold is that every duplicate shows in the ledger count.
    expect(report.duplicateRows).toBeGreaterThanOrEqual(report.duplicatedKeys);
  }, 240_000);
});
