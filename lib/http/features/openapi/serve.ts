import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Bytes, headers, toContract, type HeaderList } from '../../core/answers';
import { JSON_TYPE } from '../../core/media-types';
import type { Host } from '../../route/extensions';
import { builtInRecord, type RouteRecord } from '../../route/route-record';
import { buildDocument, type OpenApiDocument } from './build-document';

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

const built = new WeakMap<Host, Built>();
// The routes that serve the description itself (openapi.json, the docs page and its assets) are
// not part of the API they describe.
const hidden = new WeakSet<RouteRecord>();

/** The document of a built app, made once from its route records. */
export function documentOf(app: Host): Built {
  let b = built.get(app);
  if (b === undefined) {
    const doc = deepFreeze(
      buildDocument({
        records: app.routes.filter((r) => !hidden.has(r)),
        failureShape: app.failureShape,
        info: { title: app.options.title, version: app.options.version },
        capabilities: app.capabilities,
      }),
    );
    const text = JSON.stringify(doc, null, 2) + '\n';
    b = { doc, text, bytes: Buffer.from(text) };
    built.set(app, b);
  }
  return b;
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
    addHiddenRoute(app, { path: serve, name: 'openapi', answer: () => new Bytes(documentOf(app).bytes, JSON_TYPE) });
  }
}

class OpenApiRoutes {}

/** Adds a GET route the framework owns, answering Bytes, and keeps it out of the document. */
export function addHiddenRoute(app: Host, route: { path: string; name: string; answer: () => Bytes }): void {
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

export const cacheFor = (seconds: number): HeaderList => headers.of([{ name: 'Cache-Control', value: `public, max-age=${seconds}` }]);

function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}
