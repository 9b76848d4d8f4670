// What a thrown value answers: its status, the message sent, extra headers and the log line
// (mapError, the one place that decides it), and the failure body those become (the default
// `{ error, status }` or the program's own shape), also when written straight on a socket.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { CodedError } from '../../errors';
import { AuthorizationFailure } from './authorization';
import {
  Failure,
  HTTP_ERRORS,
  HttpError,
  MALFORMED_CODES,
  statusCode,
  type FailureDetails,
  type HttpErrorCode,
} from './errors';
import type { HeaderBag } from './header-rules';
import { isError } from './log';

/** What a thrown value answers. */
export interface MappedError {
  readonly status: number;
  /**
   * The failure body's message: never a stack, file name or internal error name, which would tell
   * a client how the server is built.
   */
  readonly message: string;
  readonly headers: HeaderBag | null;
  /** A stable name for what failed: the program's (`fail.*({ code })`), fw's own, or the status phrase's. */
  readonly code: string;
  readonly details: FailureDetails | null;
  /**
   * How the error is logged (its name, message, stack and cause go in the line's `err`), or null
   * when it is the program's own ordinary answer (a `Failure`).
   */
  readonly log: ErrorLog | null;
}

/** The log line of a thrown value: `error` for a 500 (and other server faults), `warn` for one mapped to a client or availability status. */
export interface ErrorLog {
  readonly level: 'error' | 'warn';
  readonly msg: string;
}

export const phrase = (status: number): string => STATUS_CODES[status] ?? 'Unknown';
/** The message of a 500 whose cause is not the client's business. */
const INTERNAL = 'internal server error';

/**
 * Codes and names of errors `fw` does not raise that mean one of its codes: Node's missing file
 * (404) and its aborts and timeouts (503). Their status is HTTP_ERRORS'.
 */
const MEANS: Readonly<Record<string, HttpErrorCode>> = {
  ENOENT: 'FileNotFound',
  ABORT_ERR: 'Canceled',
  AbortError: 'Canceled',
  TimeoutError: 'Timeout',
};

/** The HTTP_ERRORS code that `key` (an error's code or name) is or means; undefined for none. */
function ourCode(key: string | undefined): HttpErrorCode | undefined {
  if (key === undefined) return undefined;
  if (Object.hasOwn(HTTP_ERRORS, key)) return key as HttpErrorCode;
  return Object.hasOwn(MEANS, key) ? MEANS[key] : undefined;
}

/** 500 and the other server faults are errors; what is mapped to 4xx or 503 (unavailable, timed out, cancelled) a warning. */
const levelOf = (status: number): 'error' | 'warn' =>
  status >= 500 && status !== 503 ? 'error' : 'warn';

/** An answer whose message is not the error's: the reason phrase, or `internal server error` for a 500. */
function phraseOnly(status: number, msg: string, code = statusCode(status)): MappedError {
  return {
    status,
    message: status === 500 ? INTERNAL : phrase(status),
    headers: null,
    code,
    details: null,
    log: { level: levelOf(status), msg },
  };
}

/**
 * What the client is told about a thrown value, and what is logged. In order:
 * - a `Failure` (`fail.*`): its status and message, not logged (`fail.internal`: logged as an
 *   error, the phrase sent); `fail.challenge` adds `WWW-Authenticate`;
 * - a `CodedError` (HttpError, CacheError, FetchError): the status its code has in its module's
 *   table; an HttpError's message is ours and sent, the others' (which name URLs and keys) only logged;
 * - any other error whose code (or name) is, or means, an HTTP_ERRORS code: that code's status;
 * - a parse error: a `SyntaxError` (JSON.parse and the like) or one coded `InvalidCharacter`,
 *   `MissingField` or `SyntaxError`: 400, since the client sent it;
 * - anything else: 500 `internal server error`, its name only logged.
 * Every one but a plain `Failure` is logged: `error` for a server fault, `warn` for the mapped ones;
 * the line's `msg` names the route (`label`), the error's name and code.
 */
export function mapError(err: unknown, label: string): MappedError {
  if (err instanceof Failure) {
    const headers =
      err instanceof AuthorizationFailure ? { 'www-authenticate': err.challenge } : null;
    if (err.internal)
      return {
        status: err.status,
        message: phrase(err.status),
        headers,
        code: err.code,
        details: null,
        log: { level: 'error', msg: `${label}: fail.internal: ${err.message}` },
      };
    return {
      status: err.status,
      message: err.message === '' ? phrase(err.status) : unlabelled(err.message, label),
      headers,
      code: err.code,
      details: err.details,
      log: null,
    };
  }
  if (err instanceof HttpError) {
    return {
      status: err.status,
      // A framework fault (an undeclared answer, a bad header) is the server's: the log says what.
      message: err.status >= 500 && err.status !== 503 ? INTERNAL : unlabelled(err.message, label),
      headers: null,
      code: err.code,
      details: err.details,
      log: { level: levelOf(err.status), msg: `${label}: ${err.code}: ${err.message}` },
    };
  }
  if (err instanceof CodedError)
    return phraseOnly(err.status, `${label}: ${err.name} ${err.code}`, err.code);
  const e = err as { name?: unknown; code?: unknown } | null;
  const name = typeof e?.name === 'string' ? e.name : typeof err;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const ours = ourCode(code) ?? ourCode(name);
  const named = `${name}${code === undefined ? '' : ` ${code}`}`;
  if (ours !== undefined) return phraseOnly(HTTP_ERRORS[ours].status, `${label}: ${named}`, ours);
  if (
    err instanceof SyntaxError ||
    (code !== undefined && MALFORMED_CODES.has(code)) ||
    (isError(err) && MALFORMED_CODES.has(name))
  )
    return phraseOnly(400, `${label}: ${named}`);
  return phraseOnly(500, `${label}: unhandled ${name}${code ? ` (${code})` : ''}`);
}

/**
 * A message as the client may see it: the route's label (`POST /orders (OrdersController.create)`,
 * the controller and method names are the program's internals) becomes its method and path. The
 * log keeps the label. Messages without it are returned as they are, at no cost.
 */
function unlabelled(message: string, label: string): string {
  const cut = label.lastIndexOf(' (');
  if (cut === -1 || !label.endsWith(')') || !message.includes(label)) return message;
  return message.split(label).join(label.slice(0, cut));
}

/** Room a custom failure shape has around its message; a shape needing more falls back to the default. */
export const ENVELOPE_ROOM = 256;

/** Everything a failure answer says, handed to the failure shape. */
export interface FailureFacts {
  readonly status: number;
  readonly message: string;
  /** A stable name for what failed (`InsufficientFunds`, `BodyTooLarge`, `NotFound`). */
  readonly code: string;
  readonly details: FailureDetails | null;
  readonly requestId: string;
  /** The request's path (`instance` in a Problem). */
  readonly path: string;
}

/**
 * A class passed to `app.failures(T)`: its static `failure(status, message, facts)` builds the body
 * (a shape written for `(status, message)` keeps working: `facts` holds the code, details, request
 * id and path). `contentType` (default `application/json`) is the answer's type.
 */
export interface FailureShape {
  failure(status: number, message: string, facts: FailureFacts): object;
  readonly contentType?: string;
}

export const defaultFailureBody = (f: { status: number; message: string }): string =>
  `{"error":${JSON.stringify(f.message)},"status":${f.status}}`;

/** Compiles the failure body writer of an app: the default `{ error, status }`, or the program's own shape. */
export function failureBodyFor(shape: FailureShape | null): (f: FailureFacts) => string {
  if (shape === null) return defaultFailureBody;
  // The Problem shape is fw's: its members are bounded by the request head, its details are the
  // program's own. A program's shape keeps its room around the message
  // (256 bytes); one that needs more falls back to the default shape.
  if (shape.contentType === PROBLEM_TYPE)
    return (f) => JSON.stringify(shape.failure(f.status, f.message, f));
  return (f) => {
    const body = JSON.stringify(shape.failure(f.status, f.message, f));
    const envelope = Buffer.byteLength(body) - Buffer.byteLength(JSON.stringify(f.message));
    return envelope > ENVELOPE_ROOM ? defaultFailureBody(f) : body;
  };
}

/** The content type of the RFC 9457 Problem shape. */
export const PROBLEM_TYPE = 'application/problem+json';

/**
 * A failure written straight on a socket that no `ServerResponse` owns (a request node could not
 * parse, or one served from an Upgrade's socket): the default shape with `Connection: close`,
 * then our side is ended.
 */
export function writeRawFailure(
  socket: Socket,
  status: number,
  message: string,
  extra: HeaderLines = NO_LINES,
): void {
  const body = defaultFailureBody({ status, message });
  let more = '';
  for (const [name, value] of extra) more += `${name}: ${value}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/json\r\n` +
      `${more}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Header lines every answer of the app carries, even one written before routing (security headers). */
export type HeaderLines = readonly (readonly [string, string])[];
const NO_LINES: HeaderLines = [];
