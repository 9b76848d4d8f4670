import { format } from 'node:util';

/** Bytes a failure message may take; a longer one is cut at a character boundary, never refused. */
export const MESSAGE_SLOT = 240;

/** A failure chosen by the program: thrown, it answers `status` with `message` in the failure shape. */
export class Failure extends Error {
  readonly status: number;
  /** Set by `fail.internal`: the message is logged, the client gets the status phrase. */
  readonly internal: boolean;
  constructor(status: number, message: string, internal = false) {
    super(truncate(message));
    this.name = 'Failure';
    this.status = status;
    this.internal = internal;
  }
}

export function truncate(message: string): string {
  if (message.length <= MESSAGE_SLOT / 3) return message; // fast path: cannot exceed 240 UTF-8 bytes
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= MESSAGE_SLOT) return message;
  let end = MESSAGE_SLOT;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back off to a character start
  return bytes.subarray(0, end).toString('utf8');
}

const make = (status: number) => (fmt = '', ...args: unknown[]) => new Failure(status, args.length ? format(fmt, ...args) : fmt);

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
  internal: (fmt = '', ...args: unknown[]) => new Failure(500, args.length ? format(fmt, ...args) : fmt, true),
  status: (status: number, fmt = '', ...args: unknown[]) => new Failure(status, args.length ? format(fmt, ...args) : fmt),
});
