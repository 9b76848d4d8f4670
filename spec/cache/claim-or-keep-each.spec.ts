import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { CLAIM_OR_KEEP_EACH } from '../../lib/cache/redis/claim-or-keep-each';
import { startServer, stopProcess, type RedisProcess } from '../support/redis-process';

// The script a batch of claims and keeps runs in, on a real redis-server: each kind answers
// as its own command would, in the order the calls were made. It runs as shipped (a claim is one
// SET NX GET on Redis 7) and with its version test turned off, as Redis 6 runs it (GET, then SET):
// both must give the same answers and leave the same records.

const AS_REDIS_6 = CLAIM_OR_KEEP_EACH.replace('redis.REDIS_VERSION_NUM ~= nil', 'false');

let dir: string;
let server: RedisProcess;
let redis: IORedis;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fw-claim-or-keep-'));
  server = await startServer(dir);
  redis = new IORedis({ port: server.port, host: '127.0.0.1', lazyConnect: true });
  await redis.connect();
}, 60_000);
afterAll(async () => {
  redis?.disconnect();
  if (server !== undefined) await stopProcess(server.child);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Redis's clock in microseconds (TIME). */
async function serverMicros(): Promise<number> {
  const [sec, usec] = (await redis.time()) as [number | string, number | string];
  return Number(sec) * 1e6 + Number(usec);
}

/** A claim written answers the server's clock in microseconds: read as 'written' (the value is checked apart). */
const WRITTEN = 'written';

/** One call of `script`: `calls` in order, each `[kind, key, ...args]`; the replies, errors as their messages. */
async function run(script: string, calls: Array<[string, string, ...Array<string | number>]>) {
  const keys = calls.map((c) => c[1]);
  const args = [calls.map((c) => c[0]).join(''), ...calls.flatMap((c) => c.slice(2))];
  const replies = (await redis.callBuffer(
    'EVAL',
    script,
    keys.length,
    ...keys,
    ...args,
  )) as unknown[];
  return replies.map((r) =>
    r instanceof Error
      ? `error ${r.message.split(' ')[0]}`
      : Buffer.isBuffer(r)
        ? r.toString()
        : typeof r === 'number' && r > 1e15
          ? WRITTEN
          : r,
  );
}

describe.each([
  ['as shipped (SET NX GET)', CLAIM_OR_KEEP_EACH],
  ['as Redis 6 runs it (GET, then SET)', AS_REDIS_6],
])('the batch script, %s', (name, script) => {
  const p = `${name.length}:`; // each variant on keys of its own

  it('a claim writes a free key (answering the clock) and reads a held one; a keep writes over its own claim only (1, else 0)', async () => {
    await redis.set(`${p}held`, 'other');
    const answers = await run(script, [
      ['c', `${p}a`, 'claim-a', 60_000],
      ['c', `${p}held`, 'claim-h', 60_000],
      ['k', `${p}a`, 'claim-a', 'answer-a', 3_600_000],
      ['k', `${p}held`, 'claim-h', 'answer-h', 3_600_000],
      ['k', `${p}none`, 'claim-n', 'answer-n', 3_600_000],
    ]);
    // The keep of `held` expects a claim the key does not hold: 0, and the record stays.
    expect(answers).toEqual([WRITTEN, 'other', 1, 0, 0]);
    expect(await redis.get(`${p}a`)).toBe('answer-a');
    expect(await redis.get(`${p}held`)).toBe('other');
    expect(await redis.exists(`${p}none`)).toBe(0);
    // The keep's ttl replaced the claim's.
    expect(await redis.pttl(`${p}a`)).toBeGreaterThan(60_000);
  });

  it('in the order made: a key claimed twice is claimed by the first and read by the second; a claim after a keep reads the answer', async () => {
    const answers = await run(script, [
      ['c', `${p}twice`, 'first', 60_000],
      ['c', `${p}twice`, 'second', 60_000],
      ['k', `${p}twice`, 'first', 'kept', 3_600_000],
      ['c', `${p}twice`, 'third', 60_000],
    ]);
    expect(answers).toEqual([WRITTEN, 'first', 1, 'kept']);
    expect(await redis.pttl(`${p}twice`)).toBeGreaterThan(60_000);
  });

  it('a claim sets its lease as PX', async () => {
    expect(await run(script, [['c', `${p}lease`, 'claim', 5_000]])).toEqual([WRITTEN]);
    const ttl = await redis.pttl(`${p}lease`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
  });

  it('a key holding another type fails only its own element, claim or keep', async () => {
    await redis.hset(`${p}hash`, 'f', 'v');
    const answers = await run(script, [
      ['c', `${p}hash`, 'claim', 60_000],
      ['c', `${p}fine`, 'claim', 60_000],
      ['k', `${p}hash`, 'claim', 'answer', 60_000],
    ]);
    expect(answers).toEqual(['error WRONGTYPE', WRITTEN, 'error WRONGTYPE']);
    expect(await redis.type(`${p}hash`)).toBe('hash');
  });

  it("a claim written answers the server's clock (TIME) in microseconds, its fencing token: read between the clock before and after, growing from claim to claim of a key", async () => {
    const before = await serverMicros();
    const [first] = (await redis.eval(script, 1, `${p}clock`, 'c', 'one', 60_000)) as number[];
    await redis.del(`${p}clock`); // released: the key is claimed again
    const [second] = (await redis.eval(script, 1, `${p}clock`, 'c', 'two', 60_000)) as number[];
    const after = await serverMicros();
    expect(Number.isSafeInteger(first)).toBe(true);
    expect(first).toBeGreaterThanOrEqual(before);
    expect(second).toBeGreaterThan(first!);
    expect(second).toBeLessThanOrEqual(after);
  });
});

it('on Redis 7 a claim in the batch script is one command (SET NX GET), on Redis 6 two (GET, SET)', async () => {
  /** The calls of each command Redis has run since `CONFIG RESETSTAT`. */
  const calls = async (): Promise<Record<string, number>> => {
    const info = await redis.info('commandstats');
    return Object.fromEntries(
      [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]),
    );
  };
  await redis.config('RESETSTAT');
  await run(CLAIM_OR_KEEP_EACH, [['c', 'count:7', 'claim', 60_000]]);
  expect(await calls()).toMatchObject({ set: 1 });
  expect((await calls()).get).toBeUndefined();
  await redis.config('RESETSTAT');
  await run(AS_REDIS_6, [['c', 'count:6', 'claim', 60_000]]);
  expect(await calls()).toMatchObject({ get: 1, set: 1 });
});
