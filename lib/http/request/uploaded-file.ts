import { checkWhole } from '../../options';
import type { Readable } from 'node:stream';

/**
 * A file of a multipart form (`@FormFile()` on a `@Form()` class), written to a temp file (mode 0600)
 * while its SHA-256 was taken. The temp file is removed when the request ends, whatever happens:
 * move or copy it in the handler to keep it.
 * @example @FormFile({ maxBytes: 5 << 20, types: ['image/png'] }) image!: UploadedFile;
 */
export class UploadedFile {
  /** The form field it came in. */
  readonly field: string;
  /** The file name the client gave (its last path segment), or `''`. */
  readonly name: string;
  /**
   * The part's content type: as declared, or `text/plain` when it declared none (RFC 7578 §4.4's
   * default). `declaredType` tells the two apart.
   */
  readonly type: string;
  /** The content type the part declared (`type/subtype`, lower case), or null when it declared none. */
  readonly declaredType: string | null;
  /** The type its first bytes show (PNG, JPEG, GIF, WebP, PDF, ZIP, gzip), or null when none of those. */
  readonly sniffed: string | null;
  /** Its size in bytes. */
  readonly size: number;
  /** SHA-256 of its bytes, lower-case hex. */
  readonly sha256: string;
  /** Where it is: a temp file fw removes when the request ends. */
  readonly path: string;

  /** @internal */
  constructor(parts: Omit<UploadedFile, never>) {
    this.field = parts.field;
    this.name = parts.name;
    this.type = parts.type;
    this.declaredType = parts.declaredType;
    this.sniffed = parts.sniffed;
    this.size = parts.size;
    this.sha256 = parts.sha256;
    this.path = parts.path;
  }
}

/**
 * A file of a multipart form handed over as it arrives (`@FormFile({ stream: true })`), to pipe
 * straight to object storage: nothing is written to disk. Reading slowly holds the upload (the
 * socket is not read faster than `stream` is). Past `maxBytes` the stream errors with a 413.
 * @example await pipeline(form.file.stream, bucket.writer(form.file.name)); const { sha256 } = await form.file.done;
 */
export class StreamedFile {
  readonly field: string;
  readonly name: string;
  /** As `UploadedFile.type`: declared, or `text/plain` when the part declared none. */
  readonly type: string;
  /** As `UploadedFile.declaredType`: null when the part declared no type. */
  readonly declaredType: string | null;
  /** The file's bytes. Read it to the end (or destroy it) before answering. */
  readonly stream: Readable;
  /** Its size and SHA-256 (hex), once the stream has ended; rejects as the stream fails. */
  readonly done: Promise<{ readonly size: number; readonly sha256: string }>;

  /** @internal */
  constructor(parts: Omit<StreamedFile, never>) {
    this.field = parts.field;
    this.name = parts.name;
    this.type = parts.type;
    this.declaredType = parts.declaredType;
    this.stream = parts.stream;
    this.done = parts.done;
  }
}

/** A file field of a form class, as `@FormFile()` declared it. */
export interface FileField {
  /** The property (and form field) name. */
  readonly name: string;
  /** Largest file, in bytes. */
  readonly maxBytes: number;
  /**
   * Content types accepted (the part's declared type, parameters left out); a part that declared
   * none is refused. Null: any, declared or not.
   */
  readonly types: readonly string[] | null;
  readonly required: boolean;
  /** Most files under this name (1 for an `UploadedFile`, `count` or `maxFiles` for a list). */
  readonly count: number;
  /** Declared as `UploadedFile[]`. */
  readonly many: boolean;
  /** Handed over as a `StreamedFile` (`@FormFile({ stream: true })`): the last part of the form. */
  readonly stream: boolean;
}

/** The bounds on reading a multipart form. Each past its value answers 413 naming it. */
export interface UploadLimits {
  /** Largest file when its `@FormFile()` sets no `maxBytes`. Default 10 MiB. */
  readonly maxFileBytes: number;
  /** Files in one form. Default 10. */
  readonly maxFiles: number;
  /** Non-file fields in one form. Default 100. */
  readonly maxFields: number;
  /** Bytes of one field's value. Default 64 KiB. */
  readonly maxFieldBytes: number;
  /** Parts (fields and files) in one form. Default 110. */
  readonly maxParts: number;
  /**
   * Bytes of one part's header block. Default 16 KiB, busboy's own ceiling (past it busboy stops:
   * 400 naming this limit); a lower bound is measured by fw as the bytes pass (413 naming it).
   */
  readonly maxPartHeaderBytes: number;
  /** Bytes of the whole body, boundaries included. Default 64 MiB. */
  readonly maxTotalBytes: number;
  /** Where temp files go. Default `os.tmpdir()`. */
  readonly tmpDir: string | null;
}

export const UPLOAD_DEFAULTS: UploadLimits = Object.freeze({
  maxFileBytes: 10 * 1024 * 1024,
  maxFiles: 10,
  maxFields: 100,
  maxFieldBytes: 64 * 1024,
  maxParts: 110,
  maxPartHeaderBytes: 16 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  tmpDir: null,
});

/** busboy's fixed ceiling on one part's header block. */
export const PART_HEADER_CEILING = 16 * 1024;

/** The limits with each given one checked (a whole number ≥ 1; the header bound at most 16 KiB). */
export function uploadLimits(
  base: UploadLimits,
  given: Partial<UploadLimits> | undefined,
  where: string,
): UploadLimits {
  if (given === undefined) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(given)) {
    if (v === undefined) continue;
    if (k === 'tmpDir') out[k] = v;
    else if (!(k in base)) throw new TypeError(`${where}: unknown upload limit ${k}`);
    else
      out[k] = checkWhole({ where }, k, v, {
        min: 1,
        max: k === 'maxPartHeaderBytes' ? PART_HEADER_CEILING : undefined,
      });
  }
  return Object.freeze(out) as unknown as UploadLimits;
}
