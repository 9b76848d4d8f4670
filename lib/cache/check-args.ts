/** Argument checks shared by both stores, so they refuse the same inputs the same way. */
import { CacheError } from './errors';

/**
 * A TTL as whole milliseconds, rounded up: Redis `PX` takes integers only, and the memory store
 * rounds the same way so both stores keep an entry for the same time.
 */
export function checkTtlMs(ttlMs: number, key: string): number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new CacheError(
      'InvalidArgument',
      `cache key "${key}": TTL must be a positive number of milliseconds, got ${String(ttlMs)}`,
    );
  }
  return Math.ceil(ttlMs);
}

/** Values are bytes; a string would be measured in characters and stored re-encoded, so it is refused. */
export function checkBytes(value: unknown, key: string, what = 'value'): asserts value is Buffer {
  if (!Buffer.isBuffer(value)) {
    throw new CacheError('InvalidArgument', `cache key "${key}": ${what} must be a Buffer`);
  }
}
