import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bytes, headers } from '../../core/answers';
import { HttpError } from '../../core/errors';
import { addHiddenRoute, cacheFor, versionDocumentPath } from './serve';
import { versionsIn } from '../api-versions';
import type { Capability, Host } from '../../route/extensions';

export interface DocsOptions {
  /** Where the page is served (default `/docs`); its assets go under it. */
  readonly path?: string;
  /** Where the page fetches the document from (default `/openapi.json`). */
  readonly spec?: string;
}

interface Asset {
  readonly file: string;
  readonly type: string;
}

const ASSETS: readonly Asset[] = [
  { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  { file: 'swagger-ui-standalone-preset.js', type: 'text/javascript; charset=utf-8' },
];

// Read once per process, on the first `app.docs()`: about 2 MB that every app of the process shares.
let loaded: Map<string, Buffer> | null = null;
let policy: string | null = null;
function assets(): Map<string, Buffer> {
  if (loaded === null) {
    const dir = swaggerUiDir();
    loaded = new Map(ASSETS.map((a) => [a.file, readFileSync(join(dir, a.file))]));
  }
  return loaded;
}

/**
 * Where swagger-ui-dist's files are. It is an optional peer dependency (12 MB, and a telemetry
 * postinstall of its own): installed only by apps that want the page, so its absence is said here,
 * at `app.docs()`, with the command that fixes it.
 */
function swaggerUiDir(): string {
  try {
    // absolute-path.js is getAbsoluteFSPath without loading the browser bundle into Node.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on the first app.docs() only
    return (require('swagger-ui-dist/absolute-path.js') as () => string)();
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw e;
    throw new HttpError(
      'PeerMissing',
      'app.docs() needs swagger-ui-dist, an optional peer dependency of fw-http: npm install swagger-ui-dist',
    );
  }
}

/**
 * The page's Content-Security-Policy: nothing but what the self-hosted Swagger UI loads, all from
 * the app (no inline script, no eval); `data:` images are the icons its CSS embeds; `connect-src
 * 'self'` lets it fetch the document and "Try it out" against this app only. `frame-ancestors`
 * stays as `securityHeaders()` sends it by default, since this header replaces the app's own.
 * The scripts add `<style>` elements of fixed text (the top bar's logo colours): each is allowed
 * by its hash, read from the files served, so a newer swagger-ui-dist keeps working.
 */
function docsPolicy(files: ReadonlyMap<string, Buffer>): string {
  if (policy !== null) return policy;
  const styles = [...files.values()].flatMap((f) => inlineStyleHashes(f.toString('latin1')));
  return (policy = [
    "default-src 'none'",
    "script-src 'self'",
    ['style-src', "'self'", ...new Set(styles)].join(' '),
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; '));
}

/** `'sha256-…'` of each `createElement("style",null,"…")` text of a bundle (CSP Level 3 §8.4). */
function inlineStyleHashes(script: string): string[] {
  const found = script.matchAll(/createElement\("style",null,("(?:[^"\\\n]|\\.)*")\)/g);
  return [...found].flatMap((m) => {
    let text: string;
    try {
      text = JSON.parse(Buffer.from(m[1]!, 'latin1').toString('utf8')) as string;
    } catch {
      return []; // a JavaScript-only escape: that style stays blocked, which only drops its colours
    }
    return [`'sha256-${createHash('sha256').update(text).digest('base64')}'`];
  });
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The docs page as a capability: `app.docs(options)` is `app.use(docsRoutes(options))`. */
export function docsRoutes(options: DocsOptions = {}): Capability {
  return { name: 'docs', register: (host) => addDocsRoutes(host, options) };
}

/**
 * The API reference page: Swagger UI (`swagger-ui-dist`) served by the app itself, so it works
 * offline and under a Content-Security-Policy without inline scripts.
 */
export function addDocsRoutes(app: Host, options: DocsOptions): void {
  const path = options.path ?? '/docs';
  const spec = options.spec ?? '/openapi.json';
  const base = path.endsWith('/') ? path.slice(0, -1) : path;
  const files = assets();
  const title = escapeHtml(`${app.options.title ?? 'fw app'} API reference`);
  const page = Buffer.from(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${base}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${base}/swagger-ui-bundle.js"></script>
<script src="${base}/swagger-ui-standalone-preset.js"></script>
<script src="${base}/init.js"></script>
</body>
</html>
`,
  );
  // validatorUrl: null keeps Swagger UI from sending the document to validator.swagger.io. With
  // API versions the page offers a document per version (a top-bar switch); which versions there
  // are is known once the app is built, so the script is made on its first request.
  const pageHeaders = headers.of([{ name: 'Content-Security-Policy', value: docsPolicy(files) }]);
  let init: Buffer | null = null;
  const initScript = () => (init ??= Buffer.from(initText(spec, versionsIn(app.routes))));
  addHiddenRoute(app, {
    path,
    name: 'docs',
    answer: () => new Bytes(page, 'text/html; charset=utf-8', pageHeaders),
  });
  addHiddenRoute(app, {
    path: `${base}/init.js`,
    name: 'docs init.js',
    answer: () => new Bytes(initScript(), 'text/javascript; charset=utf-8'),
  });
  const cache = cacheFor(86_400);
  for (const a of ASSETS) {
    const body = files.get(a.file)!;
    addHiddenRoute(app, {
      path: `${base}/${a.file}`,
      name: `docs ${a.file}`,
      answer: () => new Bytes(body, a.type, cache),
    });
  }
}

function initText(spec: string, versions: readonly string[]): string {
  const source = versions.length
    ? `urls: ${JSON.stringify([{ url: spec, name: 'all' }, ...versions.map((v) => ({ url: versionDocumentPath(spec, v), name: `v${v}` }))])},`
    : `url: ${JSON.stringify(spec)},`;
  return `window.ui = SwaggerUIBundle({
  ${source}
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  layout: 'StandaloneLayout'
});
`;
}
