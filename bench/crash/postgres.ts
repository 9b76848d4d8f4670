// A Postgres of the bench's own, for the crash harness and the PgStore cases: a throwaway cluster
// made by initdb in a temp dir, on a free loopback port, stopped by the postmaster's pid. As root
// both run as the postgres user (Postgres refuses root). (spec/support/postgres-process.ts does
// the same for the tests; bench/ does not import spec/.)
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface BenchPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/<name>` */
  urlOf(name: string): string;
  stop(): Promise<void>;
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
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale',
      'C',
    ]),
    { cwd: tmp, stdio: 'ignore' },
  );
  const port = await freePort();
  const [cmd, args] = as('postgres', [
    ...['-D', data, '-p', String(port), '-k', tmp, '-c', 'listen_addresses=127.0.0.1'],
    ...['-c', 'fsync=off', '-c', 'max_connections=300'],
  ]);
  const child = spawn(cmd, args, { cwd: tmp, stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  if (!(await ready(dir, port))) return { missing: 'postgres did not start within 30 s' };
  for (const name of names)
    execFileSync(
      ...as('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]),
      { cwd: tmp },
    );
  return {
    urlOf: (name) => `postgres://postgres@127.0.0.1:${port}/${name}`,
    stop: async () => {
      const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
      await exited;
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Polls pg_isready for up to 30 s. */
async function ready(dir: string, port: number): Promise<boolean> {
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    try {
      execFileSync(path.join(dir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
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
