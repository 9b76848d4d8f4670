import { checkWhole } from '../../options';
import 'reflect-metadata';
import { markRoute } from './decorators';
import { MarkKey } from './mark-key';
import type { FileField } from '../request/uploaded-file';

// The declarations of uploads and body sizes: `@FormFile()` on a form class's property, `@BodyLimit()`
// on a route. They only record; the scanner reads them into the route record.

const FILES = Symbol('fw.files');

/** What `@FormFile()` takes. */
export interface FileOptions {
  /** Largest file, in bytes (past it: 413 naming the field). Default: the app's `uploads.maxFileBytes` (10 MiB). */
  readonly maxBytes?: number;
  /**
   * Content types accepted, as the part declares them (another: 415 naming the field; so is a part
   * that declares none, which RFC 7578 reads as `text/plain`). Default: any, declared or not.
   */
  readonly types?: readonly string[];
  /** A missing file is 400 naming the field. Default true (false: the property is null, or `[]` for a list). */
  readonly required?: boolean;
  /** Most files under this name, for an `UploadedFile[]` (past it: 413). Default: the app's `uploads.maxFiles`. */
  readonly count?: number;
  /**
   * Hand the file over as a `StreamedFile` as it arrives, not written to disk (one file, the last
   * part of the form; not on an `@Idempotent` route). Default false.
   */
  readonly stream?: boolean;
}

/** A file field as `@FormFile()` declared it, its limits not settled yet (the app's defaults fill the gaps). */
export interface DeclaredFile {
  readonly name: string;
  readonly options: FileOptions;
  readonly many: boolean;
}

/**
 * A file field of a `@Form()` class, typed `UploadedFile` or `UploadedFile[]`: the form is then
 * read as `multipart/form-data`, each file streamed to a temp file with its SHA-256 taken.
 * @example @FormFile({ maxBytes: 1 << 20, types: ['text/csv'] }) csv!: UploadedFile;
 */
export function FormFile(options: FileOptions = {}): PropertyDecorator {
  return (proto, key) => {
    const name = String(key);
    const many = Reflect.getMetadata('design:type', proto, key) === Array;
    const list: readonly DeclaredFile[] = Reflect.getOwnMetadata(FILES, proto.constructor) ?? [];
    Reflect.defineMetadata(FILES, [...list, { name, options, many }], proto.constructor);
  };
}

/** The file fields a form class declares, its base classes' first. */
export function declaredFiles(cls: Function): readonly DeclaredFile[] {
  const found: DeclaredFile[] = [];
  for (let c: unknown = cls; typeof c === 'function'; c = Object.getPrototypeOf(c))
    found.unshift(...((Reflect.getOwnMetadata(FILES, c) as DeclaredFile[] | undefined) ?? []));
  return Object.freeze(found);
}

/** A declared file field with its limits settled: its own, else the app's (or the route's) defaults. */
export function settleFile(
  d: DeclaredFile,
  defaults: { readonly maxFileBytes: number; readonly maxFiles: number },
  where: string,
): FileField {
  const maxBytes = d.options.maxBytes ?? defaults.maxFileBytes;
  const count = d.many ? (d.options.count ?? defaults.maxFiles) : 1;
  const owner = { where: `${where}: @FormFile ${d.name}` };
  checkWhole(owner, 'maxBytes', maxBytes, { unit: 'bytes', min: 1 });
  checkWhole(owner, 'count', count, { min: 1 });
  if (d.options.stream === true && d.many)
    throw new TypeError(
      `${where}: @FormFile ${d.name}: a streamed file is one StreamedFile, not a list`,
    );
  return Object.freeze({
    name: d.name,
    maxBytes,
    count,
    many: d.many,
    stream: d.options.stream === true,
    required: d.options.required ?? true,
    types: d.options.types === undefined ? null : d.options.types.map((t) => t.toLowerCase()),
  });
}

/** The key of a route's `@BodyLimit` mark. */
export const BODY_LIMIT = new MarkKey<number>('bodyLimit');

/**
 * The largest request body this route reads whole (`@Body()`, `c.body()`, an urlencoded `@Form()`,
 * the idempotency fingerprint), in bytes, instead of the app's `maxBodyBytes` (1 MiB). Past it: 413.
 * @example @Post('/bulk') @BodyLimit(8 << 20) bulk(@Body() b: Bulk) {}
 */
export const BodyLimit = (bytes: number): MethodDecorator => markRoute(BODY_LIMIT, bytes);
