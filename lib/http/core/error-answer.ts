import { STATUS_CODES } from 'node:http';
import { AuthorizationFailure } from './authorization';
import { HttpError } from './errors';
import { Failure } from './fail';
import type { HeaderBag } from './header-rules';

export interface ErrorAnswer {
  readonly status: number;
  readonly message: string;
  readonly headers: HeaderBag | null;
  /** A line for the log, or null when the failure is the program's own ordinary answer. */
  readonly log: string | null;
}

export const phrase = (status: number): string => STATUS_CODES[status] ?? 'Unknown';
const INTERNAL = 'internal server error';

/** Codes of errors from anywhere (ours, Node's, fw/fetch's) and the status they answer (the spec's error table). */
const BY_CODE: Record<string, number> = {
  FileNotFound: 404,
  ENOENT: 404,
  BodyTooLarge: 413,
  BodyTooSlow: 408,
  Timeout: 503,
  Canceled: 503,
  ABORT_ERR: 503,
};
/** fw/fetch's codes: the upstream timing out or the server shutting down is 503; the rest are our fault (500). */
const FETCH_UNAVAILABLE = new Set(['TimedOut', 'Stalled', 'Canceled']);

/**
 * What the client is told about a thrown value: never a stack, file name or internal error name,
 * unless a `fail.*` call put it in the message.
 */
export function errorAnswer(err: unknown, label: string): ErrorAnswer {
  if (err instanceof Failure) {
    const headers = err instanceof AuthorizationFailure ? { 'www-authenticate': err.challenge } : null;
    if (err.internal) return { status: err.status, message: phrase(err.status), headers, log: `${label}: fail.internal: ${err.message}` };
    return { status: err.status, message: err.message || phrase(err.status), headers, log: null };
  }
  if (err instanceof HttpError) {
    return { status: err.status, message: err.message, headers: null, log: err.status >= 500 ? `${label}: ${err.code}: ${err.message}` : null };
  }
  const e = err as { name?: unknown; code?: unknown } | null;
  const name = typeof e?.name === 'string' ? e.name : typeof err;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (name === 'FetchError') {
    if (code !== undefined && FETCH_UNAVAILABLE.has(code)) return { status: 503, message: phrase(503), headers: null, log: `${label}: outbound call failed: ${code}` };
    return { status: 500, message: INTERNAL, headers: null, log: `${label}: outbound call failed: ${code ?? name}` };
  }
  if (code !== undefined && code in BY_CODE) {
    const status = BY_CODE[code];
    return { status, message: phrase(status), headers: null, log: status >= 500 ? `${label}: ${name} ${code}` : null };
  }
  if (name === 'AbortError' || name === 'TimeoutError') return { status: 503, message: phrase(503), headers: null, log: `${label}: ${name}` };
  if (err instanceof SyntaxError) {
    return { status: 400, message: phrase(400), headers: null, log: null };
  }
  return { status: 500, message: INTERNAL, headers: null, log: `${label}: unhandled ${name}${code ? ` (${code})` : ''}` };
}
