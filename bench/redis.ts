// A redis-server of the bench's own, for the RedisStore cases: on a free loopback port, in a temp
// dir, nothing persisted, with a replica of it or without one; stopped by its pid.
// (spec/support/redis.ts does the same for the tests; bench/ does not import spec/.)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface BenchRedis {
  readonly url: string;
  /** Whether a replica of it is up (the `replicas: 1` case runs only then). */
  readonly replicated: boolean;
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Start a replica of it too (default true); false: a plain server, `replicated` false. */
  readonly replica?: boolean;
}

/**
 * Starts redis-server and resolves once it answers PING (and its replica, unless
 * `{ replica: false }`, is linked or given up on); `{ missing }` says why when it cannot.
 */
export async function startRedis(
  options: StartRedisOptions = {},
): Promise<BenchRedis | { readonly missing: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fw-bench-redis-'));
  // A port found free can be taken before redis binds it: a few tries.
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const spawnError = new Promise<Error>((r) => child.once('error', r));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const up = await Promise.race([
      waitForPing(port, 10_000),
      exited.then(() => false),
      spawnError.then((e) => {
        last = e.message;
        return false;
      }),
    ]);
    if (up) {
      // A replica of it, so `replicas: 1` (WAIT) can be measured beside the plain store on the
      // same primary: both routes pay for the replication stream, only one waits for it.
      const replica = options.replica === false ? null : await startReplica(dir, port);
      return {
        url: `redis://127.0.0.1:${port}`,
        replicated: replica !== null,
        stop: async () => {
          if (replica !== null) await halt(replica);
          await halt(child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await halt(child);
    last ||= output.trim();
    if (!/in use/i.test(output)) break;
  }
  rmSync(dir, { recursive: true, force: true });
  return { missing: `redis-server did not start: ${last}` };
}

/** `redis-server --replicaof` the primary on `primaryPort`, once its link is up; null when it is not within 10 s. */
async function startReplica(dir: string, primaryPort: number): Promise<ChildProcess | null> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--dbfilename',
      'replica.rdb',
      '--replicaof',
      '127.0.0.1',
      String(primaryPort),
    ],
    { stdio: 'ignore' },
  );
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (await linked(port)) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  await halt(child);
  return null;
}

/** Whether the replica on `port` says its link to the primary is up. */
function linked(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('INFO replication\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('master_link_status:')) done(reply.includes('master_link_status:up'));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPing(port: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (await pong(port)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** SIGTERM to the pid, SIGKILL after 5 s if it will not go. */
function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
