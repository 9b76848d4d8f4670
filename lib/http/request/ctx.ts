import type { SERVER_SIDE } from '../../fetch/server-side';
import type { Context } from '@opentelemetry/api';
import type { OutboundCall, Scope } from '../../fetch/scope';
import { REDIRECT_STATUSES, type RedirectStatus } from '../core/answers';
import { parseAuthorization, type Credentials } from '../core/authorization';
import { HttpError } from '../core/errors';
import { addHeader, checkHeader, checkValue } from '../core/header-rules';
import { JSON_TYPE, TEXT_TYPE } from '../core/media-types';
import { etagOf, noneMatchHolds, type Version } from '../core/etag';
import { RequestLog } from '../core/request-log';
import { clientOf, type ClientFacts } from '../core/trust-proxy';
import { isThenable } from '../core/thenable';
import { spell } from '../../json';
import { readCookie, serializeCookie, type CookieOptions } from '../core/cookies';
import type { BodyStream } from './body-stream';
import type { EventStream } from './events';
import { faces, type Exchange } from './exchange';
import type { SendFileOptions } from './send-file-options';
import type { UpgradeLoop } from './upgrade-loop';
import type { IdempotencyInfo } from './idempotency-info';
import { infoOf } from './idempotency-of';
import type { RouteInfo } from './route-info';
import { passOutside } from './outside-gate';
import { runStep } from './step';

export type { RouteInfo } from './route-info';

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

/**
 * The request context: what the request says and how to answer it. A handler gets it by declaring
 * a parameter of type `Ctx`. fw makes one per request; the engine's state behind it (the answer
 * being written, the body as it is read, an idempotent run's capture) is out of a program's reach.
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
  /** When the request arrived (performance.now()). */
  readonly startedAt: number;
  readonly #x: Exchange;
  #resolved: Map<unknown, unknown> | null = null;
  #search: URLSearchParams | null = null;
  #log: RequestLog | null = null;
  #client: ClientFacts | null = null;

  static {
    faces.exchangeOf = (c) => (c as Ctx).#x;
    faces.open = (x) => new Ctx(x);
  }

  /** Made by fw as a request arrives: a program never makes one. */
  private constructor(x: Exchange) {
    this.#x = x;
    this.method = x.method;
    this.path = x.path;
    this.rawQuery = x.rawQuery;
    this.startedAt = x.startedAt;
  }

  /**
   * On an idempotent route, while its handler runs: the normalised key, the caller, the space and
   * a fencing token (see `IdempotencyInfo`); null elsewhere.
   */
  get idempotency(): IdempotencyInfo | null {
    const run = this.#x.idempotency;
    return run === null ? null : infoOf(run);
  }

  /**
   * The route the request was matched to (template, controller, method), or null when no route
   * took it (a static file, a 404). Set before middleware runs.
   */
  get route(): RouteInfo | null {
    return this.#x.route;
  }

  /**
   * The derived `Idempotency-Key` of an outbound call (fw-http/fetch asks it), or null outside an
   * idempotent handler: see `IdempotencyInfo.outboundKey`.
   * @example const key = c.idempotencyKey({ target: 'bank', method: 'POST', template: '/charges' });
   */
  idempotencyKey(call: OutboundCall): string | null {
    const run = this.#x.idempotency;
    return run === null ? null : run.outboundKey(call);
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
    const x = this.#x;
    const run = x.idempotency;
    if (run === null) return runStep(null, (x.stepNames ??= new Set()), name, fn);
    // The step's outbound calls are counted within it: its derived keys move with no other call.
    return runStep(run.steps, run.stepNames, name, () => run.inStep(name, fn));
  }

  /**
   * Asked by `fw-http/fetch` as an outbound call is made: throws when the call may not go out now
   * (an atomic handler whose transaction is open, see the guide's "Atomic routes").
   */
  beforeCall(): void {
    passOutside(this, 'an outbound call');
  }

  /**
   * The one instance the app provides as `type` (`app.provide(instance)`, or `{ as: type }`), or
   * undefined when none is, or several are: what a resolver or middleware reads of the app's
   * services (a controller gets them by its constructor's parameter types).
   * @example static async resolve(c: Ctx) { return c.provided(Accounts)!.byToken(c.authorization('bearer').token) }
   */
  provided<T>(type: abstract new (...args: never[]) => T): T | undefined {
    return this.#x.core.provided(type) as T | undefined;
  }

  // ---- reading the request

  /** A request header, or `null` when absent (several lines of one name are joined with `, `). */
  header(name: string): string | null {
    const v = this.#x.req.headers[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }

  /**
   * The client's address: the socket's peer, or, behind proxies the app trusts
   * (`new App({ trustProxy })`), the first untrusted address of `Forwarded`/`X-Forwarded-For`.
   */
  get ip(): string {
    return this.#clientFacts().ip;
  }

  /** `https` when the connection is TLS, or a trusted proxy says the client's was; else `http`. */
  get protocol(): 'http' | 'https' {
    return this.#clientFacts().protocol;
  }

  /** The host the client asked for: `Host`, or what a trusted proxy forwarded (`X-Forwarded-Host`, `host=`). */
  get host(): string {
    return this.#clientFacts().host;
  }

  #clientFacts(): ClientFacts {
    return (this.#client ??= clientOf(this.#x.req, this.#x.core.trustProxy));
  }

  /** The parsed query string. */
  get query(): URLSearchParams {
    return (this.#search ??= new URLSearchParams(this.rawQuery));
  }

  /**
   * The raw request body, at most the body limit: 1 MiB unless `App({ maxBodyBytes })` or the route's
   * `@BodyLimit` say otherwise (413 beyond). Read once; later calls give the same bytes.
   */
  body(): Promise<Buffer> {
    const x = this.#x;
    return x.bodyReady().then(() => x.bodyBytes);
  }

  /**
   * The request body as it arrives, in pieces, refused (413) once it passes `maxBytes`.
   * @example for await (const chunk of c.bodyStream({ maxBytes: 10 << 20 })) hash.update(chunk);
   */
  async *bodyStream(options: { readonly maxBytes: number }): AsyncGenerator<Buffer> {
    const { req, res } = this.#x;
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.maxBytes) {
        res.shouldKeepAlive = false; // the rest of the body is never read
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
    return this.#x.requestId();
  }

  /**
   * The request's logger: the app's (fw's writer or the program's pino), each line carrying this
   * request's `reqId`.
   * @example c.log.info({ orderId }, 'order placed')
   */
  get log(): RequestLog {
    return (this.#log ??= new RequestLog(this.#x.core.logs, { reqId: this.requestId() }));
  }

  /**
   * Runs `hook(status)` just before the answer's head is written, whatever writes it (a handler's
   * value, a failure, a file, a stream): it may still set headers and read the status. Each hook
   * runs once; one that throws is logged and the answer goes on.
   * @example c.beforeHead((status) => c.setHeader('server-timing', `app;dur=${ms()}`))
   */
  beforeHead(hook: (status: number) => void): void {
    this.#x.beforeHead(hook);
  }

  /**
   * Runs `hook` once the answer is over: sent in full, or the connection gone first. It gets the
   * final status and the duration (for metrics and access logs; the answer can no longer change).
   */
  onFinished(hook: (finished: Finished) => void): void {
    const x = this.#x;
    const res = x.res;
    res.once('close', () => {
      const finished: Finished = {
        status: x.status,
        durationMs: performance.now() - this.startedAt,
        completed: res.writableFinished,
      };
      try {
        hook(finished);
      } catch (err) {
        x.core.logs.write(
          'warn',
          { reqId: this.requestId(), err },
          'a finished hook failed (ignored)',
        );
      }
    });
  }

  /** The OpenTelemetry context of the request's server span (fw/fetch calls made with this Ctx are its children); null when no tracer is registered. */
  traceContext(): Context | null {
    const t = this.#x.telemetry;
    return t === null ? null : t.context;
  }

  /**
   * Aborted when the client goes away before the answer is finished, or the server shuts down.
   * On an idempotent route a client leaving does not abort it: the run finishes and its answer is
   * kept for the client's retry (a retry comes exactly when a client gave up).
   */
  get signal(): AbortSignal {
    return this.#x.signal();
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

  /**
   * As `resolve`, for code that stays synchronous when it can (middleware, a capability's step):
   * the value at once when it is worked out already or its resolver is synchronous, else the
   * promise of it (the same one for every caller while the resolver runs).
   * @example const v = c.resolving(Account); return isPromise(v) ? v.then(check) : check(v);
   */
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
    return this.#x.status;
  }

  /** True once the answer's head has been sent. */
  get sent(): boolean {
    return this.#x.status !== 0;
  }

  /** Whether the connection stays open after this answer. */
  keepAlive(): boolean {
    return this.#x.res.shouldKeepAlive && !this.#x.core.stopping;
  }

  /**
   * Sets a response header. `Set-Cookie` and `Vary` add rather than replace; the framework's own
   * headers (`Content-Type`, `Content-Length`, `Transfer-Encoding`, `Connection`) are refused.
   */
  setHeader(name: string, value: string): void {
    const x = this.#x;
    if (x.status !== 0)
      throw new HttpError('HeadersSent', `header "${name}" set after the answer was sent`);
    addHeader((x.out ??= {}), checkHeader(name, value), value);
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
    return this.#x.startStream(status, contentType, null);
  }

  /** Starts an answer sent in pieces with a known length (`Content-Length`); writing more or less is an error that closes the connection. */
  streamWith(
    status: number,
    contentType: string,
    options: { readonly length: number },
  ): BodyStream {
    return this.#x.startStream(status, contentType, options.length);
  }

  /**
   * Turns the answer into a server-sent event stream (`text/event-stream`, `Cache-Control: no-cache`):
   * never buffered (each event is written at once) and never compressed.
   * @example const events = c.events(); for (const n of [1, 2, 3]) await events.send({ data: { n } }); events.close();
   */
  events(): EventStream {
    return this.#x.startEvents();
  }

  /**
   * Turns the connection into a WebSocket (a `@WebSocketRoute` route) and hands it, with `state`, to
   * `loop`. 400 when the request is not a WebSocket upgrade.
   * @example @WebSocketRoute('/ws/echo', { origins: '*' }) echo(c: Ctx) { c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null) }
   */
  upgrade<S>(loop: UpgradeLoop<S>, state: S): void {
    const x = this.#x;
    x.ownAnswer();
    x.core.upgrade(x, loop, state);
    x.core.release(x.res); // the socket is the WebSocket's now, for as long as it lives
  }

  /** A request cookie's value, or null. */
  cookie(name: string): string | null {
    return readCookie(this.header('cookie') ?? undefined, name);
  }

  /**
   * Sets a cookie (`Path=/; HttpOnly; SameSite=Lax` unless told otherwise), replacing one of the
   * same name set earlier on this answer (RFC 6265 §4.1.1: one `Set-Cookie` per name). A value
   * holding `;` or a control byte is refused (500).
   * @example c.setCookie('theme', 'dark', { maxAgeSeconds: 86400, httpOnly: false })
   */
  setCookie(name: string, value: string, options: CookieOptions = {}): void {
    const line = serializeCookie(name, value, options);
    const bag = this.#x.out;
    const earlier = bag?.['set-cookie'];
    if (earlier !== undefined && this.#x.status === 0) {
      const kept = (Array.isArray(earlier) ? earlier : [earlier]).filter(
        (l) => !l.startsWith(`${name}=`),
      );
      if (kept.length > 0) bag!['set-cookie'] = kept;
      else delete bag!['set-cookie'];
    }
    this.setHeader('set-cookie', line);
  }

  /** A header set on this answer so far, or undefined. */
  sentHeader(name: string): string | string[] | undefined {
    return this.#x.out?.[name.toLowerCase()];
  }

  sendText(status: number, text: string): void {
    const x = this.#x;
    x.ownBufferedAnswer();
    x.write(status, TEXT_TYPE, text, null);
  }

  sendJson(status: number, value: unknown): void {
    const x = this.#x;
    x.ownBufferedAnswer();
    x.write(status, JSON_TYPE, JSON.stringify(spell(value)) ?? 'null', null);
  }

  /** Answers `status` with `bytes` under the caller's content type (ASCII only, as every header value). */
  send(status: number, contentType: string, bytes: Uint8Array | string): void {
    const x = this.#x;
    x.ownBufferedAnswer();
    checkValue('content-type', contentType);
    x.write(status, contentType, bytes, null);
  }

  /**
   * Sends a file (an open `FileHandle`, or a path) with ranges, `If-Range`, `If-None-Match` and HEAD
   * handled as for static files, and closes it on every way out: sent, failed, or the client gone.
   * @example @Get('/report') async report(c: Ctx) { return c.sendFile({ file: await open(path), contentType: 'text/csv' }) }
   */
  sendFile(options: SendFileOptions): Promise<void> {
    const x = this.#x;
    return x.core.sendFile(x, options);
  }

  /**
   * Answers `status` with no body: no `Content-Length` on 204 and 304 (RFC 9110 §8.6 forbids it on
   * a 204, and on a 304 it would have to be the representation's), `Content-Length: 0` on others
   * so the connection stays usable. The headers set so far go with it.
   * @example app.use((c, next) => (c.method === 'OPTIONS' ? c.empty(204) : next()))
   */
  empty(status: number): void {
    const x = this.#x;
    x.ownBufferedAnswer();
    if (!Number.isInteger(status) || status < 200 || status > 599)
      throw new HttpError(
        'BadStatus',
        `c.empty(${status}): the status of an answer is a whole number from 200 to 599`,
      );
    x.write(status, null, null, null);
  }

  /** A redirect decided at run time: `Location` and no body. */
  redirect(status: RedirectStatus, location: string): void {
    const x = this.#x;
    x.ownBufferedAnswer();
    if (!REDIRECT_STATUSES.includes(status))
      throw new HttpError(
        'BadRedirect',
        `redirect status ${status} is not one of 301, 302, 303, 307, 308`,
      );
    x.write(status, null, null, [{ name: 'location', value: location }]);
  }
}

const nameOf = (type: unknown) => (typeof type === 'function' ? type.name : 'resolver');
