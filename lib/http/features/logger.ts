import { performance } from 'node:perf_hooks';
import type { Middleware } from '../route/extensions';

export interface LoggerOptions {
  /** `'text'` (default): `METHOD path status usµs id=…`; `'json'`: one JSON object per line. */
  readonly format?: 'text' | 'json';
  /** Sends `X-Request-Id` on every answer and logs the same id. Off by default. */
  readonly requestId?: boolean;
}

function make(options: LoggerOptions): Middleware {
  const json = options.format === 'json';
  const ids = options.requestId === true;
  return async (c, next) => {
    if (ids) c.setHeader('x-request-id', c.requestId());
    try {
      await next();
    } finally {
      const us = Math.round((performance.now() - c.startedAt) * 1000);
      const status = c.status || 500;
      c.core.log(
        json
          ? `{"method":${JSON.stringify(c.method)},"path":${JSON.stringify(c.path)},"status":${status},"us":${us},"request_id":${ids ? JSON.stringify(c.requestId()) : 'null'}}`
          : `${c.method} ${c.path} ${status} ${us}µs${ids ? ` id=${c.requestId()}` : ''}`,
      );
    }
  };
}

/**
 * One log line per request. Plain text by default; lines are batched, never one write per request.
 * @example app.use(logger.with({ format: 'json', requestId: true }))
 */
export const logger = Object.assign(make({}), {
  with: (options: LoggerOptions): Middleware => make(options),
});
