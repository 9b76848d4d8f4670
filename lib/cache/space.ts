import { CacheError } from './errors';
import { OpenSpace } from './open-space';
import type { Store } from './store';

/** Options of `Space(name, …)`. */
export interface SpaceOptions {
  /** How long a kept value lives, which for an idempotent route is how long a client may retry with one key. */
  readonly ttlSeconds: number;
  /** The largest value the space keeps, in bytes; a larger one is not stored (put answers false). */
  readonly maxBytes: number;
}

/** A declared space: its name and options, opened on a store with `open`. Frozen. */
export interface SpaceDecl {
  readonly name: string;
  readonly ttlSeconds: number;
  readonly maxBytes: number;
  /** Opens the space on `store`; hand the result to the app with `app.provide(opened)`. */
  open(store: Store): OpenSpace;
}

/**
 * Declares a space of bytes. Declaring touches no store; `open` binds it to one.
 *
 * @example
 * const Orders = Space('orders', { ttlSeconds: 86400, maxBytes: 64 * 1024 });
 * app.provide(Orders.open(new MemoryStore({ bytes: 64 * 1024 * 1024 })));
 */
export function Space(name: string, options: SpaceOptions): SpaceDecl {
  if (typeof name !== 'string' || name === '') {
    throw new CacheError('InvalidArgument', `Space: name must be a non-empty string, got ${JSON.stringify(name)}`);
  }
  const ttlSeconds = options?.ttlSeconds;
  const maxBytes = options?.maxBytes;
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new CacheError('InvalidArgument', `Space "${name}": ttlSeconds must be a positive number, got ${String(ttlSeconds)}`);
  }
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new CacheError('InvalidArgument', `Space "${name}": maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
  }
  const decl: SpaceDecl = Object.freeze({
    name,
    ttlSeconds,
    maxBytes,
    open(store: Store): OpenSpace {
      return new OpenSpace(decl, store);
    },
  });
  return decl;
}
