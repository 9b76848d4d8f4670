import { isThenable } from '../../core/thenable';

/**
 * `f(x)` now when `x` is a value, else once the promise resolves (`failed` taking its rejection):
 * each step of an idempotent request is written once, for a store that answers at once (no wait
 * at all) and for one that answers with a promise.
 */
export function then<T, U>(
  x: T | PromiseLike<T>,
  f: (value: T) => U,
  failed?: (e: unknown) => U,
): U | Promise<Awaited<U>> {
  if (!isThenable(x)) return f(x as T);
  return Promise.resolve(x).then(f, failed) as Promise<Awaited<U>>;
}
