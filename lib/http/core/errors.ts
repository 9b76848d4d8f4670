/**
 * Every error code `fw` itself raises, with the status it answers when it escapes a handler.
 * One table, so the README can list them and a spec can check it does (as Fastify does).
 */
export const HTTP_ERRORS = {
  Refusal: { status: 500, doc: 'the bootstrap scanner found declarations it refuses (see RefusalError)' },
  ReservedHeader: { status: 500, doc: 'a program set Content-Type, Content-Length, Transfer-Encoding or Connection itself' },
  BadHeaderName: { status: 500, doc: 'a header name that is not an HTTP token' },
  BadHeaderValue: { status: 500, doc: 'a header value holding a control byte or a character outside ASCII' },
  HeadersSent: { status: 500, doc: 'a header set after the answer was sent' },
  AlreadySent: { status: 500, doc: 'a second answer on one request' },
  TooManyHeaders: { status: 500, doc: 'more than 8 headers on a returned value' },
  BadRedirect: { status: 500, doc: 'a redirect status outside 301, 302, 303, 307, 308' },
  NotResolved: { status: 500, doc: 'c.resolve(T) of an async resolver that has not been worked out yet' },
  UnchangedWithoutVersion: { status: 500, doc: 'Versioned.unchanged(v) when the client did not send v' },
  BodyTooLarge: { status: 413, doc: 'a request body past its bound' },
  BodyTooSlow: { status: 408, doc: 'a request body that stopped arriving' },
  TooManyParams: { status: 400, doc: 'a query string or form body with more parameters than the App option maxParams (default 10,000)' },
  NestedTooDeep: { status: 400, doc: 'a JSON body nested deeper than the App option maxDepth (default 64) where its class is read' },
  FileNotFound: { status: 404, doc: 'a file that does not exist or a name refused before opening' },
  Timeout: { status: 503, doc: 'a deadline ran out' },
  Canceled: { status: 503, doc: 'cancelled while waiting (server shutting down)' },
  StoreUnavailable: { status: 503, doc: 'the idempotency store did not answer' },
  StoreFull: { status: 503, doc: 'the idempotency store has no room for a new claim: claims and kept answers are never evicted to make room' },
  CallerOverBudget: { status: 429, doc: "an idempotent request from a caller who already holds the space's maxBytesPerCaller in claims and kept answers" },
  AnswerNotKept: { status: 503, doc: 'a retry of a request that was answered but whose answer could not be kept (store failed); refused for the claim lease, never run again' },
  DirNotFound: { status: 500, doc: 'a directory given to Dir.open or app.static cannot be opened' },
  NoSessionSecret: { status: 500, doc: 'a Session asked for with no app.sessions({ sessionSecret }) set' },
  WeakSessionSecret: { status: 500, doc: 'app.sessions({ sessionSecret }) given a secret shorter than 32 bytes' },
  NotAnEventStream: { status: 500, doc: 'a route declared @Returns(EventStream) finished without calling c.events()' },
  BadCookieValue: { status: 500, doc: 'a cookie whose value holds ";" or a control byte, or whose name is not a token' },
  CorsAnyOriginWithCredentials: { status: 500, doc: "cors({ origins: '*', credentials: true }): any site could read answers made with the user's cookies; list the origins" },
} as const;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** An error raised by `fw`, with a stable `code` and the status it answers. Its message is ours, so it is safe to send. */
export class HttpError extends Error {
  readonly code: HttpErrorCode;
  readonly status: number;
  constructor(code: HttpErrorCode, message: string) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.status = HTTP_ERRORS[code].status;
  }
}

/**
 * Every declaration problem of an app, found by the bootstrap scanner, thrown together:
 * one line per problem, each naming the route as `POST /orders (OrdersController.create)`.
 */
export class RefusalError extends HttpError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('Refusal', `fw refused ${problems.length} declaration${problems.length === 1 ? '' : 's'}:\n` + problems.map((p) => `  - ${p}`).join('\n'));
    this.name = 'RefusalError';
    this.problems = Object.freeze([...problems]);
  }
}
