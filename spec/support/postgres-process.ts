import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chown, mkdtemp, rename, rm } from 'node:fs/promises';
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

export interface StartPostgresOptions {
  /** Default 200, a test's own cluster; the run's shared cluster serves both workers' files. */
  readonly maxConnections?: number;
}

/**
 * Makes a cluster in a temp dir (a copy of the template cluster, see `initCluster`) and starts
 * `postgres` on a free loopback port;
 * resolves once it accepts connections. No fsync: the tests kill the programs using it, never
 * Postgres itself, and a machine crash loses only a throwaway cluster.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = postgresBin();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-pg-'));
  const data = path.join(dir, 'data');
  await initCluster(bin, dir, data);
  let port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    child = await launch({ bin, data, dir, port, maxConnections: options.maxConnections ?? 200 });
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

/**
 * The new cluster's data dir: a copy of this machine's template cluster (`cp -a`, ownership kept),
 * made by initdb once. initdb costs seconds (more on a busy machine) and every cluster it makes
 * with these settings is the same empty cluster, so each test's cluster starts from the copy.
 * The dir is removed when it fails.
 */
async function initCluster(bin: string, dir: string, data: string): Promise<void> {
  try {
    if (asRoot()) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(uid.trim()), Number(gid.trim()));
    }
    await run('cp', ['-a', await templateCluster(bin), data], { timeout: 60_000 });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

// What initdb is asked for; part of the template's name, so a change here makes a new template.
const INITDB_ARGS = ['-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C'];

/**
 * The template's data dir, `<tmp>/fw-pg-template-<key>/data`, made on first use: initdb into a
 * dir of its own, then renamed into place, so a worker never copies a half-made template and two
 * workers making it at once both end with one whole template (the loser's copy is removed).
 */
async function templateCluster(bin: string): Promise<string> {
  // The binary's path and mtime: a Postgres upgraded in place gets a template of its own.
  const { mtimeMs } = statSync(path.join(bin, 'postgres'));
  const key = createHash('sha256')
    .update([bin, mtimeMs, ...INITDB_ARGS, process.getuid?.()].join('\0'))
    .digest('hex')
    .slice(0, 16);
  const home = path.join(os.tmpdir(), `fw-pg-template-${key}`);
  const data = path.join(home, 'data');
  if (existsSync(path.join(data, 'PG_VERSION'))) return data;
  const making = await mkdtemp(path.join(os.tmpdir(), 'fw-pg-making-'));
  try {
    if (asRoot()) await run('chown', ['postgres:postgres', making]);
    const [cmd, args] = command(path.join(bin, 'initdb'), [
      '-D',
      path.join(making, 'data'),
      ...INITDB_ARGS,
    ]);
    await run(cmd, args, { timeout: 60_000, cwd: making });
    await rename(making, home).catch((err: NodeJS.ErrnoException) => {
      // Another worker put its template in place first: use that one.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    });
  } finally {
    await rm(making, { recursive: true, force: true });
  }
  return data;
}

/** Starts `postgres -D <data>` on 127.0.0.1:<port> (its socket in `dir`); resolves once pg_isready says so. */
interface Launch {
  readonly bin: string;
  readonly data: string;
  readonly dir: string;
  readonly port: number;
  readonly maxConnections: number;
}

async function launch({ bin, data, dir, port, maxConnections }: Launch): Promise<ChildProcess> {
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
    `max_connections=${maxConnections}`,
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
