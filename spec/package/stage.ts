import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository's root. */
export const ROOT = resolve(__dirname, '..', '..');

/**
 * A copy of the checkout as a clean clone would have it (every file git tracks or would track,
 * none it ignores: no dist/, no tmp/), in a new directory under os.tmpdir(), with this
 * repository's node_modules linked in: `npm pack` there builds the package from scratch, as
 * `prepack` does on a clean clone, without touching this checkout's dist/ (other specs and a
 * developer's `npm start` use it).
 */
export function stageCheckout(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 16 << 20,
    },
  );
  for (const file of listed.split('\0')) {
    // a file deleted in the working tree is still listed by --cached
    if (file === '' || !existsSync(join(ROOT, file))) continue;
    cpSync(join(ROOT, file), join(dir, file), { recursive: false });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Removes a directory made by a spec (and all below it); never throws. */
export function removeDir(dir: string | undefined): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end and says how it ended: the exit code and everything it printed. */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 240_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        done({
          code,
          stdout,
          stderr: error !== null && code === 1 && stderr === '' ? String(error) : stderr,
        });
      },
    );
  });
}

/** `run`, failing with everything the program printed when it does not exit 0. */
export async function runOk(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  const ran = await run(file, args, options);
  if (ran.code !== 0) {
    throw new Error(
      `${file} ${args.join(' ')} (in ${options.cwd}) exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`,
    );
  }
  return ran;
}

/** npm from PATH, as a user would run it. */
export const npm = (args: readonly string[], options: { cwd: string; timeoutMs?: number }) =>
  runOk('npm', args, options);
