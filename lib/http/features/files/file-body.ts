import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import {
  innerContracts,
  OWN_CONTRACT,
  ownContract,
  toHeaderList,
  type AtMost8Headers,
  type Contract,
  type HeaderEntry,
  type HeaderList,
  type ReturnedHeaders,
} from '../../core/answers';
import { OCTET_STREAM } from '../../core/media-types';
import type { Capability } from '../../route/extensions';
import type { Ctx } from '../../request/ctx';
import type { Encoder } from '../../route/extensions';
import type { RecordCheck } from '../../route/extensions';
import type { Dir } from './dir';
import { answerOpenFile, fileNotFound, missingAsNotFound } from './file-answer';

/** The name of the FileBody contract kind: its encoder's key, and how Refusals name it. */
const FILE_BODY = 'FileBody';

export interface FileBodyInit<H extends ReturnedHeaders = HeaderList> {
  /** The directory `name` is opened in (`Dir.open`, provided as a service). */
  readonly dir: Dir;
  /**
   * A relative name inside `dir`; `..` segments, absolute names, NUL bytes, symlinks (unless the
   * Dir follows those that stay inside) and names starting with `.` (unless the Dir serves
   * dotfiles) answer 404.
   */
  readonly name: string;
  /** Default `application/octet-stream`. */
  readonly contentType?: string;
  /** Sent as `Cache-Control` when not empty. Default empty. */
  readonly cacheControl?: string;
  /**
   * Up to 8 headers sent with the file, e.g. a `Content-Disposition` download name:
   * `{ 'Content-Disposition': 'attachment; filename="terms.txt"' }` or `headers.of([...])`.
   */
  readonly headers?: AtMost8Headers<H>;
}

/**
 * A file from a `Dir`, sent under its own content type with ranges, `If-Range`, `If-None-Match`
 * and HEAD handled as for static files. A missing file and a refused name answer the same 404.
 * @example
 * @Get('/files/{name}') @Returns(FileBody)
 * file(@Param('name') name: string, dir: Dir) { return new FileBody({ dir, name, contentType: 'text/plain' }) }
 */
export class FileBody<H extends ReturnedHeaders = HeaderList> {
  /** `@Returns(FileBody)` stands for the file contract: the handler returns a FileBody. */
  static readonly [OWN_CONTRACT]: Contract<FileBody> = ownContract<FileBody>({ name: FILE_BODY });
  readonly dir: Dir;
  readonly name: string;
  readonly contentType: string;
  readonly cacheControl: string;
  readonly headers: HeaderList;

  constructor(init: FileBodyInit<H>) {
    this.dir = init.dir;
    this.name = init.name;
    this.contentType = init.contentType ?? OCTET_STREAM;
    this.cacheControl = init.cacheControl ?? '';
    this.headers = toHeaderList(init.headers as ReturnedHeaders | undefined, 'FileBody');
  }
}

const DRIVE = /^[A-Za-z]:/;

/**
 * Names refused before anything is opened (a `..` segment answers 404, like a missing file).
 * Backslashes and drive letters are refused on every platform, not only on Windows: a program then
 * answers the same wherever it runs.
 */
export function refusedName(name: string): boolean {
  if (
    name === '' ||
    name.includes('\0') ||
    name.includes('\\') ||
    DRIVE.test(name) ||
    name.startsWith('/') ||
    isAbsolute(name)
  )
    return true;
  return name.split('/').includes('..');
}

const NO_FOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);
/**
 * A segment that is a dotfile's name (`.env`, `.git`): hidden unless the Dir serves dotfiles, as
 * the static tree does (off by default). A lone `.` names the directory itself, not a hidden file.
 */
const DOT_SEGMENT = /(?:^|\/)\.[^/]/;

/**
 * Opens `name` inside `dir` under the Dir's rule (`refusedName` and `DirOptions`): refused names,
 * and dotfiles unless allowed, answer 404 before anything is opened.
 */
export function openIn(dir: Dir, name: string): Promise<FileHandle> {
  if (refusedName(name) || (!dir.dotfiles && DOT_SEGMENT.test(name)))
    return Promise.reject(fileNotFound());
  return openInside(dir, name);
}

/**
 * Opens a relative `name` inside `dir`; the static tree opens its spilled files through it too,
 * so both follow one rule. The real path must lie inside the directory (a symlink that leaves it
 * answers 404, always) and, unless `followSymlinks`, must be the path asked for (any symlink on
 * the way answers 404). The file is then opened by that real path without following a final
 * symlink, so one swapped in meanwhile is not followed either.
 */
export async function openInside(dir: Dir, name: string): Promise<FileHandle> {
  try {
    const asked = join(dir.path, name);
    const real = await realpath(asked);
    if (!dir.holds(real) || (!dir.followSymlinks && real !== asked)) throw fileNotFound();
    return await open(real, NO_FOLLOW);
  } catch (e) {
    throw missingAsNotFound(e);
  }
}

/** Sends a FileBody: opened here, closed by the shared file answer on every way out. */
async function sendFileBody(
  c: Ctx,
  body: FileBody,
  own: readonly HeaderEntry[] | null,
): Promise<void> {
  const handle = await openIn(body.dir, body.name);
  const list = body.headers.entries;
  await answerOpenFile(c, handle, {
    contentType: body.contentType,
    cacheControl: body.cacheControl,
    own: own === null || own.length === 0 ? list : [...list, ...own],
  });
}

const encoder =
  (_contract: Contract, label: string): Encoder =>
  (c, v, _status, own) => {
    if (!(v instanceof FileBody))
      throw new TypeError(`${label}: a FileBody route returned something other than a FileBody`);
    return sendFileBody(c, v, own);
  };

/**
 * A file carries its own status (200, 206, 304, 416) and its own ETag: a wrapper that would give
 * it another status or tag is refused.
 */
const check: RecordCheck = (record, _services, problems) => {
  const walk = (c: Contract, under: string | null): void => {
    if (isFileBody(c)) {
      if (under !== null)
        problems.push(
          `${record.label}: FileBody cannot sit inside ${under}: a file answers with its own status and ETag`,
        );
      return;
    }
    if (c.kind === 'status' && isFileBody(c.inner)) {
      problems.push(
        `${record.label}: FileBody cannot take a wrapper's status (Status(${c.status}, FileBody))`,
      );
      return;
    }
    const here = wrapperName(c, under);
    for (const inner of innerContracts(c)) walk(inner, here);
  };
  if (record.contract !== null) walk(record.contract, null);
};

const isFileBody = (c: Contract): boolean => c.kind === 'own' && c.name === FILE_BODY;

/** What a FileBody directly inside `c` would sit inside; `Optional` passes on what holds it. */
function wrapperName(c: Contract, under: string | null): string | null {
  switch (c.kind) {
    case 'status':
      return `Status(${c.status}, …)`;
    case 'reply':
      return 'Reply';
    case 'own':
      return c.name;
    default:
      return under;
  }
}

/** Files: the `FileBody` answer and its Refusals. */
export const files: Capability = { checks: [check], encoders: { [FILE_BODY]: encoder } };
