// What is thrown: the errors `fw` raises (HttpError, with its one table of codes, and
// RefusalError) and the Failure a program raises with `fail.*` (./fail). What a thrown value
// answers is ./error-mapping.
import { STATUS_CODES } from 'node:http';
import { CodedError, type ErrorRow } from '../../errors';

/**
 * Every error code `fw` itself raises, once, with the status it answers when it escapes a handler
 * (an error from elsewhere carrying one of these codes answers the same) and the
 * line the docs list (as Fastify does).
 */
export const HTTP_ERRORS = {
  Refusal: {
    status: 500,
    doc: 'the bootstrap scanner found declarations it refuses (see RefusalError)',
  },
  ReservedHeader: {
    status: 500,
    doc: 'a program set Content-Type, Content-Length, Transfer-Encoding or Connection itself',
  },
  BadHeaderName: { status: 500, doc: 'a header name that is not an HTTP token' },
  BadHeaderValue: {
    status: 500,
    doc: 'a header value holding a control byte or a character outside ASCII',
  },
  HeadersSent: { status: 500, doc: 'a header set after the answer was sent' },
  AlreadySent: { status: 500, doc: 'a second answer on one request' },
  TooManyHeaders: { status: 500, doc: 'more than 8 headers on a returned value' },
  BadRedirect: { status: 500, doc: 'a redirect status outside 301, 302, 303, 307, 308' },
  BodyNotAllowed: {
    status: 500,
    doc: 'a body (or a stream) sent with 1xx, 204, 205 or 304, which have none (RFC 9110 §15): answer with c.empty(status)',
  },
  BadStatus: {
    status: 500,
    doc: 'c.empty(status) with a status that is not a whole number from 200 to 599',
  },
  UndeclaredAnswer: {
    status: 500,
    doc: 'a handler answered what its @Returns does not declare: a Reply status not in its map or list, a bare value from a Reply route, a value from a route with no @Returns',
  },
  AnswerMismatch: {
    status: 500,
    doc: 'a returned value whose declared field is missing, null where not optional, or of another kind than its @Returns class declares (named as Class.field), or that its @Returns(schema) Standard Schema refuses (named by its path); undeclared fields are left out, never an error',
  },
  NotResolved: {
    status: 500,
    doc: 'c.resolve(T) of an async resolver that has not been worked out yet',
  },
  UnchangedWithoutVersion: {
    status: 500,
    doc: 'Versioned.unchanged(v) when the client did not send v',
  },
  BodyTooLarge: { status: 413, doc: 'a request body past its bound' },
  BodyTooSlow: { status: 408, doc: 'a request body that stopped arriving' },
  TooManyParams: {
    status: 400,
    doc: 'a query string or form body with more parameters than the App option maxParams (default 10,000)',
  },
  NestedTooDeep: {
    status: 400,
    doc: 'a JSON body nested deeper than the App option maxDepth (default 64) where its class is read',
  },
  FileNotFound: { status: 404, doc: 'a file that does not exist or a name refused before opening' },
  Timeout: { status: 503, doc: 'a deadline ran out' },
  Canceled: { status: 503, doc: 'cancelled while waiting (server shutting down)' },
  StoreUnavailable: { status: 503, doc: 'the idempotency store did not answer' },
  RateStoreUnavailable: {
    status: 503,
    doc: "a @RateLimit({ storeDown: 'closed' }) route could not reach the app's rate store; sent with Retry-After: 1",
  },
  StoreFull: {
    status: 503,
    doc: 'the idempotency store has no room for a new claim: claims and kept answers are never evicted to make room',
  },
  CallerOverBudget: {
    status: 429,
    doc: "an idempotent request from a caller who already holds the space's maxBytesPerCaller in claims and kept answers",
  },
  LeaseLost: {
    status: 503,
    doc: "an idempotent handler's claim was lost while it ran (its process stalled past the space's leaseMs − leaseMarginMs, or the store refused a renewal): its c.signal is aborted with this error, c.step refuses to start a step, and another instance may run the request",
  },
  AnswerNotKept: {
    status: 503,
    doc: "a retry of a request that was answered but whose answer could not be kept (store failed, claim lost); refused by the process that answered for the record's TTL, never run again there",
  },
  DirNotFound: { status: 500, doc: 'a directory given to Dir.open or app.static cannot be opened' },
  NoSessionSecret: {
    status: 500,
    doc: 'a Session asked for with no app.sessions({ sessionSecret }) set',
  },
  WeakSessionSecret: {
    status: 500,
    doc: 'app.sessions({ sessionSecret }) given a secret shorter than 32 bytes',
  },
  NotAnEventStream: {
    status: 500,
    doc: 'a route declared @Returns(EventStream) finished without calling c.events()',
  },
  BadCookieValue: {
    status: 500,
    doc: 'a cookie whose value holds ";" or a control byte, or whose name is not a token',
  },
  CorsAnyOriginWithCredentials: {
    status: 500,
    doc: "cors({ origins: '*', credentials: true }): any site could read answers made with the user's cookies; list the origins",
  },
  PeerMissing: {
    status: 500,
    doc: 'an optional peer dependency is not installed: app.docs() needs swagger-ui-dist (npm install swagger-ui-dist), a multipart @Form needs busboy (npm install busboy), Bearer.jwt() needs jose (npm install jose)',
  },
  UploadLimit: {
    status: 413,
    doc: 'a multipart form past one of its limits (maxBytes of a file, count, maxFiles, maxFields, maxFieldBytes, maxParts, maxPartHeaderBytes, maxTotalBytes); the message names the limit',
  },
  // Who is calling: JWT resolvers and guards.
  JwksUnavailable: {
    status: 503,
    doc: "a JWT resolver could not fetch its issuer's keys (JWKS or discovery document unreachable, too slow, too large or not a key set); the cause is in the log line",
  },
  CrossSiteRequest: {
    status: 403,
    doc: 'a browser request from another site (Sec-Fetch-Site or Origin) to a cookie-session route that changes state (CSRF)',
  },
  CsrfTokenMismatch: {
    status: 403,
    doc: 'a @RequireCsrfToken route without the header X-CSRF-Token equal to its fw_csrf cookie',
  },
  TransactionConflict: {
    status: 503,
    doc: 'an atomic idempotent route met a serialization failure or deadlock (SQLSTATE 40001/40P01) on every one of its attempts (3); answered with Retry-After: 1, nothing committed',
  },
  DatabaseUnavailable: {
    status: 503,
    doc: "the database failed under an atomic idempotent handler's statements (connection lost or reset, admin or crash shutdown, a cancelled statement, SQLSTATE class 08, 53 or 58), whatever the handler made of the error; answered with Retry-After: 1, nothing committed. A constraint violation or another error of the statement stays the handler's failure",
  },
  DatabaseDeadline: {
    status: 503,
    doc: "an atomic idempotent route ran past its deadlineMs (default the space's leaseMs), or one of fw's own statements past the store's commandTimeoutMs: the running statement is cancelled, the connection destroyed, nothing committed (a COMMIT cut in flight may have landed: the key's retry then replays it); answered with Retry-After: 1",
  },
  TransactionHeld: {
    status: 500,
    doc: 'an atomic idempotent handler made an outbound call or started a c.step while its transaction was open (logged, naming the route): make outside calls before the first tx.query, or declare holdTransaction: true; nothing committed',
  },
  QueryInStep: {
    status: 500,
    doc: "an atomic idempotent handler called tx.query inside a c.step: a step's result is kept outside the transaction, so a rerun that reads it back would lose the step's writes; nothing committed",
  },
  PoolExhausted: {
    status: 503,
    doc: "an atomic idempotent route got no connection from its PgStore's pool within commandTimeoutMs while every connection was in use (logged with the pool's size and waiters); answered with Retry-After: 1. The database is up: /healthz does not report it down",
  },
} as const satisfies Record<string, ErrorRow>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/**
 * Codes (or names) of parse errors from elsewhere that mean the client sent something malformed:
 * they answer 400, like JSON.parse's own `SyntaxError`.
 */
export const MALFORMED_CODES: ReadonlySet<string> = new Set([
  'InvalidCharacter',
  'MissingField',
  'SyntaxError',
]);

/** Details a failure carries for the client to act on: a plain object, sent as it is. */
export type FailureDetails = Readonly<Record<string, unknown>>;

/** An error raised by `fw`, with a stable `code` and the status it answers. Its message is ours, so it is safe to send. */
export class HttpError extends CodedError<HttpErrorCode> {
  /** Sent with the failure (the Problem shape's extension members, a custom shape's third argument). */
  readonly details: FailureDetails | null;
  constructor(
    code: HttpErrorCode,
    message: string,
    details: FailureDetails | null = null,
    options?: { cause?: unknown },
  ) {
    super(code, HTTP_ERRORS[code], message, options);
    this.name = 'HttpError';
    this.details = details;
  }
}

/** What a wait on the client's connection (a write, `c.signal`) fails with once the client has gone. */
export const clientGone = (): HttpError => new HttpError('Canceled', 'the client went away');

/**
 * Every declaration problem of an app, found by the bootstrap scanner, thrown together:
 * one line per problem, each naming the route as `POST /orders (OrdersController.create)`.
 */
export class RefusalError extends HttpError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(
      'Refusal',
      `fw refused ${problems.length} declaration${problems.length === 1 ? '' : 's'}:\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
    this.name = 'RefusalError';
    this.problems = Object.freeze([...problems]);
  }
}

/** Bytes a failure message may take; a longer one is cut at a character boundary, never refused. */
export const MESSAGE_SLOT = 240;

/**
 * What a failure says besides its status: `fail.unprocessable({ code: 'InsufficientFunds',
 * message: 'the balance is too low', details: { balance: 3 } })`.
 */
export interface FailureInit {
  readonly message?: string;
  /** A stable name clients can branch on. Default: the status phrase in PascalCase (`NotFound`). */
  readonly code?: string;
  readonly details?: FailureDetails;
}

/** A failure chosen by the program (`fail.*`): thrown, it answers `status` with `message` in the failure shape. */
export class Failure extends Error {
  readonly status: number;
  /** Set by `fail.internal`: the message is logged, the client gets the status phrase. */
  readonly internal: boolean;
  /** A stable name for what failed (`InsufficientFunds`); by default the status phrase (`Conflict`). */
  readonly code: string;
  readonly details: FailureDetails | null;
  constructor(status: number, message: string, internal = false, init: FailureInit = {}) {
    super(truncate(message));
    this.name = 'Failure';
    this.status = status;
    this.internal = internal;
    this.code = init.code ?? statusCode(status);
    this.details = init.details ?? null;
  }
}

/** The code of a failure that names none: its status phrase in PascalCase (`Unprocessable Entity` → `UnprocessableEntity`). */
export function statusCode(status: number): string {
  const words = STATUS_CODES[status]?.match(/[A-Za-z0-9]+/g);
  if (words === undefined || words === null) return `Status${status}`;
  return words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/**
 * `message` cut to MESSAGE_SLOT bytes of UTF-8 at a character boundary: a long message is cut,
 * never refused.
 */
export function truncate(message: string): string {
  if (message.length <= MESSAGE_SLOT / 3) return message; // fast path: cannot exceed 240 UTF-8 bytes
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= MESSAGE_SLOT) return message;
  let end = MESSAGE_SLOT;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off to a character start
  return bytes.subarray(0, end).toString('utf8');
}
