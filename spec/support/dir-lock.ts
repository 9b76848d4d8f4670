import { readFileSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sleep } from './redis-process';

export interface LockOptions {
  /** How long to wait for the holder; default 180 s, then it throws. */
  readonly waitMs?: number;
  /** A lock older than this is taken over whoever holds it; default 10 min. */
  readonly staleMs?: number;
}

/**
 * Takes the lock `dir` (made by mkdir, which one process alone wins) for what a cache on disk
 * shared by the jest runs of one checkout must not see twice at once (another run rewriting files
 * a test reads); resolves with the function that gives it back. A lock whose holder (its pid,
 * written inside) is gone, or older than `staleMs`, is taken over.
 *
 * @example
 * const unlock = await lockDir(join(cache, 'lock'));
 * try { await compile(); } finally { await unlock(); }
 */
export async function lockDir(
  dir: string,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const deadline = Date.now() + (options.waitMs ?? 180_000);
  for (;;) {
    try {
      await mkdir(dir);
      await writeFile(path.join(dir, 'pid'), String(process.pid));
      return () => rm(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await abandoned(dir, options.staleMs ?? 600_000))
      await rm(dir, { recursive: true, force: true });
    else if (Date.now() > deadline)
      throw new Error(`${dir} still held after ${options.waitMs ?? 180_000} ms`);
    else await sleep(200);
  }
}

/** The holder's process is gone, or the lock is older than `staleMs`. */
async function abandoned(dir: string, staleMs: number): Promise<boolean> {
  const age = await stat(dir).then(
    (s) => Date.now() - s.mtimeMs,
    () => 0,
  );
  if (age > staleMs) return true;
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
  } catch {
    return false; // its holder has not written it yet
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
