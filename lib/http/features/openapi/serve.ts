import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Bytes, headers, toContract, type HeaderList } from '../../core/answers';
import { JSON_TYPE } from '../../core/media-types';
import type { Capability, Host } from '../../route/extensions';
import { builtInRecord, type RouteRecord } from '../../route/route-record';
import { buildDocument, type OpenApiDocument } from './build-document';
import type { Ctx } from '../../request/ctx';
import { versionOf, versionsIn } from '../api-versions';

export interface OpenApiOptions {
  /** Write the document to this file at startup (directories are made); relative to the working directory. */
  readonly path?: string | undefined;
  /** Serve the document at this path (default `/openapi.json`), or `false` for not at all. */
  readonly serve?: string | false;
}

interface Built {
  readonly doc: OpenApiDocument;
  /** Pretty-printed with two spaces and a trailing newline: what is written and served. */
  readonly text: string;
  readonly bytes: Buffer;
}

const built = new WeakMap<Host, Map<string | null, Built>>();
// The routes that serve the description itself (openapi.json, the docs page and its assets) are
// not part of the API they describe.
const hidden = new WeakSet<RouteRecord>();

/**
 * The document of a built app, made once from its route records: every route, or with `version`
 * the version-neutral routes and that version's. Where two versions share a path (the header
 * strategy), the whole document describes the default version's.
 */
export function documentOf(app: Host, version: string | null = null): Built {
  let all = built.get(app);
  if (all === undefined) built.set(app, (all = new Map()));
  let b = all.get(version);
  if (b === undefined) {
    const records = app.routes.filter((r) => !hidden.has(r) && inVersion(r, version));
    const doc = deepFreeze(
      buildDocument({
        records: distinctOperations(records, app.defaultVersion ?? null),
        failureShape: app.failureShape,
        info: { title: app.options.title, version: version ?? app.options.version },
        capabilities: app.capabilities,
        jsonSchemaOf: app.options.jsonSchemaOf ?? null,
      }),
    );
    const text = JSON.stringify(doc, null, 2) + '\n';
    b = { doc, text, bytes: Buffer.from(text) };
    all.set(version, b);
  }
  return b;
}

function inVersion(record: RouteRecord, version: string | null): boolean {
  const own = versionOf(record);
  return version === null || own === null || own === version;
}

/** One record per method and path: a versioned one over a neutral one, the default version's over others. */
function distinctOperations(
  records: readonly RouteRecord[],
  preferred: string | null,
): RouteRecord[] {
  const chosen = new Map<string, RouteRecord>();
  for (const r of records) {
    const key = `${r.method} ${r.path}`;
    const prior = chosen.get(key);
    if (prior === undefined || rank(r, preferred) > rank(prior, preferred)) chosen.set(key, r);
  }
  return records.filter((r) => chosen.get(`${r.method} ${r.path}`) === r);
}

const rank = (r: RouteRecord, preferred: string | null) => {
  const v = versionOf(r);
  return v === null ? 0 : v === preferred ? 2 : 1;
};

/** The version documents' paths: `/openapi.json` → `/openapi/v2.json`. */
export function versionDocumentPath(serve: string, version: string): string {
  return `${serve.replace(/\.json$/, '')}/v${version}.json`;
}

/**
 * Answers `GET /openapi/v{version}.json` for each version the app's routes declare; a fallback,
 * since the versions are known only once the app is built.
 */
function serveVersionDocuments(app: Host, serve: string): void {
  app.addFallback((c: Ctx) => {
    if (c.method !== 'GET' && c.method !== 'HEAD') return false;
    const version = versionsIn(app.routes).find((v) => versionDocumentPath(serve, v) === c.path);
    if (version === undefined) return false;
    c.send(200, JSON_TYPE, documentOf(app, version).bytes);
    return undefined;
  });
}

/** The OpenAPI document as a capability: `app.openapi(options)` is `app.use(openApiRoutes(options))`. */
export function openApiRoutes(options: OpenApiOptions = {}): Capability {
  return { name: 'openapi', register: (host) => addOpenApi(host, options) };
}

/** `app.openapi(options)`: the file written after build, and the route serving the same bytes. */
export function addOpenApi(app: Host, options: OpenApiOptions): void {
  const file = options.path;
  if (file !== undefined) {
    app.afterBuild(() => {
      const { text } = documentOf(app);
      let current: string | null = null;
      try {
        current = readFileSync(file, 'utf8');
      } catch {
        // not there yet
      }
      // Unchanged documents are not rewritten, so watchers and mtimes stay quiet.
      if (current === text) return;
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    });
  }
  const serve = options.serve ?? '/openapi.json';
  if (serve !== false) {
    addHiddenRoute(app, {
      path: serve,
      name: 'openapi',
      answer: () => new Bytes(documentOf(app).bytes, JSON_TYPE),
    });
    serveVersionDocuments(app, serve);
  }
}

/** Keeps a route the framework adds out of the document (one that speaks another protocol: MCP's endpoint). */
export function hideFromDocument(record: RouteRecord): void {
  hidden.add(record);
}

class OpenApiRoutes {}

/** Adds a GET route the framework owns, answering Bytes, and keeps it out of the document. */
export function addHiddenRoute(
  app: Host,
  route: { path: string; name: string; answer: () => Bytes },
): void {
  const record = builtInRecord({
    path: route.path,
    name: route.name,
    controller: OpenApiRoutes,
    key: 'answer',
    contract: toContract(Bytes),
    returnType: Bytes,
    tag: 'openapi',
  });
  hidden.add(record);
  app.addBuiltIn(record, { answer: route.answer });
}

export const cacheFor = (seconds: number): HeaderList =>
  headers.of([{ name: 'Cache-Control', value: `public, max-age=${seconds}` }]);

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}
