import { format } from 'node:util';
import { AuthorizationFailure } from './authorization';
import { Failure } from './errors';

const make =
  (status: number) =>
  (fmt = '', ...args: unknown[]) =>
    new Failure(status, args.length ? format(fmt, ...args) : fmt);

/**
 * Failures to `throw` from a handler, resolver, `by` function or any helper they call.
 * @example throw fail.notFound('order %s', id)
 */
export const fail = Object.freeze({
  badRequest: make(400),
  unauthorized: make(401),
  forbidden: make(403),
  notFound: make(404),
  conflict: make(409),
  tooLarge: make(413),
  unprocessable: make(422),
  tooManyRequests: make(429),
  /** 500; the message is logged, never sent. */
  internal: (fmt = '', ...args: unknown[]) =>
    new Failure(500, args.length ? format(fmt, ...args) : fmt, true),
  status: (status: number, fmt = '', ...args: unknown[]) =>
    new Failure(status, args.length ? format(fmt, ...args) : fmt),
  /** 401 with `WWW-Authenticate` naming the scheme that would be accepted: for resolvers that verify tokens. */
  challenge: (scheme: 'bearer' | 'basic', fmt = '', ...args: unknown[]): Failure =>
    new AuthorizationFailure(scheme, args.length ? format(fmt, ...args) : fmt),
});
