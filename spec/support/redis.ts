import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A real `redis-server` started for a test, on a loopback port of its own, in a temp dir of its own. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the process but keeps its port and dir, so `restart()` can bring it back. */
  halt(): Promise<void>;
  /** Stops the server if running and starts it again on the same port and dir (what it persisted comes back). */
  restart(): Promise<void>;
  /** Stops the server (if running) and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Turn on the append-only file, so entries survive `restart()`. Default false (nothing on disk). */
  readonly appendonly?: boolean;
}

const NOT_FOUND =
  'redis-server not found: install it (Debian: apt-get install redis-server) — the Redis tests never pass silently';

/**
 * Starts `redis-server` and resolves once it answers PING. Throws (never skips) when the
 * binary is missing, so a machine without Redis fails the Redis tests loudly.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const bin = findOnPath('redis-server');
  if (bin === null) throw new Error(NOT_FOUND);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-redis-'));
  const appendonly = options.appendonly === true ? 'yes' : 'no';
  let port = 0;
  let child: ChildProcess | null = null;
  // A free port found by listening on 0 can be taken by someone else before redis binds it; try again then.
  for (let attempt = 1; child === null; attempt++) {
    port = await freePort();
    try {
      child = await launch(bin, port, dir, appendonly);
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('in use')) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  let running: ChildProcess | null = child;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async halt() {
      if (running !== null) await halt(running);
      running = null;
    },
    async restart() {
      if (running !== null) await halt(running);
      running = null;
      running = await launch(bin, port, dir, appendonly);
    },
    async stop() {
      if (running !== null) await halt(running);
      running = null;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function findOnPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
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

async function launch(
  bin: string,
  port: number,
  dir: string,
  appendonly: 'yes' | 'no',
): Promise<ChildProcess> {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    appendonly,
    '--dir',
    dir,
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`redis-server on port ${port} exited at start:\n${output}`);
    if (await answersPing(port)) return child;
    await new Promise((r) => setTimeout(r, 25));
  }
  await halt(child);
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s:\n${output}`);
}

function answersPing(port: number): Promise<boolean> {
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
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // Anything but PONG (for example -LOADING while the append-only file is read) means not yet.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** SIGTERM lets redis finish writing its append-only file; SIGKILL after 5 s if it will not go. */
function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
