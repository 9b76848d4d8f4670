import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { HttpError } from '../../core/errors';

/** What `Dir.open` takes; the same rule as the static tree's options of the same names. */
export interface DirOptions {
  /**
   * Follow symlinks that stay inside the directory. A symlink that leaves it is never followed,
   * whatever this says. Default false: every symlink answers 404.
   */
  readonly followSymlinks?: boolean;
  /** Serve names with a segment starting with `.` (`.env`, `.git/config`). Default false: 404. */
  readonly dotfiles?: boolean;
}

/**
 * A directory that `FileBody` names are opened in. Opened once, at startup, and provided as a
 * service; handlers ask for it by type.
 * @example app.provide(Dir.open('sample/files'))
 */
export class Dir {
  readonly #path: string;
  /**
   * Why the directory could not be opened (it is missing, or not a directory), or null. An app given
   * such a Dir refuses to build with this line among its Refusals.
   */
  readonly problem: string | null;
  /** Whether symlinks that stay inside are followed (DirOptions). */
  readonly followSymlinks: boolean;
  /** Whether names starting with `.` are served (DirOptions). */
  readonly dotfiles: boolean;
  /** `path` with a trailing separator: a file is inside when its real path starts with this. */
  readonly #prefix: string;

  private constructor(path: string, options: DirOptions, problem: string | null = null) {
    this.#path = path;
    this.problem = problem;
    this.followSymlinks = options.followSymlinks ?? false;
    this.dotfiles = options.dotfiles ?? false;
    this.#prefix = path.endsWith(sep) ? path : path + sep;
  }

  /** The directory's absolute path with every symlink resolved; `DirNotFound` when it could not be opened. */
  get path(): string {
    if (this.problem !== null) throw new HttpError('DirNotFound', this.problem);
    return this.#path;
  }

  /**
   * Resolves `path` (relative to the working directory) and checks it is a directory. One that
   * cannot be opened is kept with its `problem`: the app it is provided to refuses to build, the
   * line naming it among the other Refusals (all reported at once); used anyway, it throws
   * `DirNotFound`.
   */
  static open(path: string, options: DirOptions = {}): Dir {
    try {
      return new Dir(realDir(path, ''), options);
    } catch (e) {
      return new Dir(
        resolve(path),
        options,
        `Dir.open: ${(e as Error).message}: create it, or give Dir.open the right path (relative to the working directory)`,
      );
    }
  }

  /** @internal a Dir over a real path already checked to be a directory (the static tree's root) */
  static ofReal(real: string, options: DirOptions): Dir {
    return new Dir(real, options);
  }

  /** @internal whether a real path lies inside this directory */
  holds(realPath: string): boolean {
    return this.problem === null && realPath.startsWith(this.#prefix);
  }
}

/**
 * The real path of the directory `path` (resolved from the working directory), checked to be a
 * directory; else `HttpError('DirNotFound')` naming it, its message led by `lead` (`static /assets: `).
 */
export function realDir(path: string, lead: string): string {
  const absolute = resolve(path);
  try {
    const real = realpathSync(absolute);
    if (statSync(real).isDirectory()) return real;
    throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new HttpError(
      'DirNotFound',
      `${lead}directory "${path}" (${absolute}) cannot be opened: ${code}`,
    );
  }
}
