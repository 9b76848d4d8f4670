import { format } from 'node:util';
import { AuthorizationFailure } from './authorization';
import { Failure, type FailureInit } from './errors';

/** A message with `util.format` arguments, or `{ message, code, details }`. */
const build = (status: number, fmt: string | FailureInit, args: unknown[]): Failure =>
  typeof fmt === 'object'
    ? new Failure(status, fmt.message ?? '', false, fmt)
    : new Failure(status, args.length ? format(fmt, ...args) : fmt);

const make =
  (status: number) =>
  (fmt: string | FailureInit = '', ...args: unknown[]) =>
    build(status, fmt, args);

/**
 * Failures to `throw` from a handler, resolver, `by` function or any helper they call. Each takes a
 * message (with `util.format` arguments) or `{ message, code, details }`: a stable `code` clients can
 * branch on and `details` sent with it.
 * @example throw fail.notFound('order %s', id)
 * @example throw fail.unprocessable({ code: 'InsufficientFunds', message: 'balance too low', details: { balance } })
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
  status: (status: number, fmt: string | FailureInit = '', ...args: unknown[]) =>
    build(status, fmt, args),
  /** 401 with `WWW-Authenticate` naming the scheme that would be accepted: for resolvers that verify tokens. */
  challenge: (scheme: 'bearer' | 'basic', fmt = '', ...args: unknown[]): Failure =>
    new AuthorizationFailure(scheme, args.length ? format(fmt, ...args) : fmt),
});
