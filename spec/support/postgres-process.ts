import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, sleep } from './redis-process';

// A real Postgres for the tests: a throwaway cluster made by initdb in a temp dir, served by one
// `postgres` process on a free loopback port, stopped by its pid. Postgres refuses to run as root,
// so as root both run as the `postgres` user (runuser) and the dir is handed to it.

const run = promisify(execFile);

/** The directory of Postgres's binaries (Debian: /usr/lib/postgresql/<major>/bin); throws (never skips) when none. */
export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  let majors: string[] = [];
  try {
    majors = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  } catch {
    // not installed
  }
  for (const major of majors) {
    const bin = path.join(root, major, 'bin');
    try {
      accessSync(path.join(bin, 'initdb'), constants.X_OK);
      return bin;
    } catch {
      // not this one
    }
  }
  throw new Error(
    'initdb not found under /usr/lib/postgresql/*/bin: install Postgres (Debian: apt-get install postgresql) — the Postgres tests never pass silently',
  );
}

const asRoot = (): boolean => process.getuid?.() === 0;

/** `cmd args…`, as the postgres user when this process is root. */
function command(cmd: string, args: string[]): [string, string[]] {
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

/** A real Postgres started for a test. */
export interface PostgresServer {
  readonly port: number;
  readonly dir: string;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  /** A URL for database `name` (see `createDatabase`). */
  urlOf(name: string): string;
  /** Creates database `name` (`createdb`). */
  createDatabase(name: string): Promise<void>;
  /** Stops the server (fast shutdown) but keeps its dir and port, so `restart()` can bring it back. */
  halt(): Promise<void>;
  /** Starts it again on the same port and dir: what was committed comes back. */
  restart(): Promise<void>;
  /** Stops the server (if running) and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Makes a cluster in a temp dir with initdb and starts `postgres` on a free loopback port;
 * resolves once it accepts connections. No fsync: the tests kill the programs using it, never
 * Postgres itself, and a machine crash loses only a throwaway cluster.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-pg-'));
  const data = path.join(dir, 'data');
  await initCluster(bin, dir, data);
  let port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = await launch(bin, data, dir, port);
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 3 || !String(err).includes('in use')) {
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
      port = await freePort();
    }
  }
  const halt = async (): Promise<void> => {
    if (child !== null) await stopPostgres(child, data);
    child = null;
  };
  const urlOf = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  return {
    port,
    dir,
    url: urlOf('postgres'),
    urlOf,
    async createDatabase(name) {
      const [cmd, args] = command(path.join(bin, 'createdb'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        name,
      ]);
      await run(cmd, args, { timeout: 30_000, cwd: dir });
    },
    halt,
    async restart() {
      await halt();
      await start();
    },
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** initdb in `dir` (handed to the postgres user when root); the dir is removed when it fails. */
async function initCluster(bin: string, dir: string, data: string): Promise<void> {
  try {
    if (asRoot()) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(uid.trim()), Number(gid.trim()));
    }
    const [cmd, args] = command(path.join(bin, 'initdb'), [
      ...['-D', data, '-A', 'trust', '-U', 'postgres'],
      ...['--no-sync', '-E', 'UTF8', '--locale', 'C'],
    ]);
    await run(cmd, args, { timeout: 60_000, cwd: dir });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Starts `postgres -D <data>` on 127.0.0.1:<port> (its socket in `dir`); resolves once pg_isready says so. */
async function launch(bin: string, data: string, dir: string, port: number): Promise<ChildProcess> {
  const [cmd, args] = command(path.join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'max_connections=200',
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`postgres on port ${port} exited at start:\n${output}`);
    if (await ready(bin, port)) return child;
    await sleep(50);
  }
  await stopPostgres(child, data);
  throw new Error(`postgres on port ${port} did not accept connections within 30 s:\n${output}`);
}

async function ready(bin: string, port: number): Promise<boolean> {
  try {
    await run(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q'], {
      timeout: 5000,
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * Fast shutdown (SIGINT) of the postmaster by its own pid (postmaster.pid; as root the child is
 * runuser, which waits for it), SIGKILL after 10 s; resolves when the child has exited.
 */
function stopPostgres(child: ChildProcess, data: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  let pid = child.pid!;
  try {
    pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    // not written yet: signal the child itself
  }
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      try {
        process.kill(pid, 'SIGKILL');
        process.kill(child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // gone already
    }
  });
}
