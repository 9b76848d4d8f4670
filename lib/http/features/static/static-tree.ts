// Static trees, indexed once at build the way sirv does it: every file becomes a map entry with its
// type, ETag, bytes and gzipped copy ready, so a request is one lookup and no disk access (except
// for spilled files). Ranges and conditions go through the shared file answer (files/file-answer).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { HeaderEntry } from '../../core/answers';
import { acceptsGzip } from '../compress';
import type { Ctx } from '../../request/ctx';
import { Dir, realDir } from '../files/dir';
import {
  answerOpenFile,
  planFileAnswer,
  writeFileHead,
  type FileFacts,
} from '../files/file-answer';
import { openInside } from '../files/file-body';
import { contentTypeOf, isPrecompressed } from './content-types';
import type { Capability, Host } from '../../route/extensions';
import { exchangeOf } from '../../request/exchange-of';

/** Options shared by directory and embedded trees. */
export interface EmbeddedOptions {
  /** Served for a path ending in `/`. Default `'index.html'`; `''` turns it off. */
  readonly index?: string;
  /** Sent on every file answer. Default `'public, max-age=3600'`. */
  readonly cacheControl?: string;
  /** The file served for a path under the prefix that names no file. Default `''` (none). */
  readonly spaFallback?: string;
  /** `'navigations'` (default): only for requests that accept HTML; `'anyPath'`: for every path. */
  readonly spaFallbackFor?: 'navigations' | 'anyPath';
  /** Gzip worth-while files once, at load. Default true. */
  readonly compress?: boolean;
  /** Files under this are not gzipped. Default 1024. */
  readonly compressMinBytes?: number;
}

/** Options of `app.staticWith`. */
export interface StaticOptions extends EmbeddedOptions {
  /** Files over this are opened per request instead of held. Default 8 MiB. */
  readonly maxFileBytes?: number;
  /** Ceiling on the bytes one tree holds, gzipped copies included. Default 64 MiB. */
  readonly maxTotalBytes?: number;
  /** Load names (any path segment) starting with `.`. Default false. The same rule as `Dir.open`'s `dotfiles`. */
  readonly dotfiles?: boolean;
  /**
   * Follow symlinks that stay inside the directory (to files and directories; cycles are cut).
   * A symlink that leaves the directory is never followed. Default false: symlinks are not
   * loaded and answer 404. The same rule as `Dir.open`'s `followSymlinks`.
   */
  readonly followSymlinks?: boolean;
  /** Open every file per request, so edits show without a restart. Default false. */
  readonly reload?: boolean;
}

/** One file of an embedded tree. */
export interface EmbeddedEntry {
  /** Path under the prefix, e.g. `'index.html'` or `'assets/app.js'`. */
  readonly path: string;
  readonly bytes: Uint8Array | string;
}

export const STATIC_DEFAULTS = {
  index: 'index.html',
  cacheControl: 'public, max-age=3600',
  spaFallback: '',
  spaFallbackFor: 'navigations',
  maxFileBytes: 8 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  dotfiles: false,
  followSymlinks: false,
  compress: true,
  compressMinBytes: 1024,
  reload: false,
} as const;

interface Held {
  readonly kind: 'held';
  readonly type: string;
  readonly bytes: Buffer;
  readonly etag: string;
  readonly mtimeMs: number | null;
  /** The gzipped copy and its tag, or null. */
  gz: Buffer | null;
  readonly gzEtag: string;
  /** Headers of the plain answer: Vary when there is a gzipped copy (for caches), else null. */
  plainOwn: readonly HeaderEntry[] | null;
}

interface Spilled {
  readonly kind: 'spilled';
  readonly type: string;
  /** The name found by the walk, opened per request inside the tree's root under the Dir rule. */
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
}

type Entry = Held | Spilled;

type Source = { readonly dir: string } | { readonly entries: readonly EmbeddedEntry[] };

/**
 * A static tree as a capability: `app.static(prefix, dir, options)` is
 * `app.use(staticTree(prefix, { dir }, options))`, `app.embedded` the same with `{ entries }`.
 */
export function staticTree(
  prefix: string,
  source: Source,
  options: StaticOptions = {},
): Capability {
  return {
    name: `static ${prefix}`,
    register: (host) => addStaticTree(host, prefix, source, options),
  };
}

/** Registers a tree: indexed at `build()`, answered by the app's fallback (after routes, inside the middleware chain). */
export function addStaticTree(
  app: Host,
  prefix: string,
  source: Source,
  options: StaticOptions,
): void {
  const o = { ...STATIC_DEFAULTS, ...options };
  const base = normalizePrefix(prefix);
  let tree: Tree | null = null;
  // Indexed with the routes' checks, so a missing directory or a bad embedded list is one more
  // line of the app's one RefusalError, never thrown on its own: every problem is reported at once.
  app.atBuild((problems) => {
    const found: Tree | string[] =
      'dir' in source ? walkDir(base, source.dir, o) : embed(base, source.entries, o);
    if (Array.isArray(found)) {
      problems.push(...found);
      return;
    }
    tree = found;
  });
  app.afterBuild(() => {
    if (tree === null) return;
    if (o.reload && 'dir' in source)
      app.log(`static ${base}: reload on, every file is opened per request`);
    app.log(tree.summary);
  });
  app.addFallback((c) => (tree === null ? false : tree.answer(c)));
}

type Resolved = Required<StaticOptions>;

function normalizePrefix(prefix: string): string {
  let p = prefix.startsWith('/') ? prefix : '/' + prefix;
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

const GZIP_OWN: readonly HeaderEntry[] = [
  { name: 'vary', value: 'Accept-Encoding' },
  { name: 'content-encoding', value: 'gzip' },
];
const VARY_OWN: readonly HeaderEntry[] = [{ name: 'vary', value: 'Accept-Encoding' }];
const ALLOW = { allow: 'GET, HEAD' };

/** What a tree is made of, once walked or listed. */
interface TreeParts {
  readonly prefix: string;
  readonly files: ReadonlyMap<string, Entry>;
  readonly o: Resolved;
  readonly fallback: Entry | null;
  /** Whether names are checked for dot segments (a directory tree without `dotfiles`). */
  readonly checkDots: boolean;
  readonly summary: string;
  /** The root that spilled files are opened in (null for an embedded tree). */
  readonly root: Dir | null;
}

class Tree {
  readonly #prefix: string;
  readonly #files: ReadonlyMap<string, Entry>;
  readonly #o: Resolved;
  readonly #fallback: Entry | null;
  readonly #checkDots: boolean;
  /** The root that spilled files are opened in (null for an embedded tree). */
  readonly #root: Dir | null;
  readonly summary: string;

  constructor(parts: TreeParts) {
    this.#root = parts.root;
    this.#prefix = parts.prefix;
    this.#files = parts.files;
    this.#o = parts.o;
    this.#fallback = parts.fallback;
    this.#checkDots = parts.checkDots;
    this.summary = parts.summary;
  }

  /** Answers a request under the prefix, or returns false to let the app answer (another tree, 404, 405). */
  answer(c: Ctx): unknown {
    const rest = this.#under(c.path);
    if (rest === null) return false;
    const name =
      rest === '' || rest.endsWith('/')
        ? this.#o.index === ''
          ? null
          : rest + this.#o.index
        : rest;
    let entry = name === null ? undefined : this.#files.get(name);
    if (entry === undefined) {
      if (
        this.#fallback === null ||
        (this.#checkDots && rest.split('/').some((s) => s.startsWith('.')))
      )
        return false;
      if (c.method !== 'GET' && c.method !== 'HEAD') return false;
      // Not a page being opened: the app's 404, which names the path.
      if (this.#o.spaFallbackFor === 'navigations' && !isNavigation(c.header('accept')))
        return false;
      entry = this.#fallback;
    }
    if (c.method !== 'GET' && c.method !== 'HEAD') {
      exchangeOf(c).writeFailure(405, `${c.method} is not allowed on ${c.path}`, ALLOW);
      return true;
    }
    return entry.kind === 'held' ? this.#held(c, entry) : this.#spilled(c, entry);
  }

  /** The decoded path below the prefix (`''` for the prefix itself with its slash), or null when not under it or not decodable. */
  #under(path: string): string | null {
    let raw: string;
    if (this.#prefix === '/') raw = path.slice(1);
    else if (path.startsWith(this.#prefix + '/')) raw = path.slice(this.#prefix.length + 1);
    else return null; // the prefix without its slash included: no redirect, like any path
    try {
      const decoded = decodeURIComponent(raw);
      // Only looked up in the fixed map: `..` or an absolute path simply names no entry, so
      // nothing outside the tree can be reached.
      return decoded.includes('\0') ? null : decoded;
    } catch {
      return null;
    }
  }

  #held(c: Ctx, f: Held): true {
    // A range is always cut from the plain bytes, whatever Accept-Encoding says, so offsets mean
    // the same file for every client.
    const gz =
      f.gz !== null &&
      c.header('range') === null &&
      acceptsGzip(exchangeOf(c).req.headers['accept-encoding']);
    const bytes = gz ? f.gz! : f.bytes;
    const facts: FileFacts = {
      size: bytes.length,
      etag: gz ? f.gzEtag : f.etag,
      mtimeMs: f.mtimeMs,
    };
    const plan = planFileAnswer(c, facts);
    const own = gz ? (plan.status === 304 ? VARY_OWN : GZIP_OWN) : f.plainOwn;
    const length = writeFileHead(c, plan, facts, {
      contentType: f.type,
      cacheControl: this.#o.cacheControl,
      own,
    });
    if (length > 0) {
      const start = (plan as { start: number }).start;
      exchangeOf(c).res.end(
        start === 0 && length === bytes.length ? bytes : bytes.subarray(start, start + length),
      );
    }
    return true;
  }

  async #spilled(c: Ctx, f: Spilled): Promise<void> {
    // Opened under the same rule as the walk (and as FileBody): a file swapped for a symlink
    // since startup is not followed out of the root, nor at all unless followSymlinks.
    const handle = await openInside(this.#root!, f.name);
    // The ETag comes from one fstat of this descriptor, so it describes the bytes sent; the shared
    // answer closes it.
    await answerOpenFile(c, handle, {
      contentType: f.type,
      cacheControl: this.#o.cacheControl,
      own: null,
    });
  }
}

/**
 * `Accept` with text/html, `*\/*`, or no `Accept` at all is a page being opened: it may get the
 * fallback page.
 */
function isNavigation(accept: string | null): boolean {
  if (accept === null || accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    const t = type!.trim();
    if (t === 'text/html' || t === '*/*') return true;
  }
  return false;
}

/**
 * A strong tag from a content hash, stable across restarts (the first 16 bytes of SHA-1,
 * base64url).
 */
function hashTag(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest().subarray(0, 16).toString('base64url');
}

function hold(name: string, bytes: Buffer, mtimeMs: number | null, o: Resolved): Held {
  const tag = hashTag(bytes);
  let gz: Buffer | null = null;
  if (o.compress && bytes.length >= o.compressMinBytes && !isPrecompressed(name)) {
    const z = gzipSync(bytes, { level: 9 });
    if (z.length < bytes.length) gz = z; // kept only when smaller
  }
  return {
    kind: 'held',
    type: contentTypeOf(name),
    bytes,
    etag: `"${tag}"`,
    gzEtag: `"${tag}-gz"`,
    mtimeMs,
    gz,
    plainOwn: gz === null ? null : VARY_OWN,
  };
}

function dropGz(f: Held): void {
  f.gz = null;
  f.plainOwn = null;
}

/** The spaFallback entry (null for none), or the Refusal line when it names no file. */
function fallbackOf(
  what: string,
  files: ReadonlyMap<string, Entry>,
  o: Resolved,
): { entry: Entry | null } | string {
  if (o.spaFallback === '') return { entry: null };
  const f = files.get(o.spaFallback.replace(/^\/+/, ''));
  if (f === undefined)
    return `${what}: spaFallback "${o.spaFallback}" names no file of the tree: name one of its files (index.html, say) or leave spaFallback out`;
  return { entry: f };
}

/**
 * Over maxTotalBytes, gzipped copies go first (largest first), then the largest files are
 * spilled (opened per request). Returns how many of each, for the summary line.
 */
function fitTotal(files: Map<string, Entry>, o: Resolved): { droppedGz: number; overflow: number } {
  const held = [...files.entries()].filter((e): e is [string, Held] => e[1].kind === 'held');
  let total = held.reduce((n, [, f]) => n + f.bytes.length + (f.gz?.length ?? 0), 0);
  let droppedGz = 0;
  let overflow = 0;
  if (total <= o.maxTotalBytes) return { droppedGz, overflow };
  for (const [, f] of [...held].sort((a, b) => (b[1].gz?.length ?? 0) - (a[1].gz?.length ?? 0))) {
    if (total <= o.maxTotalBytes || f.gz === null) break;
    total -= f.gz.length;
    dropGz(f);
    droppedGz++;
  }
  for (const [name, f] of [...held].sort((a, b) => b[1].bytes.length - a[1].bytes.length)) {
    if (total <= o.maxTotalBytes) break;
    total -= f.bytes.length;
    files.set(name, {
      kind: 'spilled',
      type: f.type,
      name,
      size: f.bytes.length,
      mtimeMs: f.mtimeMs ?? 0,
    });
    overflow++;
  }
  return { droppedGz, overflow };
}

/** The tree of directory `dir`, or the Refusal lines that stop it. */
function walkDir(prefix: string, dir: string, o: Resolved): Tree | string[] {
  const root = resolve(dir);
  let real: string;
  try {
    real = realDir(dir, `static ${prefix}: `);
  } catch (e) {
    return [
      `${(e as Error).message}: create it, or give app.static the right path (relative to the working directory)`,
    ];
  }
  const rootDir = Dir.ofReal(real, { followSymlinks: o.followSymlinks, dotfiles: o.dotfiles });
  const files = new Map<string, Entry>();
  // `abs` is a real path; `above` the real directories on the way down, so a link back up is cut.
  const walk = (abs: string, rel: string, above: ReadonlySet<string>): void => {
    for (const d of readdirSync(abs, { withFileTypes: true })) {
      if (!o.dotfiles && d.name.startsWith('.')) continue; // any segment: `.git/config` too
      const path = d.isSymbolicLink() ? linked(join(abs, d.name), rootDir, o) : join(abs, d.name);
      if (path === null) continue;
      const name = rel + d.name;
      const stat = statSync(path);
      if (stat.isDirectory()) {
        if (!above.has(path)) walk(path, name + '/', new Set(above).add(path));
      } else if (stat.isFile()) files.set(name, fileEntry(name, path, stat, o));
    }
  };
  walk(real, '', new Set([real]));
  const { droppedGz, overflow } = fitTotal(files, o);
  const fallback = fallbackOf(`static ${prefix}`, files, o);
  if (typeof fallback === 'string') return [fallback];
  return new Tree({
    prefix,
    files,
    o,
    fallback: fallback.entry,
    checkDots: !o.dotfiles,
    summary: summaryOf(`static ${prefix} (${root})`, files, droppedGz, overflow),
    root: rootDir,
  });
}

/**
 * Where a link in the tree leads, by the Dir rule: never out of the root, inside it only with
 * followSymlinks; null when it is not followed (or dangles).
 */
function linked(path: string, root: Dir, o: Resolved): string | null {
  if (!o.followSymlinks) return null;
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null; // dangling
  }
  return root.holds(real) ? real : null;
}

/** A file of the tree: held in memory, or spilled (opened per request) past maxFileBytes or under reload. */
function fileEntry(name: string, path: string, stat: Stats, o: Resolved): Entry {
  const maxFile = o.reload ? -1 : o.maxFileBytes; // reload: every file is opened per request
  if (stat.size <= maxFile) return hold(name, readFileSync(path), stat.mtimeMs, o);
  return {
    kind: 'spilled',
    type: contentTypeOf(name),
    name,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
  };
}

/** The tree of an embedded list, or the Refusal lines that stop it. */
function embed(prefix: string, entries: readonly EmbeddedEntry[], o: Resolved): Tree | string[] {
  const files = new Map<string, Entry>();
  const problems: string[] = [];
  for (const e of entries) {
    const name = e.path.replace(/^\/+/, '');
    if (files.has(name))
      problems.push(`embedded ${prefix}: path "${name}" is listed twice: list each path once`);
    else files.set(name, hold(name, Buffer.from(e.bytes), null, o));
  }
  const fallback = fallbackOf(`embedded ${prefix}`, files, o);
  if (typeof fallback === 'string') problems.push(fallback);
  if (problems.length > 0 || typeof fallback === 'string') return problems;
  return new Tree({
    prefix,
    files,
    o,
    fallback: fallback.entry,
    checkDots: false,
    summary: summaryOf(`embedded ${prefix}`, files, 0, 0),
    root: null,
  });
}

function summaryOf(
  what: string,
  files: ReadonlyMap<string, Entry>,
  droppedGz: number,
  overflow: number,
): string {
  let held = 0;
  let gz = 0;
  let spilled = 0;
  for (const f of files.values()) {
    if (f.kind === 'spilled') spilled++;
    else {
      held += f.bytes.length;
      gz += f.gz?.length ?? 0;
    }
  }
  const over =
    droppedGz + overflow > 0
      ? ` (over maxTotalBytes: ${droppedGz} gzipped copies dropped, ${overflow} files spilled)`
      : '';
  return `${what}: ${files.size} files, ${held} bytes held, ${gz} bytes gzipped, ${spilled} spilled${over}`;
}
