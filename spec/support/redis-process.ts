import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

// What the cluster and sentinel setups share: finding the binaries, free ports, starting one
// redis-server process and waiting for its PONG, asking it things through redis-cli, stopping it by pid.

const run = promisify(execFile);

/** The path of a Redis binary; throws (never skips) when it is missing, so the Redis tests fail loudly. */
export function requireBin(name: 'redis-server' | 'redis-cli'): string {
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
  const pkg = name === 'redis-cli' ? 'redis-tools' : 'redis-server';
  throw new Error(
    `${name} not found: install it (Debian: apt-get install ${pkg}) — the Redis tests never pass silently`,
  );
}

/** A port nothing listens on right now, found by listening on 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One redis-server process of a setup. */
export interface RedisProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** What it printed so far, for messages. */
  output(): string;
}

/**
 * Starts `redis-server <args…> --port <port>` (args may begin with a config file) and resolves
 * once it answers PING. A port found free can be taken before redis binds it: `ports` is asked
 * again then, up to three times.
 */
export async function startProcess(
  args: (port: number) => string[],
  ports: () => Promise<number> = freePort,
): Promise<RedisProcess> {
  const bin = requireBin('redis-server');
  for (let attempt = 1; ; attempt++) {
    const port = await ports();
    try {
      return await launch(bin, args(port), port);
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('in use')) throw err;
    }
  }
}

async function launch(bin: string, args: string[], port: number): Promise<RedisProcess> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`redis-server on port ${port} exited at start:\n${output}`);
    if (await answersPing(port)) return { port, child, output: () => output };
    await sleep(25);
  }
  await stopProcess(child);
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
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** `redis-cli -h 127.0.0.1 -p <port> <args…>`, its output trimmed. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run(
    requireBin('redis-cli'),
    ['-h', '127.0.0.1', '-p', String(port), ...args],
    {
      timeout: 10_000,
    },
  );
  return stdout.trim();
}

/** Polls `check` every 50 ms until it answers true; throws `what` with the last answer after `ms`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  ms: number,
  last: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await check().catch(() => false);
    if (ok) return;
    if (Date.now() >= deadline) throw new Error(`${what} not within ${ms} ms ${last()}`);
    await sleep(50);
  }
}

/** SIGKILL by pid, as a crash would; resolves when the process is gone. */
export function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(child.pid!, 'SIGKILL');
  });
}

/** SIGTERM by pid, SIGKILL after 5 s if it will not go. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    process.kill(child.pid!, 'SIGTERM');
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
