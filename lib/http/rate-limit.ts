import type { AroundFactory, Capability } from './compile-route';
import { fail } from './fail';
import type { OperationBuilder } from './openapi';
import type { RouteRecord } from './route-record';

interface Window {
  start: number;
  count: number;
}

/**
 * `@RateLimit({ max, perSeconds })`: at most `max` requests per client address in each window of
 * `perSeconds` (a fixed window per address); beyond it 429 with `Retry-After` in whole seconds.
 */
const around: AroundFactory = (record) => {
  const mark = record.rate;
  if (mark === null) return null;
  const span = mark.perSeconds * 1000;
  const windows = new Map<string, Window>();
  return (c, proceed) => {
    const now = Date.now();
    if (windows.size > 10_000) for (const [k, w] of windows) if (now - w.start >= span) windows.delete(k);
    const address = c.req.socket?.remoteAddress ?? 'unknown';
    let w = windows.get(address);
    if (w === undefined || now - w.start >= span) windows.set(address, (w = { start: now, count: 0 }));
    if (++w.count > mark.max) {
      c.setHeader('retry-after', String(Math.max(1, Math.ceil((w.start + span - now) / 1000))));
      throw fail.tooManyRequests('at most %d requests per %d s', mark.max, mark.perSeconds);
    }
    return proceed();
  };
};

/** A rate-limited route lists 429 with the Retry-After it sends. */
const describe = (record: RouteRecord, op: OperationBuilder): void => {
  const mark = record.rate;
  if (mark === null) return;
  op.failure(429, `more than ${mark.max} requests in ${mark.perSeconds} s from one address`, {
    'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
  });
};

export const rateLimits: Capability = { arounds: [around], describe };
