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
  /** The directory's absolute path with every symlink resolved. */
  readonly path: string;
  /** Whether symlinks that stay inside are followed (DirOptions). */
  readonly followSymlinks: boolean;
  /** Whether names starting with `.` are served (DirOptions). */
  readonly dotfiles: boolean;
  /** `path` with a trailing separator: a file is inside when its real path starts with this. */
  readonly #prefix: string;

  private constructor(path: string, options: DirOptions) {
    this.path = path;
    this.followSymlinks = options.followSymlinks ?? false;
    this.dotfiles = options.dotfiles ?? false;
    this.#prefix = path.endsWith(sep) ? path : path + sep;
  }

  /**
   * Resolves `path` (relative to the working directory) and checks it is a directory. A directory
   * that cannot be opened throws `HttpError('DirNotFound')` naming it, so the program stops before
   * `listen()`.
   */
  static open(path: string, options: DirOptions = {}): Dir {
    return new Dir(realDir(path, ''), options);
  }

  /** @internal a Dir over a real path already checked to be a directory (the static tree's root) */
  static ofReal(real: string, options: DirOptions): Dir {
    return new Dir(real, options);
  }

  /** @internal whether a real path lies inside this directory */
  holds(realPath: string): boolean {
    return realPath.startsWith(this.#prefix);
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
