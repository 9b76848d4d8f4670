import { performance } from 'node:perf_hooks';
import type { AroundFactory, Capability } from '../route/extensions';
import { fail } from '../core/fail';
import type { OperationSink } from '../route/extensions';
import { RateTable, RATE_ADMITTED, RATE_OVER } from './rate-table';
import type { RouteRecord } from '../route/route-record';
import { MarkKey } from '../route/mark-key';
import { markRoute } from '../route/decorators';

/** Client addresses one rate-limited route keeps windows for, unless `maxAddresses` says otherwise. */
export const RATE_MAX_ADDRESSES = 100_000;

/** What a `@RateLimit` route declares. */
export interface RateMark {
  readonly max: number;
  readonly perSeconds: number;
  /** Client addresses the route keeps windows for at once (default 100,000); a new address past it is 503. */
  readonly maxAddresses?: number;
}

/** The key of a route's `@RateLimit` mark: `record.marks.get(RATE)`. */
export const RATE = new MarkKey<RateMark>('rate');

/**
 * Allows at most `max` requests per `perSeconds` per client address (429 with `Retry-After` beyond).
 * Windows are kept for at most `maxAddresses` addresses at once (default 100,000): a new address
 * past it is 503 with `Retry-After` until the oldest window ends.
 */
export function RateLimit(options: RateMark): MethodDecorator {
  return markRoute(RATE, options);
}

/**
 * `@RateLimit({ max, perSeconds, maxAddresses? })`: at most `max` requests per client address in
 * each window of `perSeconds` (a fixed window per address); beyond it 429 with `Retry-After` in
 * whole seconds. The route keeps windows for at most `maxAddresses` addresses (default 100,000);
 * past that a new address is shed with 503 and `Retry-After` until the oldest window ends, while
 * addresses already counted go on as before (why refusing beats forgetting: see `RateTable`).
 *
 * The key is the socket's remote address, never a forwarded header a client can write; behind a
 * proxy every client shares the proxy's allowance.
 */
const around: AroundFactory = (record) => {
  const mark = record.marks.get(RATE);
  if (mark === undefined) return null;
  const maxKeys = mark.maxAddresses ?? RATE_MAX_ADDRESSES;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new TypeError(
      `${record.label}: @RateLimit maxAddresses must be a positive whole number, got ${String(maxKeys)}`,
    );
  }
  const table = new RateTable({ max: mark.max, spanMs: mark.perSeconds * 1000, maxKeys });
  const route = `${record.method} ${record.path}`;
  return (c, proceed) => {
    const now = performance.now();
    const verdict = table.take(c.req.socket?.remoteAddress ?? 'unknown', now);
    if (verdict === RATE_ADMITTED) return proceed();
    c.setHeader('retry-after', String(Math.max(1, Math.ceil((table.retryAt - now) / 1000))));
    if (c.telemetry !== null)
      c.telemetry.note('rate_limit', verdict === RATE_OVER ? 'over_limit' : 'table_full');
    if (verdict === RATE_OVER)
      throw fail.tooManyRequests('at most %d requests per %d s', mark.max, mark.perSeconds);
    throw fail.status(
      503,
      '%s is rate-limiting as many addresses as it keeps (%d); try again later',
      route,
      maxKeys,
    );
  };
};

/** A rate-limited route lists 429 with the Retry-After it sends (the 503 of a full table is shedding, which no route lists). */
const describe = (record: RouteRecord, op: OperationSink): void => {
  const mark = record.marks.get(RATE);
  if (mark === undefined) return;
  op.failure(429, `more than ${mark.max} requests in ${mark.perSeconds} s from one address`, {
    'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
  });
};

export const rateLimits: Capability = { arounds: [around], describe };
