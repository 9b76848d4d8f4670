import { performance } from 'node:perf_hooks';
import type { Middleware } from '../route/extensions';

export interface LoggerOptions {
  /**
   * `'json'` (default): one line in pino's shape per request, as pino-http writes it (`reqId`,
   * `req: { method, url }`, `res: { statusCode }`, `responseTime` in ms), plus `us` (the duration
   * in microseconds) and `msg` (`GET /orders 201 734µs`). `'text'`: that `msg` alone, as a plain
   * line, for a terminal.
   */
  readonly format?: 'text' | 'json';
  /** Sends `X-Request-Id` on every answer. Off by default; the line carries the id (`reqId`) either way. */
  readonly requestId?: boolean;
}

function make(options: LoggerOptions): Middleware {
  const text = options.format === 'text';
  const ids = options.requestId === true;
  return async (c, next) => {
    if (ids) c.setHeader('x-request-id', c.requestId());
    try {
      await next();
    } finally {
      const log = c.log;
      if (log.enabled('info')) {
        const us = Math.round((performance.now() - c.startedAt) * 1000);
        const status = c.status || 500;
        if (text)
          log.text(`${c.method} ${c.path} ${status} ${us}µs${ids ? ` id=${c.requestId()}` : ''}`);
        else
          // The request's logger puts its `reqId` first, as the line always had it.
          log.info(
            {
              req: { method: c.method, url: c.path, remoteAddress: c.ip },
              res: { statusCode: status },
              responseTime: us / 1000,
              us,
            },
            `${c.method} ${c.path} ${status} ${us}µs`,
          );
      }
    }
  };
}

/**
 * One log line per request, in pino's shape (or plain text with `format: 'text'`); lines are
 * batched, never one write per request.
 * @example app.use(logger.with({ requestId: true }))
 */
export const logger = Object.assign(make({}), {
  with: (options: LoggerOptions): Middleware => make(options),
});
