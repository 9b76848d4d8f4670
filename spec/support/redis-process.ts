import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { promisify } from 'node:util';

// What every Redis setup of the tests shares (one server, a cluster, a sentinel): finding the
// binaries, free ports, starting one redis-server process and waiting for its PONG, asking it
// things through redis-cli, stopping it by pid.

const run = promisify(execFile);

/** The path of a Redis binary; throws (never skips) when it is missing, so the Redis tests fail loudly. */
export function requireBin(name: 'redis-server' | 'redis-cli' | 'openssl'): string {
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
  const pkg = name === 'redis-cli' ? 'redis-tools' : name;
  throw new Error(
    `${name} not found: install it (Debian: apt-get install ${pkg}) — the Redis tests never pass silently`,
  );
}

/** A port nothing listens on right now, found by listening on 0. */
// Ports for the servers tests start come from a range of this jest worker's own, below the
// kernel's ephemeral range (32768+): a port asked of the kernel (`listen(0)`) and closed could be
// handed to the next asker, so two workers once got one port, and a Sentinel test's client reached
// a cluster node of another test (CI: MOVED). A Redis cluster node also uses port + 10000.
const WORKER = Math.max(1, Number(process.env.JEST_WORKER_ID ?? 1));
const RANGE = 2000;
const FIRST = 10_000 + ((WORKER - 1) % 5) * RANGE; // 10000–19999, so no bus port (+10000) lands in another worker's range
let next = FIRST + Math.floor(Math.random() * RANGE);

/** A port free on 127.0.0.1 now, from this worker's range (tried in turn until one binds). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < RANGE; tries++) {
    const port = next;
    next = next + 1 < FIRST + RANGE ? next + 1 : FIRST;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${FIRST}..${FIRST + RANGE - 1}`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Files of a throwaway certificate authority and a server certificate for 127.0.0.1. */
export interface TlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * How a test reaches a server that asks for them: the `requirepass` (also its `masterauth`) and,
 * when set, TLS only (`--port 0 --tls-port <port>`, replication and the cluster bus over TLS too).
 */
export interface Access {
  readonly password?: string;
  readonly tls?: TlsFiles;
}

/**
 * Makes a CA and a server certificate signed by it (subjectAltName IP:127.0.0.1) in `dir` with
 * the openssl command; throws (never skips) when openssl is missing.
 */
export async function makeTlsFiles(dir: string): Promise<TlsFiles> {
  const openssl = requireBin('openssl');
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => run(openssl, args, { timeout: 30_000 });
  await ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=fw test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  );
  await ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
  );
  await writeFile(f('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
    '-out',
    f('server.crt'),
  );
  return { ca: f('ca.crt'), cert: f('server.crt'), key: f('server.key') };
}

/** The redis-server arguments that make it ask for `access` (after `--port <port>`, which TLS replaces). */
export function accessArgs(access: Access): string[] {
  const args: string[] = [];
  if (access.password !== undefined)
    args.push('--requirepass', access.password, '--masterauth', access.password);
  if (access.tls !== undefined) args.push(...tlsArgs(access.tls), '--tls-cluster', 'yes');
  return args;
}

/** A server's TLS files; clients need no certificate; replication (and a sentinel's links) over TLS. */
export function tlsArgs(files: TlsFiles): string[] {
  return [
    '--tls-cert-file',
    files.cert,
    '--tls-key-file',
    files.key,
    '--tls-ca-cert-file',
    files.ca,
    '--tls-auth-clients',
    'no',
    '--tls-replication',
    'yes',
  ];
}

/** `--port <port>`, or with TLS `--port 0 --tls-port <port>` (TLS only). */
export function portArgs(port: number, access: Access): string[] {
  return access.tls === undefined
    ? ['--port', String(port)]
    : ['--port', '0', '--tls-port', String(port)];
}

/**
 * A plain server's arguments: on 127.0.0.1 only, asking for `access`, its files in `dir`, nothing
 * persisted unless `appendonly` (the append-only file, so entries survive a restart).
 */
export function serverArgs(
  port: number,
  dir: string,
  access: Access = {},
  appendonly = false,
): string[] {
  return [
    ...portArgs(port, access),
    ...accessArgs(access),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    appendonly ? 'yes' : 'no',
    '--dir',
    dir,
  ];
}

export interface ServerOptions {
  readonly access?: Access;
  readonly appendonly?: boolean;
  /** The port to start on (a restart); default a free one. */
  readonly port?: number;
  /** More arguments after `serverArgs`. */
  readonly args?: readonly string[];
}

/** Starts a plain server (`serverArgs`) with its files in `dir`; resolves once it answers PING. */
export function startServer(dir: string, options: ServerOptions = {}): Promise<RedisProcess> {
  const access = options.access ?? {};
  const fixed = options.port;
  return startProcess(
    (port) => [...serverArgs(port, dir, access, options.appendonly), ...(options.args ?? [])],
    fixed === undefined ? freePort : () => Promise.resolve(fixed),
    access,
  );
}

/** The processes of one setup, with a temp dir of their own, stopped together. */
export interface ProcessGroup {
  readonly dir: string;
  /** `startProcess`, the process kept to be stopped with the group. */
  readonly start: (
    args: (port: number) => string[],
    ports?: () => Promise<number>,
    access?: Access,
  ) => Promise<RedisProcess>;
  /** Stops every process (SIGTERM by pid) and removes the dir. Safe to call twice. */
  readonly stop: () => Promise<void>;
}

/** A group whose dir is a new temp dir named after `name`. */
export async function processGroup(name: string): Promise<ProcessGroup> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `fw-redis-${name}-`));
  const all: RedisProcess[] = [];
  return {
    dir,
    start: async (args, ports, access) => {
      const started = await startProcess(args, ports, access);
      all.push(started);
      return started;
    },
    stop: async () => {
      await Promise.all(all.map((p) => stopProcess(p.child)));
      all.length = 0;
      await rm(dir, { recursive: true, force: true });
    },
  };
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
  access: Access = {},
): Promise<RedisProcess> {
  const bin = requireBin('redis-server');
  for (let attempt = 1; ; attempt++) {
    const port = await ports();
    try {
      return await launch(bin, args(port), port, access);
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('in use')) throw err;
    }
  }
}

async function launch(
  bin: string,
  args: string[],
  port: number,
  access: Access,
): Promise<RedisProcess> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`redis-server on port ${port} exited at start:\n${output}`);
    if (await answersPing(port, access)) return { port, child, output: () => output };
    await sleep(25);
  }
  await stopProcess(child);
  throw new Error(`redis-server on port ${port} did not answer PING within 10 s:\n${output}`);
}

function answersPing(port: number, access: Access): Promise<boolean> {
  return new Promise((resolve) => {
    const socket =
      access.tls === undefined
        ? net.connect({ port, host: '127.0.0.1' })
        : tls.connect({ port, host: '127.0.0.1', ca: readFileSync(access.tls.ca) });
    const ready = access.tls === undefined ? 'connect' : 'secureConnect';
    // With a password, AUTH first: its +OK and then PING's +PONG.
    const expect = access.password === undefined ? '+PONG\r\n' : '+OK\r\n+PONG\r\n';
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once(ready, () => {
      if (access.password !== undefined) socket.write(command('AUTH', access.password));
      socket.write('PING\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.length >= expect.length || reply.startsWith('-')) done(reply.startsWith(expect));
    });
  });
}

/** One command in the Redis protocol (RESP), its arguments as bulk strings. */
function command(...args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** `redis-cli -h 127.0.0.1 -p <port> <args…>`, its output trimmed. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  return cliWith({}, port, ...args);
}

/** `cli` to a server that asks for `access`: the password in REDISCLI_AUTH (not on the command line), TLS with the CA. */
export async function cliWith(access: Access, port: number, ...args: string[]): Promise<string> {
  const tlsArgs = access.tls === undefined ? [] : ['--tls', '--cacert', access.tls.ca];
  const { stdout } = await run(
    requireBin('redis-cli'),
    ['-h', '127.0.0.1', '-p', String(port), ...tlsArgs, ...args],
    {
      timeout: 10_000,
      env:
        access.password === undefined
          ? process.env
          : { ...process.env, REDISCLI_AUTH: access.password },
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
