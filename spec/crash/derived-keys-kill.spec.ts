import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRedis, type RedisServer } from '../support/redis';
import { tsChild } from '../support/ts-child';

// Issue 23 §3: a rerun after kill -9 sends the same derived Idempotency-Keys. The shop runs in a
// child process that is killed with SIGKILL after its handler sent both charges; a new process
// takes the client's retry and sends them again, under the same keys.

let redis: RedisServer;
let bank: Server;
let bankUrl = '';
const seen: string[] = [];
beforeAll(async () => {
  redis = await startRedis();
  bank = createServer((req, res) => {
    seen.push(String(req.headers['idempotency-key']));
    req.resume().on('end', () => res.writeHead(201).end('{}'));
  });
  await new Promise<void>((r) => bank.listen(0, '127.0.0.1', r));
  bankUrl = `http://127.0.0.1:${(bank.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => bank?.close(r));
  await redis?.stop();
});

async function shop(hang: boolean): Promise<{ child: ChildProcess; port: number }> {
  const { command, args } = tsChild('spec/crash/derived-keys-server.ts');
  const child = spawn(command, args, {
    env: { ...process.env, BANK_URL: bankUrl, REDIS_URL: redis.url, HANG: hang ? '1' : '0' },
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

function pay(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/pay',
        headers: { 'idempotency-key': 'k-9' },
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

describe('I23.3 derived keys across a real crash', () => {
  it('I23.3 a rerun after kill -9 sends the same derived Idempotency-Keys, in the same order', async () => {
    const first = await shop(true);
    void pay(first.port).catch(() => undefined); // cut by the kill
    for (const end = Date.now() + 30_000; seen.length < 2 && Date.now() < end;) await sleep(20);
    expect(seen).toHaveLength(2);
    await new Promise<void>((r) => {
      first.child.once('exit', () => r());
      first.child.kill('SIGKILL');
    });
    const second = await shop(false);
    try {
      await sleep(600); // the dead process's claim lapses (lease 300 ms)
      const retry = await pay(second.port);
      expect(retry.status).toBe(201);
      expect(JSON.parse(retry.body)).toEqual({ a: 201, b: 201 });
      expect(seen).toHaveLength(4);
      expect(seen[0]).not.toBe(seen[1]); // one key per call…
      expect(seen[0]).toMatch(/\S{16,}/);
      expect(seen.slice(2)).toEqual(seen.slice(0, 2)); // …and the same keys on the rerun
    } finally {
      second.child.kill('SIGKILL');
    }
  }, 90_000);
});
