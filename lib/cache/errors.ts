import { CodedError, type ErrorRow } from '../errors';

/**
 * Every error code `fw-http/cache` raises, once, with the status it answers should it escape a
 * handler (the store not answering or full is 503, as the idempotency step answers it;
 * a bad argument is the program's fault, 500) and the line the docs list (as Fastify does).
 */
export const CACHE_ERRORS = {
  TooLarge: {
    status: 500,
    doc: 'a value larger than what the space keeps (its maxBytes); stores and spaces answer false rather than throw, the code is for reporting it',
  },
  Unavailable: {
    status: 503,
    doc: 'the store could not be reached, timed out, was closed or answered with an error; nothing can be assumed kept',
  },
  Full: {
    status: 503,
    doc: 'a claim (putIfAbsent) or a compare-and-set found no room: what the store holds for requests in flight and their kept answers is never evicted to make room, so the write fails closed',
  },
  PoolBusy: {
    status: 503,
    doc: "PgStore.transaction got no connection within commandTimeoutMs while every connection of the pool was in use (the message names the pool's size and how many wait): the database is up, the pool busy",
  },
  InvalidArgument: {
    status: 500,
    doc: 'a space or store built or called with a value it cannot use (empty name, TTL that is not a positive number, value that is not bytes)',
  },
  CachePeerMissing: {
    status: 500,
    doc: 'new PgStore({ connectionString }) without pg installed, or new RedisStore(…) without ioredis (optional peer dependencies): npm install pg, npm install ioredis',
  },
} as const satisfies Record<string, ErrorRow>;

export type CacheErrorCode = keyof typeof CACHE_ERRORS;

/**
 * An error raised by `fw-http/cache`, with a stable `code` and the `status` it answers. Messages name
 * the space or key involved, so they are logged, never sent.
 *
 * @example
 * try { await orders.get(key) } catch (e) { if (e instanceof CacheError && e.code === 'Unavailable') … }
 */
export class CacheError extends CodedError<CacheErrorCode> {
  constructor(code: CacheErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, CACHE_ERRORS[code], message, options);
    this.name = 'CacheError';
  }
}

/** An option or argument refused: the program's fault, named in the message (an `OptionOwner`'s `refuse`). */
export const invalidArgument = (message: string): CacheError =>
  new CacheError('InvalidArgument', message);
