import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CacheError, RedisStore, type RedisStoreOptions } from 'fw-http/cache';
import {
  cli,
  cliWith,
  makeTlsFiles,
  sleep,
  startServer,
  stopProcess,
  waitFor,
  type Access,
  type RedisProcess,
} from '../support/redis-process';

// I28.5 RedisStore's own lane: the batched claims and keeps of a `url` store go on a connection of
// fw's own (named fw-script-lane), every other command through ioredis. Real redis-servers, one
// plain, one with an ACL user and a password, one speaking TLS only, started for this file.

const PASSWORD = `pw-${randomUUID()}`;
let dir: string;
/** A server of this test's own: the lane found in CLIENT LIST is this test's store's. */
let plain: RedisProcess;
let locked: RedisProcess;
let secure: RedisProcess;
let tlsAccess: Access & { tls: NonNullable<Access['tls']> };
const stores: RedisStore[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fw-script-lane-'));
  tlsAccess = { tls: await makeTlsFiles(dir) };
  [locked, secure] = await Promise.all([
    startServer(dir, {
      access: { password: PASSWORD },
      args: [
        ...['--user', 'alice', 'on', `>${PASSWORD}`, '~*', '&*', '+@all'],
        // A user the ACL keeps from CLIENT and SCRIPT: no name, no scripts loaded ahead.
        ...['--user', 'bob', 'on', `>${PASSWORD}`, '~*', '&*', '+@all', '-client', '-script'],
      ],
    }),
    startServer(dir, { access: tlsAccess }),
  ]);
}, 60_000);
beforeEach(async () => {
  plain = await startServer(dir);
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await stopProcess(plain.child);
});
afterAll(async () => {
  await Promise.all([locked, secure].map((p) => p && stopProcess(p.child)));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function open(options: RedisStoreOptions): RedisStore {
  const store = new RedisStore(options);
  stores.push(store);
  return store;
}

/** The fields of the lane's line in CLIENT LIST, or null when it is not connected. */
async function lane(port: number, access: Access = {}): Promise<Record<string, string> | null> {
  const list = await cliWith(access, port, 'CLIENT', 'LIST');
  const line = list.split('\n').find((l) => l.includes('name=fw-script-lane '));
  if (line === undefined) return null;
  return Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string]));
}

const laneUp = (port: number, access: Access = {}, other?: string) =>
  waitFor(
    'the lane connected',
    async () => {
      const l = await lane(port, access);
      return l !== null && l.id !== other && /setname|script/.test(l.cmd ?? '');
    },
    10_000,
  );

describe('RedisStore claims and keeps on a connection of its own', () => {
  it('a url store claims and keeps on fw-script-lane with EVALSHA; the answers are those of the contract', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'a:' });
    await laneUp(plain.port);
    const claim = Buffer.from('claim');
    expect(await store.putIfAbsentOrGet('k', claim, 60_000)).toBeNull();
    expect((await lane(plain.port))?.cmd).toBe('evalsha');
    expect(await store.putIfAbsentOrGet('k', Buffer.from('other'), 60_000)).toEqual(claim);
    expect(await store.put('k', Buffer.from('answer'), 60_000, { expect: claim })).toBe(true);
    expect(await store.put('k', Buffer.from('late'), 60_000, { expect: claim })).toBe(false);
    expect(await cli(plain.port, 'GET', 'a:k')).toBe('answer');
    // Everything else goes through ioredis: the lane's last command is still the keep.
    expect(await store.get('k')).toEqual(Buffer.from('answer'));
    expect((await lane(plain.port))?.cmd).toBe('evalsha');
  });

  it('claims made in one turn share one call on the lane, each answered on its own', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'b:' });
    await laneUp(plain.port);
    await cli(plain.port, 'SET', 'b:taken', 'held');
    const before = Number((await lane(plain.port))?.['tot-cmds'] ?? NaN);
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const answers = await Promise.all(
      [...keys, 'taken'].map((k) => store.putIfAbsentOrGet(k, Buffer.from(`v-${k}`), 60_000)),
    );
    expect(answers.slice(0, 20)).toEqual(keys.map(() => null));
    expect(answers[20]).toEqual(Buffer.from('held'));
    // CLIENT LIST's own request is not counted on the lane: one EVALSHA for 21 claims.
    expect(Number((await lane(plain.port))?.['tot-cmds'])).toBe(before + 1);
    expect(await cli(plain.port, 'GET', 'b:k7')).toBe('v-k7');
  });

  it('the claims and keeps of one turn share one call on the lane, run in the order made', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'o:' });
    await laneUp(plain.port);
    const claim = Buffer.from('claim-a');
    expect(await store.putIfAbsentOrGet('a', claim, 60_000)).toBeNull();
    const before = Number((await lane(plain.port))?.['tot-cmds'] ?? NaN);
    const answers = await Promise.all([
      store.put('a', Buffer.from('answer-a'), 3_600_000, { expect: claim }),
      store.putIfAbsentOrGet('b', Buffer.from('claim-b'), 60_000),
      // A retry of `a` made after its keep reads the kept answer.
      store.putIfAbsentOrGet('a', Buffer.from('claim-a2'), 60_000),
    ]);
    expect(answers).toEqual([true, null, Buffer.from('answer-a')]);
    expect(Number((await lane(plain.port))?.['tot-cmds'])).toBe(before + 1);
    expect(await cli(plain.port, 'GET', 'o:b')).toBe('claim-b');
  });

  it('claims that find large records read each whole, however the bytes arrive', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'big:' });
    await laneUp(plain.port);
    const records = [3 << 20, 1, 200_000, 0, 70_000].map((n, i) => Buffer.alloc(n, 0x41 + i));
    await Promise.all(records.map((r, i) => store.put(`k${i}`, r, 60_000)));
    const found = await Promise.all(
      records.map((_, i) => store.putIfAbsentOrGet(`k${i}`, Buffer.from('mine'), 60_000)),
    );
    found.forEach((f, i) => expect(f?.equals(records[i]!)).toBe(true));
    expect((await lane(plain.port))?.cmd).toBe('evalsha');
  });
});

describe('the lane when Redis forgets, drops or stalls', () => {
  it('a script Redis no longer holds (SCRIPT FLUSH) is sent again whole, once, and the claim lands', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'c:' });
    await laneUp(plain.port);
    await cli(plain.port, 'SCRIPT', 'FLUSH');
    expect(await store.putIfAbsentOrGet('k', Buffer.from('x'), 60_000)).toBeNull();
    expect((await lane(plain.port))?.cmd).toBe('eval');
    expect(await cli(plain.port, 'GET', 'c:k')).toBe('x');
  });

  it('a lane closed by Redis connects again by itself, and claims go on it again', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, keyPrefix: 'd:' });
    await laneUp(plain.port);
    const first = (await lane(plain.port))!;
    await cli(plain.port, 'CLIENT', 'KILL', 'ID', first.id!);
    await laneUp(plain.port, {}, first.id);
    expect(await store.putIfAbsentOrGet('k', Buffer.from('x'), 60_000)).toBeNull();
    const again = (await lane(plain.port))!;
    expect(again.id).not.toBe(first.id);
    expect(again.cmd).toBe('evalsha');
  });

  it('a claim not answered within commandTimeoutMs fails Unavailable naming the wait; the lane comes back when Redis does', async () => {
    const own = plain;
    try {
      const store = open({ url: `redis://127.0.0.1:${own.port}`, commandTimeoutMs: 400 });
      await laneUp(own.port);
      own.child.kill('SIGSTOP');
      const started = Date.now();
      const err = await store
        .putIfAbsentOrGet('k', Buffer.from('x'), 60_000)
        .catch((e: unknown) => e);
      const waited = Date.now() - started;
      own.child.kill('SIGCONT');
      expect(err).toBeInstanceOf(CacheError);
      expect((err as CacheError).code).toBe('Unavailable');
      expect((err as CacheError).message).toMatch(
        /putIfAbsentOrGet "k" failed: .*no answer within 400 ms/,
      );
      expect(waited).toBeGreaterThanOrEqual(390);
      await laneUp(own.port);
      expect(await store.putIfAbsentOrGet('k2', Buffer.from('y'), 60_000)).toBeNull();
      expect((await lane(own.port))?.cmd).toBe('evalsha');
    } finally {
      own.child.kill('SIGCONT');
    }
  });
});

describe('the lane logs in as ioredis does', () => {
  it('the lane logs in as the URL says: ACL user and password, and the database', async () => {
    const store = open({
      url: `redis://alice:${PASSWORD}@127.0.0.1:${locked.port}/3`,
      keyPrefix: 'e:',
    });
    const access = { password: PASSWORD };
    await laneUp(locked.port, access);
    expect((await lane(locked.port, access))?.user).toBe('alice');
    expect(await store.putIfAbsentOrGet('k', Buffer.from('x'), 60_000)).toBeNull();
    expect((await lane(locked.port, access))?.db).toBe('3');
    expect(await cliWith(access, locked.port, '-n', '3', 'GET', 'e:k')).toBe('x');
    expect(await cliWith(access, locked.port, '-n', '0', 'EXISTS', 'e:k')).toBe('0');
  });

  it('a user the ACL keeps from CLIENT and SCRIPT still gets the lane: no name, each script sent whole once', async () => {
    const access = { password: PASSWORD };
    await cliWith(access, locked.port, 'SCRIPT', 'FLUSH');
    const store = open({
      url: `redis://bob:${PASSWORD}@127.0.0.1:${locked.port}`,
      keyPrefix: 'h:',
    });
    /** The lane's line: bob's connection that asked to load a script (refused). */
    const bobsLane = async () =>
      (await cliWith(access, locked.port, 'CLIENT', 'LIST'))
        .split('\n')
        .filter((l) => l.includes(' user=bob ') && l.includes(' resp=2'));
    await waitFor(
      'the lane logged in',
      async () => (await bobsLane()).some((l) => l.includes(' cmd=script|load ')),
      10_000,
    );
    expect(await store.putIfAbsentOrGet('k1', Buffer.from('x'), 60_000)).toBeNull();
    const [first] = await bobsLane();
    expect(first).toContain(' cmd=eval ');
    expect(first).toContain(' name= ');
    expect(await store.putIfAbsentOrGet('k2', Buffer.from('y'), 60_000)).toBeNull();
    expect((await bobsLane())[0]).toContain(' cmd=evalsha ');
    expect(await cliWith(access, locked.port, 'GET', 'h:k2')).toBe('y');
  });

  it('a wrong password keeps the lane out, and the claim fails Unavailable', async () => {
    const store = open({
      url: `redis://127.0.0.1:${locked.port}`,
      password: 'wrong',
      commandTimeoutMs: 300,
    });
    const err = await store
      .putIfAbsentOrGet('k', Buffer.from('x'), 60_000)
      .catch((e: unknown) => e);
    expect((err as CacheError).code).toBe('Unavailable');
    await sleep(300);
    expect(await lane(locked.port, { password: PASSWORD })).toBeNull();
  });

  it('over TLS (rediss:// with tls: { ca }) the lane speaks TLS', async () => {
    const ca = readFileSync(tlsAccess.tls.ca);
    const store = open({ url: `rediss://127.0.0.1:${secure.port}`, tls: { ca }, keyPrefix: 'f:' });
    await laneUp(secure.port, tlsAccess);
    expect(await store.putIfAbsentOrGet('k', Buffer.from('x'), 60_000)).toBeNull();
    expect((await lane(secure.port, tlsAccess))?.cmd).toBe('evalsha');
    expect(await cliWith(tlsAccess, secure.port, 'GET', 'f:k')).toBe('x');
  });

  it('maxBatch: 1 opens no lane (each claim on its own, through ioredis)', async () => {
    const store = open({ url: `redis://127.0.0.1:${plain.port}`, maxBatch: 1 });
    expect(await store.putIfAbsentOrGet('g', Buffer.from('x'), 60_000)).toBeNull();
    expect(await lane(plain.port)).toBeNull();
    expect(await cli(plain.port, 'GET', 'g')).toBe('x');
  });
});
