// The one place a file becomes an answer: ETag, Range, If-Range, If-None-Match, HEAD.
// FileBody, c.sendFile and static files (held or spilled) all answer through here, so the
// rules of the spec's "Static file serving" 5–7 are written once.
import type { FileHandle } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { checkWhole } from '../../../options';
import type { HeaderEntry } from '../../core/answers';
import type { Ctx } from '../../request/ctx';
import { HttpError } from '../../core/errors';
import { fail } from '../../core/fail';
import { waitForDrain } from '../../../streams';
import { addHeader, checkHeader, checkValue, type HeaderBag } from '../../core/header-rules';
import { noneMatchHolds } from '../../core/etag';
import { exchangeOf } from '../../request/exchange-of';

/** What an answer needs to know about a file. */
export interface FileFacts {
  /** Bytes in the whole representation. */
  readonly size: number;
  /** A quoted entity tag; strong unless it starts with `W/`. */
  readonly etag: string;
  /** Modification time (ms since the epoch) for `Last-Modified`, or null when unknown. */
  readonly mtimeMs: number | null;
}

/** How a request for a file is answered: bytes `start..end` (inclusive) with 200 or 206, or 304, or 416. */
export type FilePlan =
  | { readonly status: 200 | 206; readonly start: number; readonly end: number }
  | { readonly status: 304 }
  | { readonly status: 416 };

/** How the head of a file answer is dressed. */
export interface FileHeadOptions {
  readonly contentType: string;
  /** Empty: no `Cache-Control`. */
  readonly cacheControl: string;
  /** The answer's own headers (`FileBody.headers`, a wrapper's). */
  readonly own: readonly HeaderEntry[] | null;
}

export interface OpenFileOptions extends FileHeadOptions {
  /** Used instead of the one made from the descriptor. */
  readonly etag?: string | undefined;
  /** Used instead of the descriptor's size: the answer is the file's first `size` bytes. */
  readonly size?: number | undefined;
}

/**
 * The same 404 for a missing file and a refused name: it names nothing, so a probe cannot tell
 * them apart.
 */
export const fileNotFound = (): HttpError => new HttpError('FileNotFound', STATUS_CODES[404]!);

/** Errors of opening that mean "no such file here"; anything else (EACCES, EMFILE, EIO) is a 500. */
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EISDIR', 'EINVAL']);

/** What opening a file failed with, as the 404 of a missing file when it means one (MISSING), else unchanged. */
export function missingAsNotFound(e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code !== undefined && MISSING.has(code) ? fileNotFound() : e;
}

/**
 * The strong ETag of an opened file: `"<mtime ms, hex>-<size, hex>"`, from one `fstat` of the
 * descriptor (the same form as a spilled static file). Strong, because files are never compressed
 * on the fly.
 */
export function fileEtag(mtimeMs: number, size: number): string {
  return `"${Math.trunc(mtimeMs).toString(16)}-${size.toString(16)}"`;
}

const RANGE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

/**
 * One `Range` header against a size (RFC 9110 §14.1.2): the bytes asked for, `'whole'` when the
 * header is absent or not understood (another unit, non-numeric, start after end, several
 * ranges), or `'unsatisfiable'` (starts at or past the end, a zero suffix, any range of an empty file).
 */
export function parseRange(
  header: string | null,
  size: number,
): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  if (header === null) return 'whole';
  const m = RANGE.exec(header);
  if (m === null) return 'whole';
  const [, first, last] = m;
  if (first === '') {
    if (last === '') return 'whole';
    const n = Number(last);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 }; // a suffix longer than the file is the whole file, as 206 (RFC 9110 §14)
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (start > end) return 'whole';
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) }; // an end past the last byte is clamped (RFC 9110 §14.1.2)
}

/**
 * Whether `If-Range` lets a range through: only a strong tag equal to a strong ETag (RFC 9110
 * §13.1.5). A weak tag, `*`, a stale tag and an HTTP-date never match: the whole file is sent.
 */
export function ifRangeHolds(header: string, etag: string): boolean {
  const t = header.trim();
  return t.startsWith('"') && !etag.startsWith('W/') && t === etag;
}

/**
 * Decides how a request for a file is answered. Conditions and ranges apply to GET and HEAD only
 * (RFC 9110 §13.2.1, §14.2); HEAD is planned as its GET would be, so it carries the same length.
 */
export function planFileAnswer(c: Ctx, facts: FileFacts): FilePlan {
  const whole = { status: 200, start: 0, end: facts.size - 1 } as const;
  if (c.method !== 'GET' && c.method !== 'HEAD') return whole;
  const noneMatch = c.header('if-none-match');
  if (noneMatch !== null) {
    if (noneMatchHolds(noneMatch, facts.etag)) return NOT_MODIFIED;
  } else if (facts.mtimeMs !== null) {
    // RFC 9110 §13.1.3: If-Modified-Since only when If-None-Match is absent, at one-second precision.
    const since = c.header('if-modified-since');
    const t = since === null ? NaN : Date.parse(since);
    if (!Number.isNaN(t) && Math.floor(facts.mtimeMs / 1000) * 1000 <= t) return NOT_MODIFIED;
  }
  const range = c.header('range');
  if (range === null) return whole;
  const ifRange = c.header('if-range');
  if (ifRange !== null && !ifRangeHolds(ifRange, facts.etag)) return whole;
  const r = parseRange(range, facts.size);
  if (r === 'whole') return whole;
  if (r === 'unsatisfiable') return UNSATISFIABLE;
  return { status: 206, start: r.start, end: r.end };
}
const NOT_MODIFIED = { status: 304 } as const;
const UNSATISFIABLE = { status: 416 } as const;

/**
 * Writes the head of a file answer for a plan, and returns the number of body bytes to follow
 * (0 for 304, 416 and HEAD). A 416 is a whole failure answer in the app's shape, with
 * `Content-Range: bytes *\/<size>`.
 */
export function writeFileHead(
  c: Ctx,
  plan: FilePlan,
  facts: FileFacts,
  options: FileHeadOptions,
): number {
  if (c.sent)
    throw new HttpError(
      'AlreadySent',
      `a second answer (${plan.status}) after ${c.status} was sent`,
    );
  if (plan.status === 416) {
    exchangeOf(c).writeFailure(416, STATUS_CODES[416]!, {
      'accept-ranges': 'bytes',
      'content-range': `bytes */${facts.size}`,
    });
    return 0;
  }
  const bag: HeaderBag = { ...(exchangeOf(c).out ?? {}) };
  if (options.own !== null)
    for (const h of options.own) addHeader(bag, checkHeader(h.name, h.value), h.value);
  bag['accept-ranges'] = 'bytes';
  bag['etag'] = facts.etag;
  if (options.cacheControl !== '') {
    checkValue('cache-control', options.cacheControl);
    bag['cache-control'] = options.cacheControl;
  }
  // Files are never compressed (the same bytes for every client, so the ETag stays strong).
  if (plan.status === 304) {
    // RFC 9110 §15.4.5: what a cache needs to update its copy, and no representation metadata.
    exchangeOf(c).head(304, bag);
    exchangeOf(c).res.end();
    return 0;
  }
  if (facts.mtimeMs !== null) bag['last-modified'] = new Date(facts.mtimeMs).toUTCString();
  checkValue('content-type', options.contentType);
  bag['content-type'] = options.contentType;
  const length = plan.end - plan.start + 1;
  bag['content-length'] = String(length);
  if (plan.status === 206) bag['content-range'] = `bytes ${plan.start}-${plan.end}/${facts.size}`;
  exchangeOf(c).head(plan.status, bag);
  if (c.method === 'HEAD' || length === 0) {
    exchangeOf(c).res.end();
    return 0;
  }
  return length;
}

/**
 * Answers a request with an open file, and closes it on every way out: sent, failed, or the
 * client gone. Resolves when the last byte is handed to the socket (or the client left);
 * rejects when reading fails, before the head (a failure answer) or after (the connection is cut).
 */
export async function answerOpenFile(
  c: Ctx,
  handle: FileHandle,
  options: OpenFileOptions,
): Promise<void> {
  const watch = watchClose(c);
  try {
    let size = options.size;
    let etag = options.etag;
    let mtimeMs: number | null = null;
    if (size !== undefined)
      checkWhole({ where: 'sendFile' }, 'size', size, { unit: 'bytes', min: 0 });
    if (size === undefined || etag === undefined) {
      const stat = await handle.stat(); // one look at the descriptor that is sent
      if (!stat.isFile()) throw fileNotFound();
      size ??= stat.size;
      mtimeMs = stat.mtimeMs;
      etag ??= fileEtag(stat.mtimeMs, size);
    }
    if (watch.gone) return;
    const facts: FileFacts = { size, etag: quoted(etag), mtimeMs };
    const plan = planFileAnswer(c, facts);
    const length = writeFileHead(c, plan, facts, options);
    // A body follows only a 200 or 206 plan: the bytes `start..end` it names.
    if (length > 0) await pump(c, handle, plan as FileRange, watch);
  } finally {
    watch.stop();
    await handle.close().catch(ignore);
  }
}

const CHUNK = 64 * 1024;

/** The plan of an answer that sends bytes. */
type FileRange = Extract<FilePlan, { readonly start: number }>;

/** Reads the range's bytes and writes them, waiting for the socket when it is full; stops when the client goes. */
async function pump(
  c: Ctx,
  handle: FileHandle,
  range: FileRange,
  watch: CloseWatch,
): Promise<void> {
  const res = exchangeOf(c).res;
  const length = range.end - range.start + 1;
  let position = range.start;
  let left = length;
  while (left > 0) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, left));
    const { bytesRead } = await handle.read(buf, 0, buf.length, position);
    if (watch.gone) return;
    // The head promised `length` bytes; fewer would corrupt a kept connection, so this fails (and the app cuts it).
    if (bytesRead === 0)
      throw fail.internal('file ended %d bytes short of the %d announced', left, length);
    position += bytesRead;
    left -= bytesRead;
    if (!res.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead)) && !watch.gone)
      await waitForDrain(res);
    if (watch.gone) return;
  }
  res.end();
}

interface CloseWatch {
  /** True once the response closed before it was finished: the client went away. */
  readonly gone: boolean;
  stop(): void;
}

function watchClose(c: Ctx): CloseWatch {
  const res = exchangeOf(c).res;
  const watch = {
    gone: (res as { destroyed?: boolean }).destroyed === true,
    stop: () => res.off('close', onClose),
  };
  const onClose = () => {
    if (!res.writableFinished) watch.gone = true;
  };
  res.on('close', onClose);
  return watch;
}

/** A bare tag given to `sendFile` is quoted; a quoted or `W/` one is kept as given. */
function quoted(etag: string): string {
  return etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`;
}

const ignore = (): void => {};
