import { spawn } from 'node:child_process';
import { SHARED_POSTGRES } from './support/postgres-database';
import { postgresBin, startPostgres, type PostgresServer } from './support/postgres-process';

// Before the jest run (jest.config.js `globalSetup`, in jest's own process): the Postgres cluster
// the run's spec files share, each in databases of its own (support/postgres-database.ts). Its
// port reaches the workers through the environment they inherit; spec/global-teardown.ts stops it.

declare global {
  var fwSharedPostgres: PostgresServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  // Without Postgres installed, a run of specs that need none still runs; those that do fail
  // with startPostgres's message naming the package.
  try {
    postgresBin();
  } catch {
    return;
  }
  // 2 workers, each file's pools and the stores under test: room for what a file opens at once.
  const server = await startPostgres({ maxConnections: 400 });
  globalThis.fwSharedPostgres = server;
  process.env[SHARED_POSTGRES] = String(server.port);
  watchdog(server.dir);
}

/**
 * A run stopped by a signal never reaches globalTeardown: a detached node watches jest's pid
 * and, once it is gone, stops the cluster (SIGINT to the postmaster's pid, from postmaster.pid)
 * and removes its dir. After a teardown it finds nothing left to stop.
 */
function watchdog(dir: string): void {
  const script = `
const fs = require('node:fs');
const path = require('node:path');
const [jest, dir] = [Number(process.argv[1]), process.argv[2]];
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
const timer = setInterval(() => {
  if (alive(jest)) return;
  clearInterval(timer);
  let pid = 0;
  try { pid = Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\\n')[0]); } catch {}
  if (pid > 0 && alive(pid)) process.kill(pid, 'SIGINT');
  const gone = setInterval(() => {
    if (pid > 0 && alive(pid)) return;
    clearInterval(gone);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 200);
}, 1000);
`;
  spawn(process.execPath, ['-e', script, String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  }).unref();
}
