import { App as AppCore, type AppOptions } from './app';
import type { BuiltIns } from './built-ins';
import { apiVersions } from '../features/api-versions';
import { idempotency } from '../features/idempotency/idempotency';
import { rateLimits } from '../features/rate-limit';
import { versioned } from '../features/versioned';
import { files } from '../features/files/file-body';
import { jsonSpelling } from '../features/json-spelling';
import { websockets, UPGRADE, Upgrades, upgradeConnection } from '../features/websocket';
import { uploads } from '../features/uploads/uploads';
import { guards } from '../features/guards';
import { browserDefaults, earlyHeadersOf } from '../features/browser-defaults';
import { declaredFailures } from '../features/declared-failures';
import {
  defaultVersionOf,
  dispatchByVersion,
  routeKey,
  versionRecords,
} from '../features/api-versions';
import { RATE_STORE } from '../features/rate-limit';
import { sendFile } from '../features/files/send-file';
import { Dir } from '../features/files/dir';
import { ServerTelemetry } from '../features/telemetry';
import type * as HealthFeature from '../features/health';
import type { HealthOptions } from '../features/health';
import type { DocsOptions, OpenApiDocument, OpenApiOptions } from '../features/openapi/feature';
import { openApiFeature } from '../features/openapi-feature';
import type * as StaticFeature from '../features/static/static-tree';
import type { EmbeddedEntry, EmbeddedOptions, StaticOptions } from '../features/static/static-tree';
import type * as CompressFeature from '../features/compress';
import type { CompressOptions } from '../features/compress';
import { mcpServer, type McpOptions } from '../features/mcp';
import { sessionCookies, type SessionOptions } from '../features/sessions';
import type { Capability } from '../route/extensions';

// The one place fw's own features meet the app: the list of capabilities every app starts with,
// the few socket- and router-level parts, and `App`, the app with them wired in and its shortcuts
// (`app.health()` is `app.use(healthRoute())`). app.ts names no feature; this file names them all.

// The shortcuts' own features load with their first call: an app that serves no document, health
// route, directory or gzip loads none of their modules.
/* eslint-disable @typescript-eslint/no-require-imports -- each loaded by its shortcut's first call */
const healthFeature = () => require('../features/health') as typeof HealthFeature;
const staticFeature = () => require('../features/static/static-tree') as typeof StaticFeature;
const compressFeature = () => require('../features/compress') as typeof CompressFeature;
/* eslint-enable @typescript-eslint/no-require-imports */

/** A directory given to `Dir.open` that cannot be opened is one more Refusal line. */
const dirs: Capability = {
  name: 'dirs',
  register: (host) =>
    host.atBuild((problems) => {
      for (const p of host.provided)
        if (p instanceof Dir && p.problem !== null) problems.push(p.problem);
    }),
};

/** fw's own features, as the app takes them. */
export const DEFAULTS: BuiltIns = {
  // In the order their steps wrap a handler, the outermost first.
  capabilities: [
    apiVersions,
    websockets,
    rateLimits,
    browserDefaults,
    guards,
    idempotency,
    versioned,
    files,
    jsonSpelling,
    uploads,
    declaredFailures,
    dirs,
  ],
  services: (options) => (options.rateStore === undefined ? [] : [[RATE_STORE, options.rateStore]]),
  earlyHeaders: earlyHeadersOf,
  sendFile,
  upgrade: upgradeConnection,
  upgradeMark: UPGRADE,
  upgrades: () => new Upgrades(),
  versions: {
    records: versionRecords,
    key: routeKey,
    defaultOf: defaultVersionOf,
    dispatch: dispatchByVersion,
  },
  telemetry: (provided) => ServerTelemetry.resolve(provided),
  traced: (context, fn, c) => ServerTelemetry.run(context as never, fn, c),
};

/**
 * An fw application: controllers, services and middleware, scanned once into compiled routes.
 * @example
 * const app = new App({ title: 'shop' }).controllers(OrdersController).provide(db);
 * await app.listen({ port: 3000 });
 */
export class App extends AppCore {
  constructor(options: AppOptions = {}) {
    super(options, DEFAULTS);
  }

  /**
   * Adds the health route (default `GET /healthz`): 200 `{ "status": "ok" }`, 503 naming what is down
   * while a provided target's `ready` probe (or another probed service's) fails or the server is
   * stopping. Probe answers are reused for `cacheMs` and concurrent probes share one.
   * @example app.health() · app.health('/health') · app.health({ path: '/healthz', cacheMs: 1000, timeoutMs: 2000 })
   */
  health(options?: string | HealthOptions): this {
    this.configuring('health');
    return this.use(healthFeature().healthRoute(options));
  }

  /**
   * Describes the app as an OpenAPI 3.2.0 document, built at `build()` from the same route records
   * that serve requests: written to `path` when given (directories are made), served at `serve`
   * (default `/openapi.json`; `false` for none). The serving route is not in the document.
   * @example app.openapi({ path: 'openapi/openapi.json' })
   */
  openapi(options: OpenApiOptions = {}): this {
    this.configuring('openapi');
    return this.use(openApiFeature().openApiRoutes(options));
  }

  /** The OpenAPI document, built once (and the app with it). @example app.document().paths['/orders'].post */
  document(): OpenApiDocument {
    this.build();
    return openApiFeature().documentOf(this.host).doc;
  }

  /**
   * An API reference page (Swagger UI from `swagger-ui-dist`, served by the app itself: no CDN) at
   * `path` (default `/docs`) over the document at `spec` (default `/openapi.json`).
   * `swagger-ui-dist` is an optional peer dependency: without it this throws `PeerMissing`, naming
   * `npm install swagger-ui-dist`.
   * @example app.openapi().docs()
   */
  docs(options: DocsOptions = {}): this {
    this.configuring('docs');
    return this.use(openApiFeature().docsRoutes(options));
  }

  /**
   * Serves the app's `@Tool` routes to AI agents over MCP's Streamable HTTP transport at `path`
   * (default `/mcp`, POST; protocol 2025-06-18 and 2025-11-25): `initialize`, `tools/list` (the
   * tools the caller's guards and scopes let it call) and `tools/call`, which runs the route
   * through the app's whole pipeline with the caller's `Authorization` (an `@Idempotent` route's
   * key from `params._meta.idempotencyKey`). Answers are JSON; no session is kept.
   * @example app.mcp({ path: '/mcp', guard: Account })
   */
  mcp(options: McpOptions = {}): this {
    this.configuring('mcp');
    return this.use(mcpServer(options));
  }

  /**
   * Serves directory `dir` (relative to the working directory) under `prefix`. Indexed at
   * `build()`; routes win over it; GET and HEAD only. Options (all optional): index, cacheControl,
   * spaFallback, spaFallbackFor, maxFileBytes, maxTotalBytes, dotfiles, followSymlinks, compress,
   * compressMinBytes, reload.
   * @example app.static('/', 'public') · app.static('/', 'public', { spaFallback: 'index.html' })
   */
  static(prefix: string, dir: string, options: StaticOptions = {}): this {
    this.configuring('static');
    return this.use(staticFeature().staticTree(prefix, { dir }, options));
  }

  /**
   * The same call as `app.static(prefix, dir, options)`: the spec's name for it.
   * @example app.staticWith('/', 'public', { spaFallback: 'index.html', maxFileBytes: 256 * 1024 })
   */
  staticWith(prefix: string, dir: string, options: StaticOptions): this {
    return this.static(prefix, dir, options);
  }

  /**
   * Serves a list of `{ path, bytes }` built into the program under `prefix`, from memory. A path
   * listed twice or a `spaFallback` naming no entry stops `build()`. Options (all optional): index,
   * cacheControl, spaFallback, spaFallbackFor, compress, compressMinBytes.
   * @example app.embedded('/', [{ path: 'index.html', bytes: html }], { cacheControl: 'no-cache' })
   */
  embedded(prefix: string, entries: readonly EmbeddedEntry[], options: EmbeddedOptions = {}): this {
    this.configuring('embedded');
    return this.use(staticFeature().staticTree(prefix, { entries }, options));
  }

  /**
   * The same call as `app.embedded(prefix, entries, options)`: the spec's name for it.
   * @example app.embeddedWith('/', [{ path: 'index.html', bytes: html }], { index: '' })
   */
  embeddedWith(prefix: string, entries: readonly EmbeddedEntry[], options: EmbeddedOptions): this {
    return this.embedded(prefix, entries, options);
  }

  /**
   * Gzips text answers (text/*, JSON, JavaScript, XML, WASM, +json, +xml) of at least `minBytes`
   * for clients whose `Accept-Encoding` takes gzip. Off until called.
   * @example app.compress({ minBytes: 1024, level: 'fastest' })
   */
  compress(options: CompressOptions = {}): this {
    this.configuring('compress');
    return this.use(compressFeature().compression(options));
  }

  /**
   * Enables sessions: a handler parameter of type `Session` reads and changes a JSON record kept in
   * an HMAC-SHA256-signed cookie (`fw_session`, `HttpOnly; SameSite=Lax; Path=/`). A bad signature
   * counts as no session; asking for a `Session` with no `sessionSecret` is a 500. A secret shorter
   * than 32 bytes throws `WeakSessionSecret` here.
   * @example app.sessions({ sessionSecret: process.env.SESSION_SECRET })
   */
  sessions(options: SessionOptions): this {
    this.configuring('sessions');
    return this.use(sessionCookies(options));
  }
}
