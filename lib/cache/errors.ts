/**
 * Every error code `fw/cache` raises. One table, so the README can list them and a spec can
 * check that it does (as Fastify does).
 */
export const CACHE_ERRORS = {
  TooLarge: {
    doc: 'a value larger than what the space keeps (its maxBytes); stores and spaces answer false rather than throw, the code is for reporting it',
  },
  Unavailable: {
    doc: 'the store could not be reached, timed out, was closed or answered with an error; nothing can be assumed kept',
  },
  Full: {
    doc: 'a claim (putIfAbsent) or a compare-and-set found no room: what the store holds for requests in flight and their kept answers is never evicted to make room, so the write fails closed',
  },
  InvalidArgument: {
    doc: 'a space or store built or called with a value it cannot use (empty name, TTL that is not a positive number, value that is not bytes)',
  },
} as const;

export type CacheErrorCode = keyof typeof CACHE_ERRORS;

/**
 * An error raised by `fw/cache`, with a stable `code`. Messages name the space or key involved.
 *
 * @example
 * try { await orders.get(key) } catch (e) { if (e instanceof CacheError && e.code === 'Unavailable') … }
 */
export class CacheError extends Error {
  readonly code: CacheErrorCode;
  constructor(code: CacheErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CacheError';
    this.code = code;
  }
}
