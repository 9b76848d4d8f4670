import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { HttpError } from '../errors';

/**
 * A directory that `FileBody` names are opened in. Opened once, at startup, and provided as a
 * service; handlers ask for it by type.
 * @example app.provide(Dir.open('sample/files'))
 */
export class Dir {
  /** The directory's absolute path with every symlink resolved. */
  readonly path: string;
  /** `path` with a trailing separator: a file is inside when its real path starts with this. */
  readonly #prefix: string;

  private constructor(path: string) {
    this.path = path;
    this.#prefix = path.endsWith(sep) ? path : path + sep;
  }

  /**
   * Resolves `path` (relative to the working directory) and checks it is a directory. A directory
   * that cannot be opened throws `HttpError('DirNotFound')` naming it, so the program stops before
   * `listen()`.
   */
  static open(path: string): Dir {
    const absolute = resolve(path);
    let real: string;
    try {
      real = realpathSync(absolute);
      if (!statSync(real).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      throw new HttpError('DirNotFound', `directory "${path}" (${absolute}) cannot be opened: ${code}`);
    }
    return new Dir(real);
  }

  /** @internal whether a real path lies inside this directory */
  holds(realPath: string): boolean {
    return realPath.startsWith(this.#prefix);
  }
}
