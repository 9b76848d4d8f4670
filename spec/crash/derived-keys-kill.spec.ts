import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { App, Controller, Idempotent, Param, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { startRedis, type RedisServer } from '../support/redis';
import { tsChild } from '../support/ts-child';

// Derived Idempotency-Keys across a real crash: the shop runs in a child process that is killed
// with SIGKILL after its calls reached the upstream (an fw app with idempotent routes); a new
// process takes the client's retry and calls again. Each call must go out under the key it had
// on the first run, so the upstream makes each effect once, whichever steps were recorded and
// whichever branch the rerun takes.

let redis: RedisServer;
let upstream: App;
let upstreamUrl = '';
/** Every effect the upstream made, in order, and every key it was sent. */
const effects: string[] = [];
const seen: string[] = [];
beforeAll(async () => {
  redis = await startRedis();
  const space = (name: string) => Space(name, { ttlSeconds: 60, maxBytes: 4096 });
  const [Charges, Reserves, Checks] = [space('charges'), space('reserves'), space('checks')];
  @Controller()
  class Upstream {
    @Post('/charges') @Idempotent(Charges) @Returns(Status(201, Object)) charge() {
      effects.push('charge');
      return {};
    }
    @Post('/reserve/{sku}')
    @Idempotent(Reserves)
    @Returns(Status(201, Object))
    reserve(@Param('sku') sku: string) {
      effects.push(`reserve ${sku}`);
      return {};
    }
    @Post('/checks') @Idempotent(Checks) @Returns(Status(201, Object)) check() {
      effects.push('check');
      return {};
    }
  }
  upstream = new App({ log: () => {} }).controllers(Upstream).use(async (c, next) => {
    seen.push(String(c.header('idempotency-key')));
    await next();
  });
  for (const s of [Charges, Reserves, Checks])
    upstream.provide(s.open(new MemoryStore({ bytes: 1 << 20 })));
  upstreamUrl = (await upstream.listen({ port: 0, host: '127.0.0.1' })).url;
}, 60_000);
afterAll(async () => {
  await upstream?.close();
  await redis?.stop();
});

async function shop(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const { command, args } = tsChild('spec/crash/derived-keys-server.ts');
  const child = spawn(command, args, {
    env: { ...process.env, UPSTREAM_URL: upstreamUrl, REDIS_URL: redis.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => reject(new Error(`shop exited (${code}):\n${out}`)));
  });
  return { child, port };
}

function pay(port: number, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/pay',
        headers: { 'idempotency-key': key },
      },
      (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One row: a first shop (env `first`) takes POST /pay and is killed with SIGKILL once the upstream
 * made `madeFirst` effects; a second (env `rerun`) takes the retry. Returns the retry's answer and
 * the keys the upstream was sent on each run.
 */
async function crashAndRetry(row: {
  mode: string;
  madeFirst: number;
  first?: Record<string, string>;
  rerun?: Record<string, string>;
}): Promise<{ status: number; body: unknown; firstKeys: string[]; rerunKeys: string[] }> {
  effects.length = 0;
  seen.length = 0;
  const key = `k-${row.mode}`;
  const first = await shop({ MODE: row.mode, HANG: '1', ...row.first });
  void pay(first.port, key).catch(() => undefined); // cut by the kill
  for (const end = Date.now() + 30_000; effects.length < row.madeFirst && Date.now() < end;)
    await sleep(20);
  expect(effects).toHaveLength(row.madeFirst);
  await new Promise<void>((r) => {
    first.child.once('exit', () => r());
    first.child.kill('SIGKILL');
  });
  const firstKeys = [...seen];
  const second = await shop({ MODE: row.mode, HANG: '0', ...row.rerun });
  try {
    await sleep(1500); // the dead process's claim lapses (lease 1 s)
    const retry = await pay(second.port, key);
    return {
      status: retry.status,
      body: JSON.parse(retry.body),
      firstKeys,
      rerunKeys: seen.slice(firstKeys.length),
    };
  } finally {
    second.child.kill('SIGKILL');
  }
}

describe('derived keys across a real crash', () => {
  it('plain calls: a rerun after kill -9 sends the same derived keys in the same order, one per call and per turn of a loop; each effect is made once', async () => {
    const r = await crashAndRetry({ mode: 'plain', madeFirst: 3 });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
    expect(r.body).toEqual({ statuses: [201, 201, 201] });
    expect(effects).toEqual(['charge', 'reserve a', 'reserve b']);
    expect(new Set(r.firstKeys).size).toBe(3);
    expect(r.firstKeys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.rerunKeys).toEqual(r.firstKeys);
  }, 90_000);

  it('a step then a call: the step is read back after kill -9 and the reserve after it goes out under its first key (reserved once)', async () => {
    const r = await crashAndRetry({ mode: 'step-then-call', madeFirst: 2 });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
    expect(r.body).toEqual({ statuses: [201, 201] });
    expect(effects).toEqual(['charge', 'reserve a']);
    expect(r.rerunKeys).toEqual([r.firstKeys[1]]); // the charge was not sent again
  }, 90_000);

  it('a call inside a step killed before its record: the step runs again and its call goes out under its first key (reserved once)', async () => {
    const r = await crashAndRetry({ mode: 'in-step', madeFirst: 2 });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
    expect(r.body).toEqual({ statuses: [201, 201] });
    expect(effects).toEqual(['charge', 'reserve a']);
    expect(r.rerunKeys).toEqual([r.firstKeys[1]]);
  }, 90_000);

  it('a branch that differs on the rerun: the fraud check is skipped and the charge keeps its key (charged once)', async () => {
    const r = await crashAndRetry({
      mode: 'branch',
      madeFirst: 2,
      first: { FLAG: '1' },
      rerun: { FLAG: '0' },
    });
    expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
    expect(r.body).toEqual({ statuses: [201] });
    expect(effects).toEqual(['check', 'charge']);
    expect(r.rerunKeys).toEqual([r.firstKeys[1]]);
  }, 90_000);
});
