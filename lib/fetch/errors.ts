import { CodedError, type ErrorRow } from '../errors';

/**
 * Every error code `fw-http/fetch` raises, once. `status` is what the answer should be when such an
 * error escapes a handler (the waiting kinds are 503; `BodyTooLarge` is 413, one code answering
 * one status in every module, as FAIL-20 says; anything else is 500); `doc` is the line the docs
 * list. Failures that are not ours (URI parse, connect, reset, a writer's error) are never given a
 * code here: they surface as undici or Node raised them.
 */
export const FETCH_ERRORS = {
  // The spec's codes.
  TimedOut: {
    status: 503,
    doc: "the call's own deadline (timeoutMs) ran out, counted from the call, permit wait included",
  },
  Stalled: {
    status: 503,
    doc: 'nothing arrived for stallMs while the client was waiting for bytes',
  },
  Canceled: {
    status: 503,
    doc: 'the client was closed (server shutting down) or the scope was aborted under the call',
  },
  RedirectRefused: {
    status: 500,
    doc: "a redirect the policy does not follow: a 3xx with Location under redirects 'refuse', a Location that is not http(s), or a 307/308 that would resend a stream body",
  },
  BodyTooLarge: {
    status: 413,
    doc: 'the response body passed maxBody (or the max of take), found from Content-Length or while reading',
  },
  BodyTooShort: {
    status: 500,
    doc: 'the response body ended before its Content-Length, or before readInto filled its buffer',
  },
  NotStarted: { status: 500, doc: 'a call made before client.start() (app.listen() calls it)' },
  BaseNotAbsolute: { status: 500, doc: 'a target base that is not an absolute http(s) URL' },
  BaseHasQuery: { status: 500, doc: 'a target base with a query or a fragment' },
  HttpContentEncodingUnsupported: {
    status: 500,
    doc: 'the server sent a Content-Encoding other than identity; the client decodes none',
  },
  // Ours: refusals made at run time, before anything is sent, and the redirect bound.
  TooManyRedirects: { status: 500, doc: 'a followed redirect chain needed a fourth hop (OPEN-37)' },
  BadTemplate: {
    status: 500,
    doc: 'path template and arguments do not fit: mixed {} and {name}, a missing field, a tuple for names, an object for positions, a wrong count, or a segment that is not an int, bool or non-empty text',
  },
  BadQueryValue: {
    status: 500,
    doc: 'a withQuery parameter or target query field that is not an int, bool, text, null or undefined',
  },
  BadHeader: {
    status: 500,
    doc: 'a header name that is not an HTTP token, a value holding CR, LF, NUL or another control byte, or a host given twice',
  },
  BadBody: {
    status: 500,
    doc: 'a JSON call given text or undefined, or a stream body without a valid length',
  },
  BadSettings: {
    status: 500,
    doc: 'a client, target or call limit that is not a non-negative integer (maxInFlight and readBufferSize: positive)',
  },
  ExchangeMisuse: {
    status: 500,
    doc: 'an Exchange used out of order: begun twice, or read before begin or after end',
  },
  // Derived Idempotency-Keys.
  OutboundKeyReused: {
    status: 500,
    doc: "an upstream answered a call's derived Idempotency-Key saying it was used for another request (fw's 422 with Idempotency-Key-Mismatch: true, or the Target's keyReused answer): the rerun's request differs from the first run's",
  },
  // The typed client (clientOf).
  NotInDocument: {
    status: 500,
    doc: 'clientOf was given a document with no x-fw-handler operation of the named controller',
  },
  BadArguments: {
    status: 500,
    doc: "a typed client method called with more arguments than the route reads, or a last argument that is not the call's options",
  },
} as const satisfies Record<string, ErrorRow & { status: 413 | 500 | 503 }>;

export type FetchErrorCode = keyof typeof FETCH_ERRORS;

/**
 * The one error class of `fw-http/fetch`. `code` is stable; `cause` keeps undici's error where one
 * lay underneath (for example the socket error behind a `BodyTooShort`).
 *
 * @example
 * try { await client.get(c, url, {}) } catch (e) { if (e instanceof FetchError && e.code === 'TimedOut') … }
 */
export class FetchError extends CodedError<FetchErrorCode> {
  /** The answer's status should this error escape a handler. */
  declare readonly status: 413 | 500 | 503;

  constructor(code: FetchErrorCode, detail?: string, options?: { cause?: unknown }) {
    super(
      code,
      FETCH_ERRORS[code],
      detail ? `${code}: ${detail}` : `${code}: ${FETCH_ERRORS[code].doc}`,
      options,
    );
    this.name = 'FetchError';
  }
}

/** `true` when `e` is a `FetchError`, optionally of one of the given codes. */
export function isFetchError(e: unknown, ...codes: FetchErrorCode[]): e is FetchError {
  return e instanceof FetchError && (codes.length === 0 || codes.includes(e.code));
}
