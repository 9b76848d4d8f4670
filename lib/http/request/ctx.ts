import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SERVER_SIDE } from '../../fetch/server-side';
import type { LogWriter } from '../core/log';
import type { Context } from '@opentelemetry/api';
import type { OutboundCall, Scope } from '../../fetch/scope';
import { REDIRECT_STATUSES, type HeaderEntry, type RedirectStatus } from '../core/answers';
import { parseAuthorization, type Credentials } from '../core/authorization';
import { HttpError, clientGone, statusCode, type FailureDetails } from '../core/errors';
import type { FailureFacts, HeaderLines } from '../core/error-mapping';
import {
  addHeader,
  checkHeader,
  checkValue,
  headerProblem,
  type HeaderBag,
} from '../core/header-rules';
import { EVENT_STREAM, JSON_TYPE, TEXT_TYPE } from '../core/media-types';
import { BodyStream } from './body-stream';
import type { SendFileOptions } from './send-file-options';
import { bufferedBody, readBody } from './read-body';
import { isMultipart, readUpload, type ReadUpload, type UploadPlan } from './read-upload';
import { NO_VALUES } from '../core/router';
import { etagOf, noneMatchHolds, type Version } from '../core/etag';
import { requestIdFor } from '../core/request-id';
import { RequestLog } from '../core/request-log';
import { clientOf, type ClientFacts } from '../core/trust-proxy';
import { spell } from '../../json';
import { readCookie, serializeCookie, type CookieOptions } from '../core/cookies';
import { EventStream } from './events';
import type { SessionOptions } from './session-options';
import type { UpgradeLoop } from './upgrade-loop';
import type { IdempotencyInfo } from './idempotency-info';
import type { Lease } from './lease';
import { passOutside } from './outside-gate';
import { runStep } from './step';

/** @internal What a request needs from its app; the App implements it. */
export interface Core {
  /**
   * Header lines for the answers written before routing and for a WebSocket's 101 (the security
   * headers of `securityHeaders()`, when the app uses it); empty otherwise.
   */
  earlyHeaders: HeaderLines;
  /** The failure body, in the app's failure shape. */
  failureBody(f: FailureFacts): string;
  /** The failure body's content type (`application/problem+json` for the Problem shape). */
  failureType: string;
  /** Compresses a finished body when the app and the request allow it; may add headers. */
  compress:
    | ((c: Ctx, bag: HeaderBag, type: string, body: Uint8Array | string) => Uint8Array | string)
    | null;
  /** Writes a line of the app's own (a `warning:` or `error:` prefix sets its level). */
  log(line: string): void;
  /** The app's log writer: pino-shaped lines with fields (the request log, failures). */
  readonly logs: LogWriter;
  stopping: boolean;
  readonly shutdown: AbortSignal;
  /** `app.sessions(...)`, or null when not set. */
  sessions: SessionOptions | null;
  /** The largest body read whole (`c.body()`, `@Body`, an urlencoded `@Form`) where a route sets none (`App({ maxBodyBytes })`). */
  readonly bodyLimit: number;
  /** `new App({ trustProxy })` compiled: which hop may speak for the client; null trusts none. */
  readonly trustProxy: ((address: string, hop: number) => boolean) | null;
  /** Gives back the answer's in-flight slot (`maxRequestsInFlight`): a long stream or an upgraded socket holds none. */
  release(res: ServerResponse): void;
  // The features behind `c.sendFile` and `c.upgrade`, filled in by the app: the Ctx sits below
  // every feature and names none of them.
  /** Sends a file as `c.sendFile` promises. */
  readonly sendFile: (c: Ctx, options: SendFileOptions) => Promise<void>;
  /** Completes `c.upgrade`: hands the admitted socket to the loop. */
  readonly upgrade: <S>(c: Ctx, loop: UpgradeLoop<S>, state: S) => void;
}

/**
 * @internal What the app's telemetry keeps for one request: set on the Ctx by the app only when a
 * tracer or meter provider is registered, so without one a request pays a null check.
 */
export interface RequestTelemetry {
  /** The OpenTelemetry context holding the request's server span; null when only metrics are on. */
  readonly context: Context | null;
  /** The request was routed to `route` (`POST /orders/{id}/cancel`). */
  routed(route: string): void;
  /**
   * An fw feature's outcome on this request (`idempotency`: `replayed`, `stored`, …;
   * `rate_limit_eviction`: a client's window was forgotten to make room for this one's).
   */
  note(
    feature: 'idempotency' | 'rate_limit' | 'rate_limit_eviction' | 'deprecated',
    outcome: string,
  ): void;
  /** A thrown value became the answer `status` (or failed after answering). */
  failed(err: unknown, status: number): void;
}

/** @internal An answer held back to be kept before it is sent (idempotent routes). */
export interface CapturedAnswer {
  readonly status: number;
  readonly type: string | null;
  readonly body: Uint8Array | string | null;
  readonly own: readonly HeaderEntry[] | null;
}

/** The route a request was matched to, as middleware sees it in `c.route`. */
export interface RouteInfo {
  /** The path template, `{name}` segments included: `/orders/{id}/cancel`. */
  readonly template: string;
  /** The HTTP method the route answers. */
  readonly httpMethod: string;
  /** The controller class's name (`OrdersController`; a built-in route's own name). */
  readonly controller: string;
  /** The handler method's name (`cancel`). */
  readonly method: string;
  /** How Refusals and logs name it: `POST /orders/{id}/cancel (OrdersController.cancel)`. */
  readonly label: string;
}

/** What a `finished` hook is told once the answer is over (sent in full, or the connection gone). */
export interface Finished {
  /** The status sent; 0 when the connection closed before any head was written. */
  readonly status: number;
  /** Milliseconds from the request's arrival to the end of its answer. */
  readonly durationMs: number;
  /** False when the connection closed before the answer was sent in full. */
  readonly completed: boolean;
}

/** A class whose value is worked out once per request from the request itself (an account from a token, say). */
export interface Resolvable<T> {
  resolve(c: Ctx): T | Promise<T>;
}

const PENDING = Symbol('pending');
/** AbortSignal's own `aborted` and `throwIfAborted`, which a signal watching a lease calls after its check. */
const ABORTED = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!;
const THROW_IF_ABORTED = AbortSignal.prototype.throwIfAborted;
/** Marks a multipart digest in a fingerprint, so no raw body can stand for it. */
const UPLOAD_PRINT = Buffer.from('\0multipart-sha256\0');
/**
 * Node sends a string body in one piece with the head, a Buffer as a piece of its own: on loopback
 * that second piece cost a replayed answer about a tenth of its throughput. Bodies up to this size
 * go as latin1 strings, which carry every byte value unchanged.
 */
const ONE_PIECE_BYTES = 16 * 1024;
const asLatin1 = (b: Uint8Array): string =>
  (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('latin1');

/**
 * The request context: what the request says and how to answer it. A handler gets it by declaring
 * a parameter of type `Ctx`.
 * @example @Get('/hello') hello(c: Ctx) { c.sendText(200, 'hello') }
 */
export class Ctx implements Scope {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  readonly method: string;
  /** The path as sent, without the query. */
  readonly path: string;
  /** The query string as sent, without `?` (empty when none). */
  readonly rawQuery: string;
  /** @internal */ readonly req: IncomingMessage;
  /** @internal */ readonly res: ServerResponse;
  /** @internal */ readonly core: Core;
  /** @internal raw `{name}` values in path order */ values: readonly string[] = NO_VALUES;
  /** When the request arrived (performance.now()). */
  readonly startedAt: number;
  /** The status sent, or 0: written only as the head goes out (`head`, `markSent`). */
  #status = 0;
  #out: HeaderBag | null = null;
  #id: string | null = null;
  #resolved: Map<unknown, unknown> | null = null;
  #body: Promise<void> | null = null;
  #bodyBytes: Buffer | null = null;
  #search: URLSearchParams | null = null;
  #abort: AbortController | null = null;
  /** The claim's lease while an idempotent handler runs on one (checked before its effects), else null. */
  #lease: Lease | null = null;
  /** @internal set while an idempotent handler runs: its answer is captured to be kept, and answering through the Ctx is refused */
  capture = false;
  /** @internal the answer captured while `capture` was set */
  captured: CapturedAnswer | null = null;
  /**
   * On an idempotent route, while its handler runs: the normalised key, the caller, the space and
   * a fencing token (see `IdempotencyInfo`); null elsewhere.
   */
  idempotency: IdempotencyInfo | null = null;

  /**
   * The derived `Idempotency-Key` of an outbound call (fw-http/fetch asks it), or null outside an
   * idempotent handler: see `IdempotencyInfo.outboundKey`.
   * @example const key = c.idempotencyKey({ target: 'bank', method: 'POST', template: '/charges' });
   */
  idempotencyKey(call: OutboundCall): string | null {
    return this.idempotency === null ? null : this.idempotency.outboundKey(call);
  }
  /**
   * A recovery point: on an idempotent route, `fn`'s result is recorded in the route's space
   * (under the request's key and `name`, for the space's TTL) before it is handed back, and a
   * rerun of the same request (after a crash, a thrown error or a lost lease) reads it back
   * instead of running `fn` again. Elsewhere (and on atomic routes, whose transaction already
   * undoes a failed run) `fn` just runs. The result goes through JSON either way. A crash between
   * `fn`'s effect and its record still runs `fn` again: see the guide, "Recovery points".
   * @example const charge = await c.step('charge', () => payments.charge(order));
   */
  step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    try {
      passOutside(this, `c.step "${String(name)}"`);
    } catch (e) {
      return Promise.reject(e);
    }
    const info = this.idempotency;
    if (info === null) return runStep(null, (this.#stepNames ??= new Set()), name, fn);
    // The step's outbound calls are counted within it: its derived keys move with no other call.
    return runStep(info.steps, info.stepNames, name, () => info.inStep(name, fn));
  }

  /**
   * Asked by `fw-http/fetch` as an outbound call is made: throws when the call may not go out now
   * (an atomic handler whose transaction is open, see the guide's "Atomic routes").
   */
  beforeCall(): void {
    passOutside(this, 'an outbound call');
  }
  #stepNames: Set<string> | null = null;
  /** @internal set once the handler has returned its value (before the value is encoded) */
  handled = false;
  /** @internal set as the handler is called (its arguments read and valid): a failure after it is the handler's own */
  invoked = false;
  /** What leaves the app-wide shutdown signal, kept while an idempotent run outlives its client. */
  #detach: (() => void) | null = null;
  /** @internal an answer being written asynchronously (`sendFile`): the route's answer is this promise */
  answering: Promise<void> | null = null;
  /** @internal the request's telemetry, set by the app when a tracer or meter is registered */
  telemetry: RequestTelemetry | null = null;
  /** @internal the largest body read whole: the app's, or the route's `@BodyLimit` */
  bodyLimit: number;
  /** @internal the route's multipart form plan (a `@Form` class with `@FormFile` fields), set by its compiled route */
  uploadPlan: UploadPlan | null = null;
  #upload: Promise<ReadUpload> | null = null;
  /**
   * The route the request was matched to (template, controller, method), or null when no route
   * took it (a static file, a 404). Set before middleware runs.
   */
  route: RouteInfo | null = null;
  /** @internal the compiled route found before the middleware ran, for the app to serve */
  matched: unknown = null;
  #beforeHead: ((status: number) => void)[] | null = null;
  #log: RequestLog | null = null;
  #client: ClientFacts | null = null;

  /** @internal made as the request arrives: its target split at the first `?`, its time taken now */
  constructor(req: IncomingMessage, res: ServerResponse, core: Core) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.req = req;
    this.res = res;
    this.core = core;
    this.method = req.method ?? 'GET';
    this.path = q === -1 ? url : url.slice(0, q);
    this.rawQuery = q === -1 ? '' : url.slice(q + 1);
    this.startedAt = performance.now();
    this.bodyLimit = core.bodyLimit;
  }

  // ---- reading the request

  /** A request header, or `null` when absent (several lines of one name are joined with `, `). */
  header(name: string): string | null {
    const v = this.req.headers[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }

  /**
   * The client's address: the socket's peer, or, behind proxies the app trusts
   * (`new App({ trustProxy })`), the first untrusted address of `Forwarded`/`X-Forwarded-For`.
   */
  get ip(): string {
    return (this.#client ??= clientOf(this.req, this.core.trustProxy)).ip;
  }

  /** `https` when the connection is TLS, or a trusted proxy says the client's was; else `http`. */
  get protocol(): 'http' | 'https' {
    return (this.#client ??= clientOf(this.req, this.core.trustProxy)).protocol;
  }

  /** The host the client asked for: `Host`, or what a trusted proxy forwarded (`X-Forwarded-Host`, `host=`). */
  get host(): string {
    return (this.#client ??= clientOf(this.req, this.core.trustProxy)).host;
  }

  /** The parsed query string. */
  get query(): URLSearchParams {
    return (this.#search ??= new URLSearchParams(this.rawQuery));
  }

  /**
   * @internal The route's multipart form, read once into temp files and fields (the form argument
   * and the idempotency step share one reading).
   */
  readUpload(plan: UploadPlan): Promise<ReadUpload> {
    return (this.#upload ??= readUpload(this.req, this.res, plan));
  }

  /**
   * @internal `then(body)` with what the idempotency fingerprint covers: the raw body, or for a
   * multipart upload route the digest its form reading took as the bytes passed (never held whole).
   */
  afterBodyPrint<T>(then: (body: Buffer) => T): T | Promise<T> {
    const plan = this.uploadPlan;
    if (plan !== null && isMultipart(this.req))
      return this.readUpload(plan).then((u) => then(Buffer.concat([UPLOAD_PRINT, u.digest])));
    return this.afterBody(then);
  }

  /**
   * The raw request body, at most the body limit: 1 MiB unless `App({ maxBodyBytes })` or the route's
   * `@BodyLimit` say otherwise (413 beyond). Read once; later calls give the same bytes.
   */
  body(): Promise<Buffer> {
    return this.bodyReady().then(() => this.#bodyBytes!);
  }

  /**
   * @internal The whole body when it is here: read already, or buffered in full in the request (it
   * is taken now). Null while it is still arriving: wait for `bodyReady()`. Throws 413 past the limit.
   */
  bodyNow(): Buffer | null {
    if (this.#bodyBytes === null && this.#body === null)
      this.#bodyBytes = bufferedBody(this.req, this.bodyLimit);
    return this.#bodyBytes;
  }

  /**
   * @internal `then(body)` at once when the whole body is here, else once it is (a promise of its
   * result). The first wait is a single microtask that looks again (see `bodyReady`); the stream is
   * read only when the body is still not here then.
   */
  afterBody<T>(then: (body: Buffer) => T): T | Promise<T> {
    const now = this.bodyNow();
    if (now !== null) return then(now);
    if (this.#body !== null) return this.#body.then(() => then(this.#bodyBytes!));
    return Promise.resolve().then(() => {
      const later = this.bodyNow();
      return later !== null ? then(later) : this.bodyReady().then(() => then(this.#bodyBytes!));
    });
  }

  /**
   * @internal Settles, with no value, once `bodyNow()` has the body. Internal readers wait on this
   * rather than on a promise of the Buffer: settling a promise with an object looks up `then` along
   * its prototype chain, which for a Buffer costs more than the rest of a replay's bookkeeping.
   */
  bodyReady(): Promise<void> {
    if (this.#body === null) {
      // Node's parser hands a body that came in the head's packet to the request after the handler
      // has started but before a queued microtask runs: one microtask later it is usually all here.
      this.#body = Promise.resolve().then(() => {
        if (
          this.#bodyBytes !== null ||
          (this.#bodyBytes = bufferedBody(this.req, this.bodyLimit)) !== null
        )
          return undefined;
        return readBody(this.req, this.bodyLimit).then((b) => {
          this.#bodyBytes = b;
        });
      });
    }
    return this.#body;
  }

  /**
   * The request body as it arrives, in pieces, refused (413) once it passes `maxBytes`.
   * @example for await (const chunk of c.bodyStream({ maxBytes: 10 << 20 })) hash.update(chunk);
   */
  async *bodyStream(options: { readonly maxBytes: number }): AsyncGenerator<Buffer> {
    let size = 0;
    for await (const chunk of this.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.maxBytes) {
        this.res.shouldKeepAlive = false; // the rest of the body is never read
        throw new HttpError(
          'BodyTooLarge',
          `request body is larger than ${options.maxBytes} bytes`,
        );
      }
      yield chunk;
    }
  }

  /** Waits `ms`; a request still waiting when the client leaves or the server shuts down fails 503. */
  sleep(ms: number): Promise<void> {
    const signal = this.signal;
    return new Promise((resolve, reject) => {
      const cancel = () => {
        clearTimeout(timer);
        reject(new HttpError('Canceled', 'cancelled while waiting'));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', cancel);
        resolve();
      }, ms);
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
    });
  }

  /** The parsed `Authorization` header of this scheme; throws a 401 naming what is accepted otherwise. */
  authorization<S extends 'bearer' | 'basic'>(scheme: S): Credentials<S> {
    return parseAuthorization(this.header('authorization') ?? undefined, scheme);
  }

  /**
   * The request's id: the proxy's `X-Request-Id` when it is valid, otherwise a generated one.
   * Works with or without the logger.
   */
  requestId(): string {
    return (this.#id ??= requestIdFor(this.req.headers['x-request-id']));
  }

  /**
   * The request's logger: the app's (fw's writer or the program's pino), each line carrying this
   * request's `reqId`.
   * @example c.log.info({ orderId }, 'order placed')
   */
  get log(): RequestLog {
    return (this.#log ??= new RequestLog(this.core.logs, { reqId: this.requestId() }));
  }

  /**
   * Runs `hook(status)` just before the answer's head is written, whatever writes it (a handler's
   * value, a failure, a file, a stream): it may still set headers and read the status. Each hook
   * runs once; one that throws is logged and the answer goes on.
   * @example c.beforeHead((status) => c.setHeader('server-timing', `app;dur=${ms()}`))
   */
  beforeHead(hook: (status: number) => void): void {
    (this.#beforeHead ??= []).push(hook);
  }

  /**
   * Runs `hook` once the answer is over: sent in full, or the connection gone first. It gets the
   * final status and the duration (for metrics and access logs; the answer can no longer change).
   */
  onFinished(hook: (finished: Finished) => void): void {
    const res = this.res;
    res.once('close', () => {
      const finished: Finished = {
        status: this.#status,
        durationMs: performance.now() - this.startedAt,
        completed: res.writableFinished,
      };
      try {
        hook(finished);
      } catch (err) {
        this.core.logs.write(
          'warn',
          { reqId: this.requestId(), err },
          'a finished hook failed (ignored)',
        );
      }
    });
  }

  /** Runs the beforeHead hooks once, their headers going into the bag about to be written. */
  #runBeforeHead(status: number, bag: HeaderBag): void {
    const hooks = this.#beforeHead!;
    this.#beforeHead = null;
    const own = this.#out;
    this.#out = bag;
    for (const hook of hooks) {
      try {
        hook(status);
      } catch (err) {
        this.core.logs.write(
          'warn',
          { reqId: this.requestId(), err },
          `a beforeHead hook failed (ignored): ${(err as Error).message}`,
        );
      }
    }
    this.#out = own === null ? bag : own;
  }

  /** The OpenTelemetry context of the request's server span (fw/fetch calls made with this Ctx are its children); null when no tracer is registered. */
  traceContext(): Context | null {
    return this.telemetry === null ? null : this.telemetry.context;
  }

  /**
   * Aborted when the client goes away before the answer is finished, or the server shuts down.
   * On an idempotent route a client leaving does not abort it: the run finishes and its answer is
   * kept for the client's retry (a retry comes exactly when a client gave up).
   */
  get signal(): AbortSignal {
    // A lease past its limit aborts the signal here, before it is handed out (see `Lease`).
    if (this.#lease !== null) this.#lease.check();
    if (this.#abort === null) {
      const abort = (this.#abort = new AbortController());
      const shutdown = this.core.shutdown;
      const res = this.res;
      // The listener on the app-wide signal holds this request (its closure reaches the Ctx): it
      // must leave when the answer ends, however it ends, or every request that looked at its
      // signal stays in memory until the app stops. A run outliving its client leaves at its end.
      const onShutdown = () => abort.abort(shutdown.reason);
      const detach = () => shutdown.removeEventListener('abort', onShutdown);
      res.once('close', () => {
        if (this.capture) this.#detach = detach;
        else detach();
        if (!res.writableFinished && !this.capture) abort.abort(clientGone());
      });
      if (shutdown.aborted) abort.abort(shutdown.reason);
      else shutdown.addEventListener('abort', onShutdown, { once: true });
      if (this.#lease !== null) this.#watchLease(abort.signal);
    }
    return this.#abort.signal;
  }

  /**
   * @internal The claim's lease while an idempotent handler runs (null once it is over): reading
   * `signal`, its `aborted` or `throwIfAborted()` — on a signal kept from earlier too, and inside
   * libraries handed it — checks the lease first.
   */
  holdLease(lease: Lease | null): void {
    this.#lease = lease;
    if (lease !== null && this.#abort !== null) this.#watchLease(this.#abort.signal);
  }

  /** @internal Throws the signal's reason when the run's lease is lost (`c.step` asks before its function and its record). */
  throwIfLeaseLost(): void {
    const lease = this.#lease;
    if (lease !== null && !lease.check()) throw this.signal.reason;
  }

  /** Makes the signal's own `aborted` and `throwIfAborted` check the lease before they answer. */
  #watchLease(signal: AbortSignal): void {
    if (Object.hasOwn(signal, 'aborted')) return;
    const check = (): void => void this.#lease?.check();
    Object.defineProperty(signal, 'aborted', {
      configurable: true,
      get: () => (check(), ABORTED.call(signal)),
    });
    Object.defineProperty(signal, 'throwIfAborted', {
      configurable: true,
      value: () => (check(), THROW_IF_ABORTED.call(signal)),
    });
  }

  /**
   * The resolved value of a class with `static resolve(c)`, worked out once per request.
   * An async resolver must have been worked out already (as a handler parameter) or use `resolveAsync`.
   * @example by: (c) => c.resolve(Account).id
   */
  resolve<T>(type: Resolvable<T>): T {
    const v = this.resolving(type);
    if (isThenable(v)) {
      throw new HttpError(
        'NotResolved',
        `${nameOf(type)}.resolve is async and not worked out yet: ask for it as a handler parameter or await c.resolveAsync(${nameOf(type)})`,
      );
    }
    return v;
  }

  /** As `resolve`, for async resolvers. */
  async resolveAsync<T>(type: Resolvable<T>): Promise<T> {
    return this.resolving(type);
  }

  /** @internal the value, or the promise of it while an async resolver runs */
  resolving<T>(type: Resolvable<T>): T | Promise<T> {
    const map = (this.#resolved ??= new Map());
    if (map.has(type)) {
      const v = map.get(type);
      if (v === PENDING)
        throw new HttpError('NotResolved', `${nameOf(type)}.resolve asked for itself`);
      return v as T | Promise<T>;
    }
    map.set(type, PENDING);
    let v: T | Promise<T>;
    try {
      v = type.resolve(this);
    } catch (e) {
      map.delete(type);
      throw e;
    }
    if (isThenable(v)) {
      const p = Promise.resolve(v).then((value) => {
        map.set(type, value);
        return value;
      });
      map.set(type, p);
      return p;
    }
    map.set(type, v);
    return v;
  }

  // ---- answering

  /** The status sent, or 0 before anything is sent. Read-only: set as the answer's head goes out. */
  get status(): number {
    return this.#status;
  }

  /** @internal records a head written outside the Ctx (the WebSocket handshake's 101) */
  markSent(status: number): void {
    this.#status = status;
  }

  /** True once the answer's head has been sent. */
  get sent(): boolean {
    return this.#status !== 0;
  }

  /** Whether the connection stays open after this answer. */
  keepAlive(): boolean {
    return this.res.shouldKeepAlive && !this.core.stopping;
  }

  /**
   * Sets a response header. `Set-Cookie` and `Vary` add rather than replace; the framework's own
   * headers (`Content-Type`, `Content-Length`, `Transfer-Encoding`, `Connection`) are refused.
   */
  setHeader(name: string, value: string): void {
    if (this.#status !== 0)
      throw new HttpError('HeadersSent', `header "${name}" set after the answer was sent`);
    addHeader((this.#out ??= {}), checkHeader(name, value), value);
  }

  /**
   * The same call as `setHeader`: the spec's name for it (the value is copied either way in
   * JavaScript, so the two behave the same).
   */
  setStaticHeader(name: string, value: string): void {
    this.setHeader(name, value);
  }

  /** True when the request's `If-None-Match` holds the weak tag of this version (the tag `Versioned` sends). */
  clientHas(version: Version): boolean {
    return noneMatchHolds(this.header('if-none-match') ?? undefined, etagOf(version));
  }

  /**
   * Starts an answer sent in pieces with no known length (chunked). Never compressed.
   * @example const out = c.stream(200, 'text/plain'); await out.write('a'); out.end();
   */
  stream(status: number, contentType: string): BodyStream {
    return this.#startStream(status, contentType, null);
  }

  /** Starts an answer sent in pieces with a known length (`Content-Length`); writing more or less is an error that closes the connection. */
  streamWith(
    status: number,
    contentType: string,
    options: { readonly length: number },
  ): BodyStream {
    return this.#startStream(status, contentType, options.length);
  }

  #startStream(status: number, contentType: string, length: number | null): BodyStream {
    this.ownAnswer();
    if (!hasContent(status)) throw bodyNotAllowed(status, 'a stream');
    checkValue('content-type', contentType);
    if (this.#status !== 0)
      throw new HttpError(
        'AlreadySent',
        `a second answer (${status}) after ${this.#status} was sent`,
      );
    const bag = this.#out ?? (this.#out = {});
    bag['content-type'] = contentType;
    if (length !== null) bag['content-length'] = String(length);
    this.head(status, bag);
    this.core.release(this.res);
    return new BodyStream(this.res, length);
  }

  /**
   * Turns the answer into a server-sent event stream (`text/event-stream`, `Cache-Control: no-cache`):
   * never buffered (each event is written at once) and never compressed.
   * @example const events = c.events(); for (const n of [1, 2, 3]) await events.send({ data: { n } }); events.close();
   */
  events(): EventStream {
    this.ownAnswer();
    if (this.#status !== 0)
      throw new HttpError('AlreadySent', `an event stream after ${this.#status} was sent`);
    const bag = this.#out ?? (this.#out = {});
    bag['content-type'] = EVENT_STREAM;
    bag['cache-control'] = 'no-cache';
    bag['x-accel-buffering'] = 'no'; // proxies such as nginx would otherwise hold events back
    delete bag['content-encoding'];
    this.head(200, bag);
    this.res.flushHeaders?.();
    this.core.release(this.res);
    return new EventStream(this.res);
  }

  /**
   * Turns the connection into a WebSocket (a `@WebSocketRoute` route) and hands it, with `state`, to
   * `loop`. 400 when the request is not a WebSocket upgrade.
   * @example @WebSocketRoute('/ws/echo', { origins: '*' }) echo(c: Ctx) { c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null) }
   */
  upgrade<S>(loop: UpgradeLoop<S>, state: S): void {
    this.ownAnswer();
    this.core.upgrade(this, loop, state);
    this.core.release(this.res); // the socket is the WebSocket's now, for as long as it lives
  }

  /** A request cookie's value, or null. */
  cookie(name: string): string | null {
    return readCookie(this.header('cookie') ?? undefined, name);
  }

  /**
   * Sets a cookie (`Path=/; HttpOnly; SameSite=Lax` unless told otherwise). A value holding `;` or
   * a control byte is refused (500).
   * @example c.setCookie('theme', 'dark', { maxAgeSeconds: 86400, httpOnly: false })
   */
  setCookie(name: string, value: string, options: CookieOptions = {}): void {
    this.setHeader('set-cookie', serializeCookie(name, value, options));
  }

  /**
   * @internal Adds a header the framework built itself (already lower-case, already valid: an ETag
   * it made, a header of a kept answer checked when it was first sent), skipping the checks.
   */
  putHeader(key: string, value: string): void {
    addHeader((this.#out ??= {}), key, value);
  }

  /** A header set on this answer so far, or undefined. */
  sentHeader(name: string): string | string[] | undefined {
    return this.#out?.[name.toLowerCase()];
  }

  sendText(status: number, text: string): void {
    this.ownAnswer();
    this.write(status, TEXT_TYPE, text, null);
  }

  sendJson(status: number, value: unknown): void {
    this.ownAnswer();
    this.write(status, JSON_TYPE, JSON.stringify(spell(value)) ?? 'null', null);
  }

  /** Answers `status` with `bytes` under the caller's content type (ASCII only, as every header value). */
  send(status: number, contentType: string, bytes: Uint8Array | string): void {
    this.ownAnswer();
    checkValue('content-type', contentType);
    this.write(status, contentType, bytes, null);
  }

  /**
   * Sends a file (an open `FileHandle`, or a path) with ranges, `If-Range`, `If-None-Match` and HEAD
   * handled as for static files, and closes it on every way out: sent, failed, or the client gone.
   * @example @Get('/report') async report(c: Ctx) { return c.sendFile({ file: await open(path), contentType: 'text/csv' }) }
   */
  sendFile(options: SendFileOptions): Promise<void> {
    return this.core.sendFile(this, options);
  }

  /**
   * Answers `status` with no body: no `Content-Length` on 204 and 304 (RFC 9110 §8.6 forbids it on
   * a 204, and on a 304 it would have to be the representation's), `Content-Length: 0` on others
   * so the connection stays usable. The headers set so far go with it.
   * @example app.use((c, next) => (c.method === 'OPTIONS' ? c.empty(204) : next()))
   */
  empty(status: number): void {
    this.ownAnswer();
    if (!Number.isInteger(status) || status < 200 || status > 599)
      throw new HttpError(
        'BadStatus',
        `c.empty(${status}): the status of an answer is a whole number from 200 to 599`,
      );
    this.write(status, null, null, null);
  }

  /** A redirect decided at run time: `Location` and no body. */
  redirect(status: RedirectStatus, location: string): void {
    this.ownAnswer();
    if (!REDIRECT_STATUSES.includes(status))
      throw new HttpError(
        'BadRedirect',
        `redirect status ${status} is not one of 301, 302, 303, 307, 308`,
      );
    this.write(status, null, null, [{ name: 'location', value: location }]);
  }

  /**
   * @internal Aborts `signal` with `reason` while the handler runs on: an idempotent run whose claim
   * was lost (another instance may run the same request now), so the handler can stop its work.
   */
  abortRun(reason: Error): void {
    const signal = this.signal;
    if (!signal.aborted) this.#abort!.abort(reason);
  }

  /** @internal the idempotent run is over: what its answer is decided, the Ctx answers as usual */
  endCapture(): void {
    this.capture = false;
    if (this.#detach !== null) {
      this.#detach();
      this.#detach = null;
    }
  }

  /** @internal refuses answering through the Ctx where the answer must be kept (idempotent routes) */
  ownAnswer(): void {
    if (this.capture)
      throw new HttpError(
        'AlreadySent',
        'an idempotent route answers by returning a value, not through the Ctx',
      );
  }

  /**
   * @internal `write` for a text known to be ASCII: its length is its size in bytes, so it is not
   * counted again.
   */
  writeAscii(
    status: number,
    type: string | null,
    text: string,
    own: readonly HeaderEntry[] | null,
  ): void {
    const payload = this.#prepare(status, type, text, own);
    if (payload !== undefined) this.#send(status, payload, payload === text ? text.length : -1);
  }

  /**
   * @internal Writes a whole answer: status, content type (null: none), body (null: none) and the
   * answer's own headers. The one place buffered answers reach the wire.
   */
  write(
    status: number,
    type: string | null,
    body: Uint8Array | string | null,
    own: readonly HeaderEntry[] | null,
  ): void {
    const payload = this.#prepare(status, type, body, own);
    if (payload !== undefined) this.#send(status, payload, -1);
  }

  /**
   * Checks an answer and fills the head's headers (`#out`): what goes on the wire, compressed or
   * not (null: no body), or undefined when the answer is captured to be kept instead.
   */
  #prepare(
    status: number,
    type: string | null,
    body: Uint8Array | string | null,
    own: readonly HeaderEntry[] | null,
  ): Uint8Array | string | null | undefined {
    if (body !== null && !hasContent(status)) {
      if (body.length > 0) throw bodyNotAllowed(status, 'a body');
      body = null; // '' is no body: sent as one, with no Content-Length
    }
    if (this.capture) {
      if (this.captured !== null)
        throw new HttpError(
          'AlreadySent',
          `a second answer (${status}) after ${this.captured.status}`,
        );
      if (own !== null) for (const h of own) checkHeader(h.name, h.value);
      this.captured = { status, type, body, own };
      return undefined;
    }
    if (this.#status !== 0)
      throw new HttpError(
        'AlreadySent',
        `a second answer (${status}) after ${this.#status} was sent`,
      );
    const bag = this.#out ?? (this.#out = {});
    if (own !== null) for (const h of own) addHeader(bag, checkHeader(h.name, h.value), h.value);
    if (type !== null) bag['content-type'] = type;
    if (body !== null && type !== null && this.core.compress !== null)
      return this.core.compress(this, bag, type, body);
    return body;
  }

  /** Sends the head `#prepare` filled and the payload; `bytes` is its size when known, else -1. */
  #send(status: number, payload: Uint8Array | string | null, bytes: number): void {
    const bag = this.#out!;
    if (payload !== null)
      bag['content-length'] = String(
        typeof payload !== 'string'
          ? payload.length
          : bytes >= 0
            ? bytes
            : Buffer.byteLength(payload),
      );
    else if (hasLength(status)) bag['content-length'] = '0';
    this.head(status, bag);
    if (payload === null) this.res.end();
    else if (typeof payload === 'string' || payload.length > ONE_PIECE_BYTES) this.res.end(payload);
    else this.res.end(asLatin1(payload), 'latin1');
  }

  /** @internal Writes the head: the status, the bag, and the Connection rules of the spec. */
  head(status: number, bag: HeaderBag): void {
    if (this.#beforeHead !== null) this.#runBeforeHead(status, bag);
    const res = this.res;
    if (this.core.stopping) res.shouldKeepAlive = false;
    // Node writes `Connection: keep-alive` on every kept HTTP/1.1 answer; the spec sends nothing there.
    // (HTTP/1.0 clients being kept still get `keep-alive`; closing answers get `close`.)
    if (res.shouldKeepAlive && this.req.httpVersionMinor === 1) res.removeHeader('connection');
    // Whoever built the bag (a file's 304, a kept answer), a head without content has no length.
    if (!hasLength(status)) delete bag['content-length'];
    try {
      res.writeHead(status, bag);
    } catch (e) {
      throw this.#refusedHead(status, bag, e);
    }
    // Only now: a head Node refused was never sent, and the failure answer must still find room.
    this.#status = status;
  }

  /**
   * Node refused a head (a header value it cannot write, such as one with a control byte): nothing
   * reached the wire. Names the header, drops it so the failure answer can be written, and undoes
   * what `writeHead` set before it threw (the reason phrase; no body for 204/304/1xx).
   */
  #refusedHead(status: number, bag: HeaderBag, e: unknown): unknown {
    const res = this.res as ServerResponse & { _hasBody?: boolean };
    res.statusMessage = '';
    if (status === 204 || status === 304 || status < 200) res._hasBody = this.method !== 'HEAD';
    for (const key in bag) {
      const problem = headerProblem(key, bag[key]!);
      if (problem === null) continue;
      delete bag[key];
      if (this.#out !== null) delete this.#out[key];
      return problem;
    }
    return e;
  }

  /** @internal Writes a failure in the app's shape, keeping the headers set so far (CORS, WWW-Authenticate, X-Request-Id). */
  writeFailure(
    status: number,
    message: string,
    extra: HeaderBag | null,
    more: { readonly code: string; readonly details: FailureDetails | null } | null = null,
  ): void {
    const bag = this.#out ?? (this.#out = {});
    if (extra !== null) for (const k in extra) bag[k] = extra[k]!;
    const body = this.core.failureBody({
      status,
      message,
      code: more?.code ?? statusCode(status),
      details: more?.details ?? null,
      requestId: this.requestId(),
      path: this.path,
    });
    bag['content-type'] = this.core.failureType;
    bag['content-length'] = String(Buffer.byteLength(body));
    delete bag['content-encoding'];
    this.head(status, bag);
    this.res.end(body);
  }

  /** @internal the headers set on this answer so far (the bag the head will be written from), or null */
  headers(): HeaderBag | null {
    return this.#out;
  }
}

/** False for the statuses whose answers never carry content: 1xx, 204, 205, 304 (RFC 9110 §15). */
const hasContent = (status: number): boolean =>
  status >= 200 && status !== 204 && status !== 205 && status !== 304;

/**
 * False where `Content-Length` must not be written: 1xx and 204 (RFC 9110 §8.6), and 304, where it
 * could only repeat the representation's length, which fw does not send. A 205 has `0`.
 */
const hasLength = (status: number): boolean => status >= 200 && status !== 204 && status !== 304;

const bodyNotAllowed = (status: number, what: string): HttpError =>
  new HttpError(
    'BodyNotAllowed',
    `${what} with ${status}: a ${status} answer has no content: answer with c.empty(${status})`,
  );

/** @internal */
export function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return (
    typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'
  );
}

const nameOf = (type: unknown) => (typeof type === 'function' ? type.name : 'resolver');
