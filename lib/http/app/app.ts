import { setMaxListeners } from 'node:events';
import { createServer, type ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { outboundClientOf, type OutboundClient } from '../../fetch/outbound-client';
import { compileRoute, type CompiledRoute } from '../pipeline/compile-route';
import type { Ctx } from '../request/ctx';
import { isThenable } from '../core/thenable';
import type { Core, Exchange } from '../request/exchange';
import { ctxOf, exchangeOf, openCtx } from '../request/exchange-of';
import { bodyLimitOf } from '../request/read-body';
import type { UploadLimits } from '../request/uploaded-file';
import type {
  Capability,
  EncoderExtensions,
  Host,
  InjectedRequest,
  Middleware,
  Services,
} from '../route/extensions';
import type { VersionsOptions } from '../route/versions-options';
import { HttpError, RefusalError } from '../core/errors';
import { checkStores } from './check-stores';
import { compileTrust, type TrustProxySetting } from '../core/trust-proxy';
import {
  defaultFailureBody,
  failureBodyFor,
  mapError,
  phrase,
  writeRawFailure,
  type FailureShape,
} from '../core/error-mapping';
import type { JsonSchemaOf } from '../core/standard-schema';
import { InjectRequest, InjectResponse, type InjectResult } from './inject';
import { AppLog, LogSink } from './log-sink';
import { AppHost } from './app-host';
import type { LevelSetting, Logger } from '../core/log';
import type { RouteRecord } from '../route/route-record';
import { Router } from '../core/router';
import { JSON_TYPE } from '../core/media-types';
import { scan } from '../pipeline/scanner';
import { watchTimeouts } from './socket-timeouts';
import type { StallWatch } from '../core/stall-watch';
import type { RateStore } from '../../cache';
import type { AppTelemetry, BuiltIns, UpgradeSockets } from './built-ins';

export type { Middleware } from '../route/extensions';

/** How `app.provide(instance, options)` registers the instance. */
export interface ProvideOptions {
  /**
   * The key parameters ask for it with, `@Inject(key)`, instead of its class: for two instances of
   * one class. Any object: a Target or Space declaration, a class, a value of your own.
   */
  readonly as?: object;
}

export interface AppOptions {
  /** `info.title` of the API description. */
  readonly title?: string | undefined;
  /** `info.version` of the API description. */
  readonly version?: string | undefined;
  /**
   * Where log lines go (default: stdout, batched): each line is one JSON object in pino's shape.
   * Ignored when `logger` is given.
   */
  readonly log?: ((line: string) => void) | undefined;
  /**
   * A pino logger (or anything with pino's `debug/info/warn/error(obj, msg)` and `child`): fw's lines
   * are written through it, with the same fields. Default: fw's own writer, same shape.
   * @example new App({ logger: pino({ level: 'info' }) })
   */
  readonly logger?: Logger | undefined;
  /**
   * The least level written: `'debug'`, `'info'`, `'warn'`, `'error'` or `'silent'` (also `'trace'`
   * and `'fatal'`). Default: the `FW_LOG` environment variable, else `'info'`; `FW_LOG=warn` quiets
   * the request logger's lines (info) under test and keeps warnings and errors. An unknown name is
   * refused at build.
   * @example new App({ level: 'warn' })
   */
  readonly level?: LevelSetting | undefined;
  /**
   * What `listen()` does when the store of a provided space does not answer: `'warn'` (default)
   * logs an error with the cause and starts (idempotent routes answer 503 until it does);
   * `'refuse'` starts no socket and rejects with that error.
   */
  readonly storeCheck?: 'warn' | 'refuse' | undefined;
  /** The request head must arrive within this (408 otherwise). Default 10 s. */
  readonly headTimeoutMs?: number | undefined;
  /** The whole request (head and body) must arrive within this (408 otherwise). Default 30 s. */
  readonly requestTimeoutMs?: number | undefined;
  /** An idle kept connection is closed after this. Default 5 s. */
  readonly keepAliveTimeoutMs?: number | undefined;
  /** A request head larger than this is answered 431. Default 16 KiB. */
  readonly maxHeaderBytes?: number | undefined;
  /**
   * Header lines a request head may hold; more is answered 431 before routing (Node keeps only this
   * many in `req.headers`, while a later `Content-Length` would still frame the body). Default 1,000.
   */
  readonly maxHeaderCount?: number | undefined;
  /** How long `close()` waits for requests in flight before cancelling them. Default 10 s. */
  readonly closeGraceMs?: number | undefined;
  /**
   * Requests in flight at once; beyond it a request is shed: 503 with `Retry-After`, before routing.
   * Default: no bound. A long stream (`c.stream`, `c.streamWith`, `c.events`) or an upgraded socket
   * gives its slot back when it starts.
   */
  readonly maxRequestsInFlight?: number | undefined;
  /**
   * An answer whose bytes make no progress to the client for this long (a client that stopped
   * reading) loses its connection, which frees its slot and its file. Default 60 s (nginx's
   * `send_timeout`); 0: none.
   */
  readonly writeTimeoutMs?: number | undefined;
  /**
   * A connection on which nothing is read or written for this long while a request is under way
   * (a silent handler, a quiet event stream) is closed. Default 120 s; 0: none. Between requests
   * `keepAliveTimeoutMs` applies.
   */
  readonly idleTimeoutMs?: number | undefined;
  /** Parameters a query string or form body may hold where fw reads it (`@Query`, `@Form`); past it → 400 `TooManyParams`. Default 10,000. */
  readonly maxParams?: number | undefined;
  /**
   * The largest request body read whole (`c.body()`, `@Body()`, an urlencoded `@Form()`, the
   * idempotency fingerprint) on a route without `@BodyLimit`; past it → 413. Default 1 MiB.
   */
  readonly maxBodyBytes?: number | undefined;
  /**
   * Limits of multipart forms (`@Form()` classes with `@FormFile()` fields), each past its value a 413
   * naming it, and where temp files go. A route's `@Form({ … })` overrides them.
   * @example new App({ uploads: { maxFileBytes: 50 << 20, tmpDir: '/var/tmp/uploads' } })
   */
  readonly uploads?: Partial<UploadLimits> | undefined;
  /** Levels of nested objects and arrays a `@Body()` class is read to; past it → 400 `NestedTooDeep` naming the path. Default 64. */
  readonly maxDepth?: number | undefined;
  /**
   * Where `@RateLimit` routes count: a `RedisStore` (the one idempotency uses will do) gives one
   * allowance across every instance sharing it. Default: none, each route counts in this process.
   * @example new App({ rateStore: new RedisStore({ url: process.env.REDIS_URL! }) })
   */
  readonly rateStore?: RateStore | undefined;
  /**
   * How `@ApiVersion` routes are told apart: `{ by: 'uri' }` serves them under `/v{version}/…`,
   * `{ by: 'header' }` at their own path by the request's `Accept-Version` (`header`), a request
   * without it getting `default` (else the highest version declared). Default: none, and a
   * `@ApiVersion` route is refused.
   */
  readonly versions?: VersionsOptions | undefined;
  /**
   * Proxies trusted to say who the client is: a hop count, addresses and CIDR ranges (or
   * `loopback`, `linklocal`, `uniquelocal`), a function `(address, hop) => boolean`, or `true`.
   * `c.ip`, `c.protocol`, `c.host`, rate limits and the request log then read `Forwarded` /
   * `X-Forwarded-*` through the trusted hops only. Default: none (the socket's peer is the client).
   * @example new App({ trustProxy: 1 }) · new App({ trustProxy: ['10.0.0.0/8'] })
   */
  readonly trustProxy?: TrustProxySetting | undefined;
  /**
   * Log (warn) each field an answer leaves out because its `@Returns` class does not declare it,
   * once per route and field. Default: on unless `NODE_ENV` is `production`; the field is left out
   * either way.
   */
  readonly logDroppedFields?: boolean | undefined;
  /**
   * The JSON Schema of a Standard Schema whose library offers none of its own (valibot 1): used for
   * its document and to convert `@Query(schema)` values. zod 4 and arktype need none.
   * @example import { toJsonSchema } from '@valibot/to-json-schema'; new App({ jsonSchemaOf: (s) => toJsonSchema(s as never) })
   */
  readonly jsonSchemaOf?: JsonSchemaOf | undefined;
}

/**
 * An fw application: controllers, services, middleware and capabilities, scanned once into
 * compiled routes. It names no feature: fw's own come in as `BuiltIns`, and the `App` a program
 * imports (defaults.ts) is this one with them wired in and the shortcuts (`app.health()` …).
 */
export class App {
  readonly options: AppOptions;
  readonly #controllers: Function[] = [];
  /** Each type (class, base class or `as` key) with the instances provided as it, in order. */
  readonly #services = new Map<unknown, unknown[]>();
  readonly #provided: unknown[] = [];
  /** What checks and steps see of the services, by type. */
  readonly #lookup: Services = {
    get: (t) => {
      const all = this.#services.get(t);
      return all?.length === 1 ? all[0] : undefined;
    },
    has: (t) => this.#services.has(t),
    of: (t) => this.#services.get(t) ?? [],
    all: () => this.#provided,
  };
  readonly #middleware: Middleware[] = [];
  readonly #builtIns: { record: RouteRecord; instance: object }[] = [];
  #failureShape: FailureShape | null = null;
  #router: Router<CompiledRoute> | null = null;
  #records: readonly RouteRecord[] = [];
  #server: Server | null = null;
  #chain: ((c: Ctx) => unknown) | null = null;
  readonly #shutdown = shutdownController();
  readonly #logs: AppLog;
  readonly #errorObservers: ((err: unknown, info: ErrorInfo) => unknown)[] = [];
  readonly #atBuild: ((problems: string[]) => void)[] = [];
  readonly #afterBuild: ((host: Host) => void)[] = [];
  /** True once the app was built (by build(), inject(), document() or server): configuring is over. */
  #sealed = false;
  #clientsStarted = false;
  readonly #fallbacks: ((c: Ctx) => unknown)[] = [];
  #defaultVersion: string | null = null;
  readonly #onClose: (() => unknown)[] = [];
  /** Answers holding an in-flight slot (only counted with `maxRequestsInFlight`). */
  readonly #inFlight = new Set<ServerResponse>();
  readonly #leaveInFlight: (this: ServerResponse) => void;
  readonly #shedAt: number;
  /** `rawHeaders` entries (two per header line) a request may hold. */
  readonly #maxRawHeaders: number;
  readonly #core: Core;
  /** fw's own features, handed in (the app names none of them). */
  readonly #fw: BuiltIns;
  /** fw's capabilities, then the program's, in the order their steps wrap a handler. */
  readonly #capabilities: Capability[];
  /** The app as its capabilities see it. */
  readonly #host: AppHost;
  readonly #upgrades: UpgradeSockets;
  /** Spans and metrics, resolved at build: null while no OpenTelemetry SDK is registered. */
  #telemetry: AppTelemetry | null = null;
  /** Cuts connections whose answers stopped leaving (`writeTimeoutMs`), upgraded ones included. */
  #stalls: StallWatch | null = null;

  /**
   * `builtIns` is fw's own features (defaults.ts); the `App` a program imports passes them, so a
   * program calls `new App(options)`.
   */
  constructor(options: AppOptions, builtIns: BuiltIns) {
    this.options = options;
    this.#fw = builtIns;
    this.#upgrades = builtIns.upgrades();
    for (const [key, service] of builtIns.services(options)) this.#services.set(key, [service]);
    this.#shedAt = options.maxRequestsInFlight ?? 0;
    this.#maxRawHeaders = 2 * (options.maxHeaderCount ?? 1_000);
    const inFlight = this.#inFlight;
    // One listener for every answer ('close' calls it with the answer as `this`): no closure per request.
    this.#leaveInFlight = function (this: ServerResponse) {
      inFlight.delete(this);
    };
    const sink = new LogSink(
      options.log
        ? (text) =>
            text
              .slice(0, -1)
              .split('\n')
              .forEach((l) => options.log!(l))
        : undefined,
    );
    this.#logs = new AppLog(sink, options);
    const levelProblem = this.#logs.problem;
    if (levelProblem !== null) this.#atBuild.push((problems) => problems.push(levelProblem));
    // Plain data fields, written by the app when they change: the request path reads them on every
    // answer, and a getter there is a call where a field is a load.
    this.#core = {
      failureBody: defaultFailureBody,
      earlyHeaders: [],
      failureType: JSON_TYPE,
      sendFile: (x, options) => builtIns.sendFile(ctxOf(x), options),
      upgrade: (x, loop, state) => builtIns.upgrade(ctxOf(x), loop, state),
      compress: null,
      log: (line) => this.#logs.line(line),
      logs: this.#logs,
      stopping: false,
      shutdown: this.#shutdown.signal,
      provided: (type) => this.#lookup.get(type),
      bodyLimit: bodyLimitOf(options.maxBodyBytes, 'App({ maxBodyBytes })'),
      trustProxy:
        options.trustProxy === undefined || options.trustProxy === false
          ? null
          : compileTrust(options.trustProxy),
      release: (res) => void inFlight.delete(res),
    };
    this.#capabilities = [];
    this.#host = new AppHost(this, {
      builtIns: this.#builtIns,
      atBuild: this.#atBuild,
      afterBuild: this.#afterBuild,
      fallbacks: this.#fallbacks,
      capabilities: this.#capabilities,
      core: this.#core,
    });
    for (const capability of builtIns.capabilities) this.#add(capability);
  }

  /** Registers controller classes; each is constructed once, with its constructor parameters filled by type. */
  controllers(...classes: Function[]): this {
    this.configuring('controllers');
    this.#controllers.push(...classes);
    return this;
  }

  /**
   * Registers a service: constructor and handler parameters of its type (or a base class of it) get
   * this instance; with `as`, only parameters marked `@Inject(as)` do. A parameter that two provided
   * instances would fill is refused at build, naming both.
   * @example app.provide(db) · app.provide(Bank.open(client, { base }), { as: Bank })
   */
  provide(instance: object, options: ProvideOptions = {}): this {
    this.configuring('provide');
    if (!this.#provided.includes(instance)) this.#provided.push(instance);
    const keys: unknown[] = [];
    if (options.as !== undefined) keys.push(options.as);
    else
      for (
        let p = Object.getPrototypeOf(instance);
        p && p !== Object.prototype;
        p = Object.getPrototypeOf(p)
      )
        keys.push(p.constructor);
    for (const key of keys) {
      const all = this.#services.get(key);
      if (all === undefined) this.#services.set(key, [instance]);
      else if (!all.includes(instance)) all.push(instance);
    }
    return this;
  }

  /**
   * Adds middleware (a function) around every route, static tree and framework answer, or a
   * capability (an object): its checks, steps around routes and OpenAPI additions apply to every
   * route, and its `register` adds app-level pieces at once. A program's capabilities wrap inside
   * fw's own, the first added outermost.
   * @example app.use(logger) · app.use(new AuditTrail())
   */
  use(piece: Middleware | Capability): this {
    this.configuring('use');
    if (typeof piece !== 'function') return this.#add(piece);
    // A class given for its instance would be called as middleware and fail every request.
    if (/^class\b/.test(Function.prototype.toString.call(piece)))
      throw new TypeError(
        `app.use(${piece.name}): a class, not middleware or a capability: give an instance (app.use(new ${piece.name}()))`,
      );
    this.#middleware.push(piece);
    const early = this.#fw.earlyHeaders(piece);
    if (early !== undefined) this.#core.earlyHeaders = early;
    return this;
  }

  /** Adds a capability: registered first, so that one whose options are wrong is not kept. */
  #add(capability: Capability): this {
    if (typeof capability !== 'object' || capability === null)
      throw new TypeError(
        `app.use() takes a middleware function or a capability object, got ${capability === null ? 'null' : typeof capability}`,
      );
    if (this.#capabilities.includes(capability))
      throw new TypeError(
        `app.use(): capability ${capability.name ?? '(unnamed)'} was already added to this app`,
      );
    capability.register?.(this.#host);
    this.#capabilities.push(capability);
    return this;
  }

  /** Replaces the failure body with the program's own shape. */
  failures(shape: FailureShape): this {
    this.configuring('failures');
    this.#failureShape = shape;
    return this;
  }

  /** The class given to `app.failures(T)`, or null for the default `{ error, status }`. */
  get failureShape(): FailureShape | null {
    return this.#failureShape;
  }

  /** Runs `fn` at the end of `close()`, after requests in flight are done (to close stores, say). */
  onClose(fn: () => unknown): this {
    this.#onClose.push(fn);
    return this;
  }

  /**
   * Refuses configuring once the app is built, naming the call (`app.health()`): configuration
   * is read once, at the first build, so a later call would be silently ignored. For a subclass
   * whose shortcuts add capabilities (as fw's own `App` adds `health`, `openapi` …).
   * @example health(): this { this.configuring('health'); return this.use(healthRoute()); }
   */
  protected configuring(call: string): void {
    if (this.#sealed)
      throw new RefusalError([
        `app.${call}() called after the app was built (by build(), inject(), document(), listen() or server): configure the app before any of those`,
      ]);
  }

  /** The app as its capabilities see it (`register(host)`): for a subclass whose shortcuts need it. */
  protected get host(): Host {
    return this.#host;
  }

  /** With `versions: { by: 'header' }`, the version a request without the header gets (after `build()`). */
  get defaultVersion(): string | null {
    return this.#defaultVersion;
  }

  /** The route records the app serves (and describes), after `build()`. */
  get routes(): readonly RouteRecord[] {
    return this.#records;
  }

  /** Everything provided, in order. */
  get provided(): readonly unknown[] {
    return this.#provided;
  }

  /** True once `close()` has begun. */
  get stopping(): boolean {
    return this.#core.stopping;
  }

  /** Writes one line to the app's log (level info; `warn` for a `warning:` prefix, `error` for `error:`). */
  log(line: string): void {
    this.#logs.line(line);
  }

  /**
   * Calls `observer` for every error fw logs (every thrown value but a plain `fail.*`), with the
   * route, the request id, the status sent and whether the answer had already started: the place to
   * plug in Sentry or similar. An observer that throws (or rejects) is logged and ignored.
   * @example app.onError((err, { route, requestId, status }) => Sentry.captureException(err, { tags: { route, requestId, status } }))
   */
  onError(observer: (err: unknown, info: ErrorInfo) => unknown): this {
    this.#errorObservers.push(observer);
    return this;
  }

  /** Where an undeclared field left out of an answer is told, or null: not looked for. */
  #droppedFields(): ((label: string, field: string) => void) | null {
    if (!(this.options.logDroppedFields ?? process.env.NODE_ENV !== 'production')) return null;
    return (label, field) =>
      this.log(
        `warning: ${label}: left ${field} out of the answer: its @Returns class does not declare it`,
      );
  }

  /**
   * Scans, checks and compiles every route, without opening a socket. Throws one `RefusalError`
   * listing every declaration problem. Runs once; later calls return at once.
   */
  build(): this {
    if (this.#router) return this;
    const problems: string[] = [];
    const services = this.#lookup;
    const capabilities = this.#capabilities;
    const checks = capabilities.flatMap((c) => c.checks ?? []);
    const { records, instances } = scan(this.#controllers, services, checks, problems);
    const router = new Router<CompiledRoute>();
    const encoders = encodersOf(capabilities, problems);
    const options = {
      encoders,
      arounds: capabilities.flatMap((c) => c.arounds ?? []),
      services,
      reading: this.options,
      dropped: this.#droppedFields(),
    };
    const versions = this.options.versions;
    const routing = this.#fw.versions;
    const all = [
      ...routing.records(records, versions, problems).map((r) => ({
        record: r,
        instance: instances.get(r.controller),
      })),
      ...this.#builtIns,
    ];
    const served = this.#compileAll(all, options, problems);
    const defaultVersion = routing.defaultOf(
      all.map((a) => a.record),
      versions,
    );
    this.#defaultVersion = defaultVersion;
    for (const routes of served.values()) {
      const route = routing.dispatch(routes, versions, defaultVersion);
      router.add(route.record.method, route.record.path, route);
    }
    for (const fn of this.#atBuild) fn(problems);
    if (problems.length) throw new RefusalError(problems);
    router.seal();
    this.#router = router;
    this.#records = Object.freeze(all.map((a) => a.record));
    const shape = failureBodyFor(this.#failureShape);
    this.#core.failureBody = shape;
    this.#core.failureType = this.#failureShape?.contentType ?? JSON_TYPE;
    this.#chain = this.#middleware.length ? this.#compose() : null;
    this.#telemetry = this.#fw.telemetry(this.#provided);
    try {
      for (const fn of this.#afterBuild) fn(this.#host);
    } catch (e) {
      this.#router = null; // not built: a later build() or listen() meets the same error
      throw e;
    }
    this.#sealed = true;
    if (all.length === 0 && this.#fallbacks.length === 0) this.#warnEmpty();
    return this;
  }

  /**
   * Compiles each route, grouped by method and path (two versions of one path under the header
   * strategy are one group); a duplicate or a route that does not compile is one more problem.
   */
  #compileAll(
    all: readonly { record: RouteRecord; instance: object | undefined }[],
    options: Parameters<typeof compileRoute>[2],
    problems: string[],
  ): Map<string, CompiledRoute[]> {
    const versions = this.options.versions;
    const taken = new Map<string, string>();
    const served = new Map<string, CompiledRoute[]>();
    for (const { record, instance } of all) {
      const key = this.#fw.versions.key(record, versions);
      const other = taken.get(key);
      if (other !== undefined) {
        problems.push(
          `${record.label}: duplicate route: ${record.method} ${record.path} is also declared by ${other}`,
        );
        continue;
      }
      taken.set(key, record.label);
      if (!instance || problems.length) continue;
      try {
        const route = compileRoute(record, instance, options);
        const at = `${record.method} ${record.path.replace(/\{[^}]*\}/g, '{}')}`;
        served.set(at, [...(served.get(at) ?? []), route]);
      } catch (e) {
        problems.push(e instanceof Error ? e.message : String(e));
      }
    }
    return served;
  }

  /** Not a Refusal: middleware alone may answer everything (a proxy, a test of a middleware). */
  #warnEmpty(): void {
    this.#logs.line(
      'warning: the app has no routes, static trees or built-in routes: every request no middleware answers is 404 (was app.controllers(...) left out, or a controller without @Get/@Post?)',
    );
  }

  /** The `http.Server` (created by `build()`), for socket-level work. */
  get server(): Server {
    this.build();
    return (this.#server ??= this.#createServer());
  }

  /** Builds, starts provided clients, and listens. Returns the bound address. */
  async listen(
    options: { host?: string; port?: number } = {},
  ): Promise<{ host: string; port: number; url: string }> {
    const server = this.server;
    this.#startClients();
    const down = await checkStores(this.#provided, (line) => this.#logs.line(line));
    if (down.length > 0 && this.options.storeCheck === 'refuse')
      throw new HttpError(
        'StoreUnavailable',
        `listen refused (storeCheck: 'refuse'): ${down.join('; ')}`,
      );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const a = server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return { host: a.address, port: a.port, url: `http://${host}:${a.port}` };
  }

  /**
   * Stops accepting connections and lets requests in flight finish (up to `closeGraceMs`), then
   * cancels what is left and stops provided clients.
   */
  async close(): Promise<void> {
    if (this.#core.stopping) return;
    this.#core.stopping = true;
    const upgraded = this.#upgrades.closeAll(this.#shutdown.signal);
    const server = this.#server;
    if (server?.listening) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const within = async (ms: number) => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          closed,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
        ]);
        clearTimeout(timer);
      };
      await within(this.options.closeGraceMs ?? 10_000);
      // Cancel what is still waiting (503 Canceled), give those answers a moment to leave, then cut.
      this.#shutdown.abort(shuttingDown());
      await within(1_000);
      server.closeAllConnections();
      await closed;
    } else this.#shutdown.abort(shuttingDown());
    await upgraded;
    this.#stalls?.stop();
    for (const client of this.#clients()) await client.close();
    for (const fn of this.#onClose) await fn();
    this.#logs.flush();
  }

  /** Sends a request through the whole pipeline (routing, middleware, failures, idempotency) without a socket. */
  inject(options: InjectedRequest): Promise<InjectResult> {
    this.build();
    if (!this.#core.stopping) this.#startClients();
    const req = new InjectRequest(options);
    const res = new InjectResponse(req.method);
    this.#dispatch(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    return res.done;
  }

  /** The outbound clients the app starts and closes: those provided, and those of provided targets. */
  #clients(): Set<OutboundClient> {
    const clients = new Set<OutboundClient>();
    for (const s of this.#provided) {
      const client = outboundClientOf(s);
      if (client !== null) clients.add(client);
    }
    return clients;
  }

  /** Starts every client not started yet (listen, and the first inject: a route calling out just works). */
  #startClients(): void {
    if (this.#clientsStarted) return;
    this.#clientsStarted = true;
    for (const client of this.#clients()) if (!client.started) client.start();
  }

  #createServer(): Server {
    const o = this.options;
    const requestMs = o.requestTimeoutMs ?? 30_000;
    // The head is part of the request: a head deadline past the request's would make Node throw at
    // listen, so a short requestTimeoutMs shortens the head's too (0 turns the request's off).
    const headMs =
      requestMs > 0 ? Math.min(o.headTimeoutMs ?? 10_000, requestMs) : (o.headTimeoutMs ?? 10_000);
    const server = createServer(
      {
        maxHeaderSize: o.maxHeaderBytes ?? 16 * 1024,
        headersTimeout: headMs,
        requestTimeout: requestMs,
        keepAliveTimeout: o.keepAliveTimeoutMs ?? 5_000,
        connectionsCheckingInterval: Math.min(1_000, headMs),
      },
      this.#dispatch,
    );
    server.maxHeadersCount = this.#maxRawHeaders / 2;
    this.#stalls = watchTimeouts(server, o.writeTimeoutMs ?? 60_000, o.idleTimeoutMs ?? 120_000);
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
      this.#beforeRouting(err, socket),
    );
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#upgrade(req, socket, head),
    );
    return server;
  }

  /**
   * A request asking to upgrade its connection (node hands every one here, with its raw socket).
   * On a `@WebSocketRoute` route the handshake is checked and the request runs through the pipeline
   * like any other: a refusal (400/403) is a routed answer, an admitted handshake's handler calls
   * `c.upgrade()`. Elsewhere the Upgrade header is ignored and the request, body and all, served as
   * ordinary HTTP on a connection that closes after the answer. The socket is tracked until it closes.
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const route =
      req.method === 'GET'
        ? this.#router!.find(q === -1 ? url : url.slice(0, q))?.methods.get('GET')
        : undefined;
    const o = this.options;
    const framing = badFraming(req, this.#maxRawHeaders);
    if (framing !== null) {
      socket.on('error', () => socket.destroy());
      writeRawFailure(socket as Socket, framing.status, framing.message, this.#core.earlyHeaders);
      setTimeout(() => socket.destroy(), o.keepAliveTimeoutMs ?? 5_000).unref();
      return;
    }
    const served = this.#upgrades.take(req, socket as Socket, head, {
      bodyMs: o.requestTimeoutMs ?? 30_000,
      lingerMs: o.keepAliveTimeoutMs ?? 5_000,
      idleMs: o.idleTimeoutMs ?? 120_000,
      early: this.#core.earlyHeaders,
      mark: route?.record.marks.get(this.#fw.upgradeMark) ?? null,
    });
    if (served !== null) this.#dispatch(served.req, served.res);
  }

  /** Answers written before a request could be routed keep the default shape and close the connection. */
  #beforeRouting(err: NodeJS.ErrnoException, socket: Socket): void {
    // A pipelined request that node cannot parse while an answer on the socket is under way: a
    // raw answer would land inside that one's body (an event stream's chunks). Before its head is
    // sent the raw answer is that request's own (a body that stopped arriving: 408).
    const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (
      !socket.writable ||
      current?.headersSent === true ||
      err.code === 'ECONNRESET' ||
      err.code === 'EPIPE'
    ) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 408
          : 400;
    writeRawFailure(socket, status, phrase(status), this.#core.earlyHeaders);
  }

  readonly #dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    const framing = badFraming(req, this.#maxRawHeaders);
    if (framing !== null) {
      this.#refuseEarly(res, framing.status, framing.message);
      return;
    }
    // RFC 9112 §6.1: a Transfer-Encoding in an HTTP/1.0 request may have been framed wrongly on the
    // way: the connection is closed after the answer.
    if (req.httpVersionMinor === 0 && req.headers['transfer-encoding'] !== undefined)
      res.shouldKeepAlive = false;
    if (this.#shedAt !== 0 && this.#shed(res)) {
      if (this.#telemetry !== null) this.#telemetry.shed(req);
      return;
    }
    const c = openCtx(req, res, this.#core);
    if (this.#telemetry !== null) {
      const traced = this.#telemetry.begin(c);
      if (traced !== null) {
        this.#fw.traced(traced, this.#serve, c);
        return;
      }
    }
    this.#serve(c);
  };

  /** Runs the middleware chain and the route (under the request's trace context when tracing). */
  readonly #serve = (c: Ctx): void => {
    if (this.#chain === null) {
      this.#terminal(c);
      return;
    }
    // Routed before the middleware runs, so that middleware sees `c.route`.
    const x = exchangeOf(c);
    const route = this.#find(c, x);
    if (route !== undefined) {
      x.matched = route;
      x.route = route.info;
    }
    try {
      const p = this.#chain(c);
      if (isThenable(p))
        p.then(undefined, (e: unknown) => this.#failed(c, e, `${c.method} ${c.path}`));
    } catch (e) {
      this.#failed(c, e, `${c.method} ${c.path}`);
    }
  };

  /** An answer before routing: the default failure shape, and the connection closes after it. */
  #refuseEarly(res: ServerResponse, status: number, message: string): void {
    const body = defaultFailureBody({ status, message });
    res.shouldKeepAlive = false;
    res.writeHead(status, {
      'content-type': JSON_TYPE,
      'content-length': String(Buffer.byteLength(body)),
      ...(status === 503 ? { 'retry-after': '1' } : {}),
      ...Object.fromEntries(this.#core.earlyHeaders),
    });
    res.end(body);
  }

  /** Sheds a request past `maxRequestsInFlight` (default failure shape, like every answer written before routing). */
  #shed(res: ServerResponse): boolean {
    if (this.#inFlight.size >= this.#shedAt) {
      this.#refuseEarly(res, 503, 'server busy');
      return true;
    }
    this.#inFlight.add(res);
    res.on('close', this.#leaveInFlight);
    return false;
  }

  #compose(): (c: Ctx) => unknown {
    let chain = (c: Ctx): unknown => this.#terminal(c);
    for (const mw of [...this.#middleware].reverse()) {
      const next = chain;
      chain = (c) =>
        mw(c, () => {
          try {
            return Promise.resolve(next(c)) as Promise<void>;
          } catch (e) {
            return Promise.reject(e);
          }
        });
    }
    return chain;
  }

  /** Routes one request and answers it; failures become failure answers here, inside the middleware chain. */
  /** The route of a request (its path values set on `c`), or undefined when none answers its method. */
  #find(c: Ctx, x: Exchange): CompiledRoute | undefined {
    const match = this.#router!.find(c.path);
    const route =
      match?.methods.get(c.method) ?? (c.method === 'HEAD' ? match?.methods.get('GET') : undefined);
    if (route !== undefined) x.values = match!.values;
    return route;
  }

  #terminal(c: Ctx): unknown {
    const x = exchangeOf(c);
    const route = (x.matched as CompiledRoute | null) ?? this.#find(c, x);
    if (route === undefined) return this.#unrouted(c, this.#router!.find(c.path)?.methods ?? null);
    if (x.telemetry !== null) x.telemetry.routed(route.record.path);
    try {
      const p = route.run(c);
      if (isThenable(p))
        return Promise.resolve(p).then(undefined, (e: unknown) =>
          this.#failed(c, e, route.record.label),
        );
    } catch (e) {
      this.#failed(c, e, route.record.label);
    }
    return undefined;
  }

  #unrouted(c: Ctx, methods: ReadonlyMap<string, CompiledRoute> | null): unknown {
    for (const fallback of this.#fallbacks) {
      const taken = fallback(c);
      if (taken !== false)
        return isThenable(taken)
          ? Promise.resolve(taken).then(undefined, (e: unknown) =>
              this.#failed(c, e, `${c.method} ${c.path}`),
            )
          : undefined;
    }
    if (methods === null) {
      exchangeOf(c).writeFailure(404, `no route for ${c.method} ${c.path}`, null);
      return undefined;
    }
    const allow = [...methods.keys()];
    if (allow.includes('GET') && !allow.includes('HEAD'))
      allow.splice(allow.indexOf('GET') + 1, 0, 'HEAD');
    exchangeOf(c).writeFailure(405, `${c.method} is not allowed on ${c.path}`, {
      allow: allow.join(', '),
    });
    return undefined;
  }

  /**
   * A thrown value becomes the failure answer; after an answer was sent, the connection is closed.
   * Either way the error (unless a plain `fail.*`) is logged once, with the route, the request id
   * and the error itself, and given to the `onError` observers.
   */
  #failed(c: Ctx, err: unknown, label: string): void {
    const failure = mapError(err, label);
    const x = exchangeOf(c);
    if (x.telemetry !== null) x.telemetry.failed(err, c.sent ? 500 : failure.status);
    if (c.sent) {
      this.#report(
        c,
        err,
        { route: label, status: c.status, answered: true },
        {
          level: failure.log?.level ?? 'warn',
          msg: `warning: ${label} failed after answering ${c.status}: ${failure.log?.msg ?? failure.message}`,
        },
      );
      const res = x.res;
      if (res.writableEnded) res.socket?.end();
      else res.destroy();
      return;
    }
    if (failure.log !== null)
      this.#report(c, err, { route: label, status: failure.status, answered: false }, failure.log);
    if (failure.status === 413 || failure.status === 408) x.res.shouldKeepAlive = false; // the unread body would be read as the next request
    try {
      x.writeFailure(failure.status, failure.message, failure.headers, failure);
    } catch (e) {
      this.#logs.write(
        'warn',
        { reqId: c.requestId(), route: label, err: e },
        `warning: ${label}: failure answer not written: ${(e as Error).message}`,
      );
      x.res.destroy();
    }
  }

  /** Logs one error (the failure path only: never on a good answer) and tells the observers. */
  #report(
    c: Ctx,
    err: unknown,
    at: Omit<ErrorInfo, 'requestId'>,
    log: { readonly level: 'error' | 'warn'; readonly msg: string },
  ): void {
    const { route, status, answered } = at;
    const requestId = c.requestId();
    this.#logs.write(
      log.level,
      {
        reqId: requestId,
        route,
        req: { method: c.method, url: c.path },
        res: { statusCode: status },
        answered,
        err,
      },
      log.msg,
    );
    if (this.#errorObservers.length === 0) return;
    const info: ErrorInfo = { route, requestId, status, answered };
    for (const observer of this.#errorObservers) {
      try {
        const p = observer(err, info);
        if (isThenable(p))
          Promise.resolve(p).then(undefined, (e: unknown) => this.#observerFailed(e, info));
      } catch (e) {
        this.#observerFailed(e, info);
      }
    }
  }

  #observerFailed(e: unknown, info: ErrorInfo): void {
    this.#logs.write(
      'error',
      { reqId: info.requestId, route: info.route, err: e },
      `${info.route}: an onError observer failed (ignored)`,
    );
  }
}

/**
 * A head node parsed but fw refuses before routing: more header lines than `maxHeaderCount` (node
 * keeps that many in `req.headers`, and a later `Content-Length` would still frame the body: 431),
 * or more than one `Host` (RFC 9112 §3.2: 400; node keeps the first). Null for a good head.
 */
function badFraming(
  req: IncomingMessage,
  maxRawHeaders: number,
): { status: number; message: string } | null {
  const raw = req.rawHeaders;
  if (raw === undefined) return null; // app.inject
  if (raw.length > maxRawHeaders) return { status: 431, message: 'too many header lines' };
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1)
      return { status: 400, message: 'more than one Host header' };
  }
  return null;
}

/**
 * The reason the app-wide signal is aborted with at `close()`: what a handler awaiting something
 * under `c.signal` is rejected with (`signal.throwIfAborted()`, a stream given the signal), so it
 * answers 503 `Canceled` as `c.sleep` does, not 500 for an unknown error.
 */
const shuttingDown = (): HttpError => new HttpError('Canceled', 'server shutting down');

/** What `app.onError` observers are told besides the error. */
export interface ErrorInfo {
  /** The route, as `POST /orders/{id}/cancel (OrdersController.cancel)`; `METHOD /path` outside routes. */
  readonly route: string;
  /** The request id (the one the logger sends as `X-Request-Id`). */
  readonly requestId: string;
  /** The status sent (or, when `answered`, the status of the answer already under way). */
  readonly status: number;
  /** True when the answer had already started: the connection was closed instead of a failure answer. */
  readonly answered: boolean;
}

/**
 * The app-wide shutdown signal. Every request that reads `c.signal` listens on it while it runs
 * (and leaves when its answer ends), so many in flight at once are many listeners, not a leak.
 */
function shutdownController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/**
 * The encoders of every capability's own contract kinds, by name. A name two capabilities encode
 * is a Refusal naming both: which one answers would depend on the order of `app.use`.
 */
function encodersOf(capabilities: readonly Capability[], problems: string[]): EncoderExtensions {
  const out: Record<string, EncoderExtensions[string]> = {};
  const owner = new Map<string, Capability>();
  for (const c of capabilities)
    for (const [name, encoder] of Object.entries(c.encoders ?? {})) {
      const first = owner.get(name);
      if (first !== undefined)
        problems.push(
          `two capabilities encode ${name} answers: ${first.name ?? 'a capability without a name'} and ${c.name ?? 'a capability without a name'}`,
        );
      owner.set(name, c);
      out[name] = encoder;
    }
  return out;
}
