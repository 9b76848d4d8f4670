import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { App, Controller, Post, Returns, Status } from 'fw-http';
import { startRedis, type RedisServer } from '../support/redis';
import { tsChild } from '../support/ts-child';

// A lost lease is found in the handler's own process, at once: the shop runs in a child process
// whose handler is holding its claim when the test stops the process (SIGSTOP) past its lease,
// then lets it go on (SIGCONT). The first thing the handler does on resuming reads its signal or
// makes an outbound call: it must find the claim lost there, before any renewal's round trip
// could have told it, and make no effect.

const LEASE_MS = 600;

let redis: RedisServer;
let upstream: App;
let upstreamUrl = '';
/** Requests the upstream took. */
let charges = 0;
beforeAll(async () => {
  redis = await startRedis();
  @Controller()
  class Bank {
    @Post('/charges') @Returns(Status(201, Object)) charge() {
      charges++;
      return {};
    }
  }
  upstream = new App({ log: () => {} }).controllers(Bank);
  upstreamUrl = (await upstream.listen({ port: 0, host: '127.0.0.1' })).url;
}, 60_000);
afterAll(async () => {
  await upstream?.close();
  await redis?.stop();
});

/** The shop's child process, its output lines as they come, and a wait for a line matching. */
async function shop(mode: string) {
  const { command, args } = tsChild('spec/crash/lease-stall-server.ts');
  const child: ChildProcess = spawn(command, args, {
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      UPSTREAM_URL: upstreamUrl,
      LEASE_MS: String(LEASE_MS),
      MODE: mode,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  child.once('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  const line = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        const m = pattern.exec(out);
        if (m) return resolve(m);
        if (child.exitCode !== null || child.signalCode !== null)
          return reject(new Error(`shop exited:\n${out}`));
        waiters.push(look);
      };
      look();
    });
  const port = Number((await line(/listening (\d+)/))[1]);
  return { child, port, line, output: () => out };
}

function post(port: number, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/effect',
        headers: { 'idempotency-key': key },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs one request in a shop of `mode`, stopped with SIGSTOP for 2.5 leases while its handler holds the claim. */
async function stalled(mode: string): Promise<{ status: number; seen: unknown; output: string }> {
  const s = await shop(mode);
  try {
    const answer = post(s.port, `stall-${mode}`);
    await s.line(/holding/);
    s.child.kill('SIGSTOP');
    await sleep(2.5 * LEASE_MS); // the lease runs out while no instruction of the shop runs
    s.child.kill('SIGCONT');
    const status = await answer;
    const seen: unknown = JSON.parse((await s.line(/seen (.*)/))[1]!);
    return { status, seen, output: s.output() };
  } finally {
    s.child.kill('SIGKILL');
  }
}

describe('a lease lost to a stall is found before the next effect', () => {
  it('SIGSTOP past the lease, then SIGCONT: the handler reads c.signal.aborted === true (LeaseLost) before its effect, and makes none', async () => {
    const r = await stalled('signal');
    expect(r.seen).toEqual({ aborted: true, reason: 'LeaseLost' });
    expect(r.output).not.toMatch(/^effect$/m);
    expect(r.status).toBe(503);
    // Logged once, as the loss was found (the log line is JSON: its quotes escaped).
    expect(r.output.match(/stall-signal\W+ was lost while the handler ran/g)).toHaveLength(1);
  }, 60_000);

  it("SIGSTOP past the lease, then SIGCONT: the handler's outbound call fails Canceled before it is sent (the upstream takes nothing)", async () => {
    charges = 0;
    const r = await stalled('fetch');
    expect(r.seen).toEqual({ status: 'Canceled' });
    expect(charges).toBe(0);
  }, 60_000);
});
