import nodeModule from 'node:module';

/** What `module.enableCompileCache()` answers on Node 22.1 and later. */
interface CacheResult {
  readonly status: number;
  readonly directory?: string;
  readonly message?: string;
}

/** The part of `node:module` this reads: absent before Node 22.1 (and on Node 20). */
export interface CompileCacheHost {
  readonly enableCompileCache?: () => CacheResult;
}

/**
 * Turns on Node's on-disk compile cache (Node 22.1 and later) before the command loads fw and the
 * app: a second `fw-http` run reads V8's compiled code from disk instead of compiling every module
 * again. Where Node has no such cache (Node 20) it does nothing. Node's own switches still apply:
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, `NODE_COMPILE_CACHE=dir` moves it. Answers the
 * directory the cache is kept in, or null when there is none. It never throws: a cache that cannot
 * be written only costs the time it would have saved.
 *
 * @example
 * // first thing in an app's entry file, before its imports are loaded (see the guide)
 * require('node:module').enableCompileCache?.();
 */
export function enableCompileCache(
  host: CompileCacheHost = nodeModule as CompileCacheHost,
): string | null {
  if (typeof host.enableCompileCache !== 'function') return null;
  try {
    return host.enableCompileCache().directory ?? null;
  } catch {
    return null;
  }
}
