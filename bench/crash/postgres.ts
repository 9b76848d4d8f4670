// A Postgres of the bench's own, for the crash harness and the PgStore cases: a throwaway cluster
// made by initdb in a temp dir, on a free loopback port. The crash harness also stops it the hard
// way mid-run (SIGQUIT to the postmaster: `pg_ctl stop -m immediate`, no checkpoint, crash
// recovery at the next start) and starts it again on the same dir and port. As root both run as
// the postgres user (Postgres refuses root). (spec/support/postgres-process.ts does the same for
// the tests; bench/ does not import spec/.)
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface BenchPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/<name>` */
  urlOf(name: string): string;
  /** Immediate shutdown (SIGQUIT to the postmaster): every connection cut, nothing flushed. */
  haltImmediately(): Promise<void>;
  /** Starts it again on the same dir and port (after crash recovery); resolves once it takes connections. */
  start(): Promise<void>;
  /** Stops it (if running) and removes its dir. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** `fsync=on` (a commit is on disk before it is answered) or off (default: faster, same semantics unless the machine dies). */
  readonly fsync?: boolean;
}

const bin = (): string | null => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const major of readdirSync(root).sort((a, b) => Number(b) - Number(a)))
    if (existsSync(path.join(root, major, 'bin', 'initdb'))) return path.join(root, major, 'bin');
  return null;
};

/** Starts Postgres with databases `names` made; `{ missing }` says why when it cannot. */
export async function startPostgres(
  names: readonly string[],
  options: StartPostgresOptions = {},
): Promise<BenchPostgres | { readonly missing: string }> {
  const dir = bin();
  if (dir === null)
    return { missing: 'no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)' };
  const root = process.getuid?.() === 0;
  const as = (cmd: string, args: string[]): [string, string[]] =>
    root
      ? ['runuser', ['-u', 'postgres', '--', path.join(dir, cmd), ...args]]
      : [path.join(dir, cmd), args];
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'fw-bench-pg-'));
  if (root) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
    chownSync(tmp, id('-u'), id('-g'));
  }
  const data = path.join(tmp, 'data');
  execFileSync(
    ...as('initdb', [
      ...['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'],
      ...['-E', 'UTF8', '--locale', 'C'],
    ]),
    { cwd: tmp, stdio: 'ignore' },
  );
  const port = await freePort();
  const fsync = options.fsync === true ? 'on' : 'off';
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const [cmd, args] = as('postgres', [
      ...['-D', data, '-p', String(port), '-k', tmp, '-c', 'listen_addresses=127.0.0.1'],
      ...['-c', `fsync=${fsync}`, '-c', 'max_connections=300'],
    ]);
    child = spawn(cmd, args, { cwd: tmp, stdio: 'ignore' });
    if (!(await ready(dir, port))) throw new Error('postgres did not start within 30 s');
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (c === null || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, signal);
    await exited;
    child = null;
  };
  await start();
  for (const name of names)
    execFileSync(
      ...as('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]),
      { cwd: tmp },
    );
  return {
    urlOf: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    haltImmediately: () => halt('SIGQUIT'),
    start,
    stop: async () => {
      await halt('SIGINT');
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Polls pg_isready for up to 30 s, without blocking the harness's own event loop. */
async function ready(dir: string, port: number): Promise<boolean> {
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    try {
      await run(path.join(dir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return false;
}

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
