import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from '@opentelemetry/api';
import type { LogWriter } from '../core/log';
import type { HeaderEntry } from '../core/answers';
import { HttpError, clientGone, statusCode, type FailureDetails } from '../core/errors';
import type { FailureFacts, HeaderLines } from '../core/error-mapping';
import {
  addHeader,
  checkHeader,
  checkValue,
  headerProblem,
  type HeaderBag,
} from '../core/header-rules';
import { EVENT_STREAM } from '../core/media-types';
import { NO_VALUES } from '../core/router';
import { requestIdFor } from '../core/request-id';
import { BodyStream } from './body-stream';
import { EventStream } from './events';
import type { IdempotencyRun } from './idempotency-run';
import type { Lease } from './lease';
import { bufferedBody, readBody } from './read-body';
import { isMultipart, readUpload, type ReadUpload, type UploadPlan } from './read-upload';
import type { RouteInfo } from './route-info';
import type { SendFileOptions } from './send-file-options';
import type { UpgradeLoop } from './upgrade-loop';

// The engine's side of a request. A handler sees the `Ctx`, whose `#x` holds this object: nothing
// here is reachable through the Ctx's public members, and only fw's own layers import this module
// (no public door exports it). `exchange-of.ts` goes from one to the other.

/** What a request needs from its app; the App implements it. */
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
    | ((
        x: Exchange,
        bag: HeaderBag,
        type: string,
        body: Uint8Array | string,
      ) => Uint8Array | string)
    | null;
  /** Writes a line of the app's own (a `warning:` or `error:` prefix sets its level). */
  log(line: string): void;
  /** The app's log writer: pino-shaped lines with fields (the request log, failures). */
  readonly logs: LogWriter;
  stopping: boolean;
  readonly shutdown: AbortSignal;
  /** The one instance the app provides as `type` (`app.provide`), else undefined: `c.provided`. */
  provided(type: unknown): unknown;
  /** The largest body read whole (`c.body()`, `@Body`, an urlencoded `@Form`) where a route sets none (`App({ maxBodyBytes })`). */
  readonly bodyLimit: number;
  /** `new App({ trustProxy })` compiled: which hop may speak for the client; null trusts none. */
  readonly trustProxy: ((address: string, hop: number) => boolean) | null;
  /** Gives back the answer's in-flight slot (`maxRequestsInFlight`): a long stream or an upgraded socket holds none. */
  release(res: ServerResponse): void;
  // The features behind `c.sendFile` and `c.upgrade`, filled in by the app: the request layer sits
  // below every feature and names none of them.
  /** Sends a file as `c.sendFile` promises. */
  readonly sendFile: (x: Exchange, options: SendFileOptions) => Promise<void>;
  /** Completes `c.upgrade`: hands the admitted socket to the loop. */
  readonly upgrade: <S>(x: Exchange, loop: UpgradeLoop<S>, state: S) => void;
}

/**
 * What the app's telemetry keeps for one request: set on the exchange by the app only when a
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

/** An answer held back to be kept before it is sent (idempotent routes). */
export interface CapturedAnswer {
  readonly status: number;
  readonly type: string | null;
  readonly body: Uint8Array | string | null;
  readonly own: readonly HeaderEntry[] | null;
}

/** A failure answer's code and details, when it carries more than its status says. */
export interface FailureMore {
  readonly code: string;
  readonly details: FailureDetails | null;
}

/**
 * How fw reaches the exchange of a Ctx and opens a Ctx on an exchange: filled once, as the Ctx
 * class is defined (its `#x` is readable nowhere else). Use `exchange-of.ts`, which types them.
 */
export const faces = {
  exchangeOf: (_c: object): Exchange => {
    throw new Error('the Ctx class is not loaded');
  },
  open: (_x: Exchange): object => {
    throw new Error('the Ctx class is not loaded');
  },
};

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
 * One request as the engine sees it: the node objects, what routing found, the answer being
 * written (its status, its header bag, a capture in progress), the body as it is read, the
 * abort signal and an idempotent run's lease. Made as the request arrives, with its `Ctx`.
 */
export class Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly core: Core;
  /** The request's `Ctx` (typed by `ctxOf`): what handlers, middleware and capabilities get. */
  face: object | null = null;
  readonly method: string;
  /** The path as sent, without the query. */
  readonly path: string;
  /** The query string as sent, without `?` (empty when none). */
  readonly rawQuery: string;
  /** When the request arrived (performance.now()). */
  readonly startedAt: number;
  /** Raw `{name}` values in path order. */
  values: readonly string[] = NO_VALUES;
  /** The compiled route found before the middleware ran, for the app to serve. */
  matched: unknown = null;
  /** The route the request was matched to, or null (a static file, a 404): `c.route`. */
  route: RouteInfo | null = null;
  /** The status sent, or 0: written only as the head goes out (`head`, `markSent`). */
  status = 0;
  /** The headers set on this answer so far (the bag the head will be written from), or null. */
  out: HeaderBag | null = null;
  #id: string | null = null;
  #body: Promise<void> | null = null;
  #bodyBytes: Buffer | null = null;
  #abort: AbortController | null = null;
  /** The claim's lease while an idempotent handler runs on one (checked before its effects), else null. */
  #lease: Lease | null = null;
  /** Set while an idempotent handler runs: its answer is captured to be kept, and answering through the Ctx is refused. */
  capture = false;
  /** The answer captured while `capture` was set. */
  captured: CapturedAnswer | null = null;
  /** On an idempotent route: its run (`c.idempotency` is its public face). */
  idempotency: IdempotencyRun | null = null;
  /** The step names of a request that is not idempotent (a name used twice is refused). */
  stepNames: Set<string> | null = null;
  /** Set once the handler has returned its value (before the value is encoded). */
  handled = false;
  /** Set as the handler is called (its arguments read and valid): a failure after it is the handler's own. */
  invoked = false;
  /** What leaves the app-wide shutdown signal, kept while an idempotent run outlives its client. */
  #detach: (() => void) | null = null;
  /** An answer being written asynchronously (`sendFile`): the route's answer is this promise. */
  answering: Promise<void> | null = null;
  /** The request's telemetry, set by the app when a tracer or meter is registered. */
  telemetry: RequestTelemetry | null = null;
  /** The largest body read whole: the app's, or the route's `@BodyLimit`. */
  bodyLimit: number;
  /** The route's multipart form plan (a `@Form` class with `@FormFile` fields), set by its compiled route. */
  uploadPlan: UploadPlan | null = null;
  #upload: Promise<ReadUpload> | null = null;
  #beforeHead: ((status: number) => void)[] | null = null;

  /** Made as the request arrives: its target split at the first `?`, its time taken now. */
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

  /** The request's id: the proxy's `X-Request-Id` when it is valid, otherwise a generated one. */
  requestId(): string {
    return (this.#id ??= requestIdFor(this.req.headers['x-request-id']));
  }

  // ---- the body

  /**
   * The route's multipart form, read once into temp files and fields (the form argument and the
   * idempotency step share one reading).
   */
  readUpload(plan: UploadPlan): Promise<ReadUpload> {
    return (this.#upload ??= readUpload(this.req, this.res, plan));
  }

  /**
   * `then(body)` with what the idempotency fingerprint covers: the raw body, or for a multipart
   * upload route the digest its form reading took as the bytes passed (never held whole).
   */
  afterBodyPrint<T>(then: (body: Buffer) => T): T | Promise<T> {
    const plan = this.uploadPlan;
    if (plan !== null && isMultipart(this.req))
      return this.readUpload(plan).then((u) => then(Buffer.concat([UPLOAD_PRINT, u.digest])));
    return this.afterBody(then);
  }

  /**
   * The whole body when it is here: read already, or buffered in full in the request (it is taken
   * now). Null while it is still arriving: wait for `bodyReady()`. Throws 413 past the limit.
   */
  bodyNow(): Buffer | null {
    if (this.#bodyBytes === null && this.#body === null)
      this.#bodyBytes = bufferedBody(this.req, this.bodyLimit);
    return this.#bodyBytes;
  }

  /**
   * `then(body)` at once when the whole body is here, else once it is (a promise of its result).
   * The first wait is a single microtask that looks again (see `bodyReady`); the stream is read
   * only when the body is still not here then.
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

  /** The body read by `bodyReady()`: call it once that has settled. */
  get bodyBytes(): Buffer {
    return this.#bodyBytes!;
  }

  /**
   * Settles, with no value, once `bodyNow()` has the body. Readers wait on this rather than on a
   * promise of the Buffer: settling a promise with an object looks up `then` along its prototype
   * chain, which for a Buffer costs more than the rest of a replay's bookkeeping.
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

  // ---- the signal and an idempotent run's lease

  /** `c.signal`: made on first use, aborted when the client leaves or the server shuts down. */
  signal(): AbortSignal {
    // A lease past its limit aborts the signal here, before it is handed out (see `Lease`).
    if (this.#lease !== null) this.#lease.check();
    if (this.#abort === null) {
      const abort = (this.#abort = new AbortController());
      const shutdown = this.core.shutdown;
      const res = this.res;
      // The listener on the app-wide signal holds this request (its closure reaches it): it must
      // leave when the answer ends, however it ends, or every request that looked at its signal
      // stays in memory until the app stops. A run outliving its client leaves at its end.
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
   * The claim's lease while an idempotent handler runs (null once it is over): reading `signal`,
   * its `aborted` or `throwIfAborted()` — on a signal kept from earlier too, and inside libraries
   * handed it — checks the lease first.
   */
  holdLease(lease: Lease | null): void {
    this.#lease = lease;
    if (lease !== null && this.#abort !== null) this.#watchLease(this.#abort.signal);
  }

  /** Throws the signal's reason when the run's lease is lost (`c.step` asks before its function and its record). */
  throwIfLeaseLost(): void {
    const lease = this.#lease;
    if (lease !== null && !lease.check()) throw this.signal().reason;
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
   * Aborts `signal` with `reason` while the handler runs on: an idempotent run whose claim was
   * lost (another instance may run the same request now), so the handler can stop its work.
   */
  abortRun(reason: Error): void {
    const signal = this.signal();
    if (!signal.aborted) this.#abort!.abort(reason);
  }

  /** The idempotent run is over: what its answer is decided, the Ctx answers as usual. */
  endCapture(): void {
    this.capture = false;
    if (this.#detach !== null) {
      this.#detach();
      this.#detach = null;
    }
  }

  /**
   * Refuses an answer through the Ctx where the answer must be kept (idempotent routes): a stream,
   * an event stream, a file or an upgrade cannot be captured.
   */
  ownAnswer(): void {
    if (this.capture) throw answersByValue();
  }

  /**
   * Refuses a whole answer through the Ctx (`c.sendJson`, `c.empty` …) while an idempotent handler
   * runs: it answers by returning a value. Once it has returned, what writes that value (the
   * route's encoder, a capability's) may answer through the Ctx, and the answer is captured.
   */
  ownBufferedAnswer(): void {
    if (this.capture && !this.handled) throw answersByValue();
  }

  // ---- answering

  /** Runs `hook(status)` just before the answer's head is written (`c.beforeHead`). */
  beforeHead(hook: (status: number) => void): void {
    (this.#beforeHead ??= []).push(hook);
  }

  /**
   * Adds a header the framework built itself (already lower-case, already valid: an ETag it made,
   * a header of a kept answer checked when it was first sent), skipping the checks.
   */
  putHeader(key: string, value: string): void {
    addHeader((this.out ??= {}), key, value);
  }

  /** Records a head written outside the exchange (the WebSocket handshake's 101). */
  markSent(status: number): void {
    this.status = status;
  }

  /** Starts a streamed answer (`c.stream`, `c.streamWith`): chunked when `length` is null. */
  startStream(status: number, contentType: string, length: number | null): BodyStream {
    this.ownAnswer();
    if (!hasContent(status)) throw bodyNotAllowed(status, 'a stream');
    checkValue('content-type', contentType);
    if (this.status !== 0)
      throw new HttpError(
        'AlreadySent',
        `a second answer (${status}) after ${this.status} was sent`,
      );
    const bag = (this.out ??= {});
    bag['content-type'] = contentType;
    if (length !== null) bag['content-length'] = String(length);
    this.head(status, bag);
    this.core.release(this.res);
    return new BodyStream(this.res, length);
  }

  /** Starts a server-sent event stream (`c.events`). */
  startEvents(): EventStream {
    this.ownAnswer();
    if (this.status !== 0)
      throw new HttpError('AlreadySent', `an event stream after ${this.status} was sent`);
    const bag = (this.out ??= {});
    bag['content-type'] = EVENT_STREAM;
    bag['cache-control'] = 'no-cache';
    bag['x-accel-buffering'] = 'no'; // proxies such as nginx would otherwise hold events back
    delete bag['content-encoding'];
    this.head(200, bag);
    this.res.flushHeaders?.();
    this.core.release(this.res);
    return new EventStream(this.res);
  }

  /** `write` for a text known to be ASCII: its length is its size in bytes, so it is not counted again. */
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
   * Writes a whole answer: status, content type (null: none), body (null: none) and the answer's
   * own headers. The one place buffered answers reach the wire.
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
   * Checks an answer and fills the head's headers (`out`): what goes on the wire, compressed or
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
    if (this.status !== 0)
      throw new HttpError(
        'AlreadySent',
        `a second answer (${status}) after ${this.status} was sent`,
      );
    const bag = (this.out ??= {});
    if (own !== null) for (const h of own) addHeader(bag, checkHeader(h.name, h.value), h.value);
    if (type !== null) bag['content-type'] = type;
    if (body !== null && type !== null && this.core.compress !== null)
      return this.core.compress(this, bag, type, body);
    return body;
  }

  /** Sends the head `#prepare` filled and the payload; `bytes` is its size when known, else -1. */
  #send(status: number, payload: Uint8Array | string | null, bytes: number): void {
    const bag = this.out!;
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

  /** Writes the head: the status, the bag, and the Connection rules of the spec. */
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
    this.status = status;
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
      if (this.out !== null) delete this.out[key];
      return problem;
    }
    return e;
  }

  /** Runs the beforeHead hooks once, their headers going into the bag about to be written. */
  #runBeforeHead(status: number, bag: HeaderBag): void {
    const hooks = this.#beforeHead!;
    this.#beforeHead = null;
    const own = this.out;
    this.out = bag;
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
    this.out = own === null ? bag : own;
  }

  /** Writes a failure in the app's shape, keeping the headers set so far (CORS, WWW-Authenticate, X-Request-Id). */
  writeFailure(
    status: number,
    message: string,
    extra: HeaderBag | null,
    more: FailureMore | null = null,
  ): void {
    const bag = (this.out ??= {});
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
}

/** False for the statuses whose answers never carry content: 1xx, 204, 205, 304 (RFC 9110 §15). */
const hasContent = (status: number): boolean =>
  status >= 200 && status !== 204 && status !== 205 && status !== 304;

/**
 * False where `Content-Length` must not be written: 1xx and 204 (RFC 9110 §8.6), and 304, where it
 * could only repeat the representation's length, which fw does not send. A 205 has `0`.
 */
const hasLength = (status: number): boolean => status >= 200 && status !== 204 && status !== 304;

const answersByValue = (): HttpError =>
  new HttpError(
    'AlreadySent',
    'an idempotent route answers by returning a value, not through the Ctx',
  );

const bodyNotAllowed = (status: number, what: string): HttpError =>
  new HttpError(
    'BodyNotAllowed',
    `${what} with ${status}: a ${status} answer has no content: answer with c.empty(${status})`,
  );
