import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createWriteStream, rm, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type BusboyType from 'busboy';
import { Failure, HttpError } from '../core/errors';
import type { Params } from '../schema';
import { loadBusboy } from './busboy-peer';
import { PartHeaderWatch } from './part-header-watch';
import { PartHeads } from './part-heads';
import {
  PART_HEADER_CEILING,
  StreamedFile,
  UploadedFile,
  type FileField,
  type UploadLimits,
} from './uploaded-file';
import { sniff } from './sniff';

/** What a route's multipart form is read with: its file fields and its limits, fixed at build. */
export interface UploadPlan {
  readonly files: ReadonlyMap<string, FileField>;
  readonly limits: UploadLimits;
}

/** A multipart form read to the end: its fields, its files on disk, and a digest of both. */
export interface ReadUpload {
  /** Field values by name (a repeated name: its values in order), with no prototype. */
  readonly fields: Params;
  readonly files: ReadonlyMap<string, (UploadedFile | StreamedFile)[]>;
  /**
   * SHA-256 over every field (name, value) and file (field, name, type, its own SHA-256) in the
   * order sent: what an idempotent upload route fingerprints, without holding the body.
   */
  readonly digest: Buffer;
}

/**
 * Bytes a temp file's write stream holds before it pauses the part (node's default is 16 KiB).
 * With 16 KiB every 64 KiB socket read paused busboy and the request and went to the disk as a
 * write of its own (a thread-pool round trip each); with 1 MiB the reads queued behind a write
 * go to the disk in one `writev`: about 4× fewer system calls and wake-ups for a large file, and
 * at most 1 MiB held per file being written.
 */
const TEMP_FILE_BUFFER = 1024 * 1024;

const MULTIPART = /^multipart\/form-data\s*;/i;
const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i;

/** True when the request says it carries a multipart form. */
export const isMultipart = (req: IncomingMessage): boolean =>
  MULTIPART.test(req.headers['content-type'] ?? '');

/** Reads `req`'s multipart body into temp files and fields; every temp file goes when `res` closes. */
export function readUpload(
  req: IncomingMessage,
  res: NodeJS.EventEmitter & { shouldKeepAlive: boolean },
  plan: UploadPlan,
): Promise<ReadUpload> {
  const reading = new UploadReading(req, res, plan);
  return reading.start();
}

/** A file part on its way: its name and types as sent, and its place among its field's files. */
interface Part {
  readonly name: string;
  readonly type: string;
  readonly declaredType: string | null;
  readonly list: (UploadedFile | StreamedFile)[];
  readonly index: number;
}

interface FileSink {
  readonly path: string;
  readonly out: WriteStream;
}

/** One multipart body being read: its state and the steps of reading it. */
class UploadReading {
  readonly #req: IncomingMessage;
  readonly #res: NodeJS.EventEmitter & { shouldKeepAlive: boolean };
  readonly #plan: UploadPlan;
  readonly #limits: UploadLimits;
  readonly #sinks: FileSink[] = [];
  readonly #fields = Object.create(null) as Params;
  readonly #files = new Map<string, (UploadedFile | StreamedFile)[]>();
  /** The streamed file's stream once it began (the form is handed over then), else null. */
  #streamed: Transform | null = null;
  /** The request's answer is done: nothing more is fed to busboy. */
  #closed = false;
  /** Files begun per field (the list holds those finished). */
  readonly #started = new Map<string, number>();
  readonly #digest = createHash('sha256');
  #bb: BusboyType.Busboy | null = null;
  #heads: PartHeads | null = null;
  #total = 0;
  #parts = 0;
  #fieldCount = 0;
  #fileCount = 0;
  #writing = 0;
  #parsed = false;
  #failed: unknown = null;
  #resolve!: (u: ReadUpload) => void;
  #reject!: (e: unknown) => void;

  constructor(
    req: IncomingMessage,
    res: NodeJS.EventEmitter & { shouldKeepAlive: boolean },
    plan: UploadPlan,
  ) {
    this.#req = req;
    this.#res = res;
    this.#plan = plan;
    this.#limits = plan.limits;
  }

  start(): Promise<ReadUpload> {
    const done = new Promise<ReadUpload>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Whatever happens (answered, handler failed, client gone, server closed), the files go.
    this.#res.once('close', () => {
      this.#closed = true;
      this.#removeAll();
      // Answered before the body ended (a streamed file left unread): the rest is read and dropped.
      if (!this.#req.complete) this.#req.resume();
      // A streamed file nobody read to the end: let go of it (and so of busboy and the socket).
      if (this.#streamed !== null && !this.#streamed.readableEnded)
        this.#streamed.destroy(new HttpError('Canceled', 'the request ended'));
    });
    const req = this.#req;
    const limits = this.#limits;
    const length = Number(req.headers['content-length'] ?? -1);
    if (length > limits.maxTotalBytes) {
      this.#fail(tooLarge(`form: body larger than ${limits.maxTotalBytes} bytes (maxTotalBytes)`));
      return done;
    }
    const type = req.headers['content-type'] ?? '';
    const m = BOUNDARY.exec(type);
    if (m === null) {
      this.#fail(new Failure(400, 'form: multipart/form-data without a boundary'));
      return done;
    }
    let bb: BusboyType.Busboy;
    try {
      bb = loadBusboy()({
        headers: req.headers,
        // One byte over the bound: a value of exactly maxFieldBytes is whole, one longer is refused.
        limits: { fieldSize: limits.maxFieldBytes + 1, fileSize: Infinity },
        // Browsers send names and file names as raw UTF-8 (RFC 7578 §4.2 rules out `filename*`).
        defParamCharset: 'utf8',
      });
    } catch (e) {
      this.#fail(e instanceof HttpError ? e : new Failure(400, `form: ${String(e)}`));
      return done;
    }
    this.#bb = bb;
    const boundary = (m[1] ?? m[2])!;
    this.#heads = PartHeads.follow(bb, boundary, PART_HEADER_CEILING);
    // busboy stops at its own 16 KiB; only a lower bound needs the bytes looked at a second time.
    const watch =
      limits.maxPartHeaderBytes < PART_HEADER_CEILING
        ? new PartHeaderWatch(boundary, limits.maxPartHeaderBytes)
        : null;
    this.#listen(bb, watch);
    return done;
  }

  #listen(bb: BusboyType.Busboy, watch: PartHeaderWatch | null): void {
    const req = this.#req;
    bb.on('field', (name, value, info) => this.#field(name, value, info.valueTruncated));
    bb.on('file', (name, stream, info) => this.#file(name, stream, info));
    bb.on('error', (e: unknown) => this.#fail(malformed(e)));
    bb.on('close', () => {
      this.#parsed = true;
      this.#settle();
    });
    // Counted (and header blocks measured) first: a chunk past a bound never reaches busboy.
    req.on('data', (chunk: Buffer) => {
      if (this.#failed !== null) return;
      if (this.#closed) return void this.#req.unpipe();
      this.#total += chunk.length;
      if (this.#total > this.#limits.maxTotalBytes)
        return this.#fail(
          tooLarge(`form: body larger than ${this.#limits.maxTotalBytes} bytes (maxTotalBytes)`),
        );
      if (watch !== null && !watch.push(chunk))
        return this.#fail(
          tooLarge(
            `form: a part's headers are larger than ${this.#limits.maxPartHeaderBytes} bytes (maxPartHeaderBytes)`,
          ),
        );
    });
    req.pipe(bb);
    // An aborted request or a connection cut by a timeout: the body stopped arriving.
    req.on('error', () => this.#fail(new HttpError('BodyTooSlow', 'request body did not arrive')));
    req.on('aborted', () =>
      this.#fail(new HttpError('BodyTooSlow', 'request body did not arrive')),
    );
  }

  /** Counts one more part (and one more of its kind); false (and failed) past a bound. */
  #count(kind: 'field' | 'file', name: string): boolean {
    const l = this.#limits;
    if (this.#streamed !== null)
      this.#fail(new Failure(400, `form.${name}: no part may follow a streamed file`));
    else if (++this.#parts > l.maxParts)
      this.#fail(tooLarge(`form: more than ${l.maxParts} parts (maxParts)`));
    else if (kind === 'field' && ++this.#fieldCount > l.maxFields)
      this.#fail(tooLarge(`form: more than ${l.maxFields} fields (maxFields)`));
    else if (kind === 'file' && ++this.#fileCount > l.maxFiles)
      this.#fail(tooLarge(`form: more than ${l.maxFiles} files (maxFiles)`));
    else if (kind === 'field' && this.#plan.files.has(name))
      this.#fail(new Failure(400, `form.${name}: must be a file`));
    return this.#failed === null;
  }

  #field(name: string, value: string, truncated: boolean): void {
    if (this.#failed !== null || !this.#count('field', name)) return;
    if (truncated || Buffer.byteLength(value) > this.#limits.maxFieldBytes)
      return this.#fail(
        tooLarge(
          `form.${name}: value larger than ${this.#limits.maxFieldBytes} bytes (maxFieldBytes)`,
        ),
      );
    digestPart(this.#digest, 'field', name, value);
    const had = this.#fields[name];
    if (had === undefined) this.#fields[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else this.#fields[name] = [had, value];
  }

  #file(name: string, stream: Readable, info: BusboyType.FileInfo): void {
    // Stopping the form destroys the part's stream with an error: its end, not news.
    stream.on('error', () => {});
    if (this.#failed !== null || !this.#count('file', name)) return void stream.resume();
    const field = this.#plan.files.get(name);
    if (field === undefined) {
      stream.resume();
      return this.#fail(new Failure(400, `form.${name}: not a file field of this form`));
    }
    let list = this.#files.get(name);
    if (list === undefined) this.#files.set(name, (list = []));
    const started = (this.#started.get(name) ?? 0) + 1;
    this.#started.set(name, started);
    if (started > field.count) {
      stream.resume();
      return this.#fail(tooLarge(`form.${name}: more than ${field.count} files (count)`));
    }
    const type = info.mimeType.toLowerCase();
    const declaredType = this.#declaredType(name, type);
    const refused = typeRefusal(field, declaredType);
    if (refused !== null) {
      stream.resume();
      return this.#fail(refused);
    }
    const part = { name: info.filename ?? '', type, declaredType, list, index: started - 1 };
    if (field.stream) this.#stream(field, stream, part);
    else this.#write(field, stream, part);
  }

  /**
   * The type the part declared, or null: busboy reads a part without one as `text/plain` (RFC
   * 7578 §4.4), so that type alone is checked against the part's own header block.
   */
  #declaredType(name: string, type: string): string | null {
    const head = this.#heads?.next(name);
    return type === 'text/plain' && head !== undefined && head.declaredType === null ? null : type;
  }

  /** Streams one file to a 0600 temp file, hashing and counting it as it passes. */
  #write(field: FileField, stream: Readable, part: Part): void {
    const dir = this.#limits.tmpDir ?? tmpdir();
    const path = join(dir, `fw-upload-${randomBytes(12).toString('hex')}`);
    const out = createWriteStream(path, {
      flags: 'wx',
      mode: 0o600,
      highWaterMark: TEMP_FILE_BUFFER,
    });
    this.#sinks.push({ path, out });
    this.#writing++;
    const hash = createHash('sha256');
    let size = 0;
    let head: Buffer | null = null;
    // Counted and hashed first: a chunk past the bound fails the upload before it is written.
    stream.on('data', (chunk: Buffer) => {
      if (this.#failed !== null) return;
      size += chunk.length;
      if (size > field.maxBytes) {
        stream.unpipe(out);
        stream.resume();
        return this.#fail(
          tooLarge(`form.${field.name}: file larger than ${field.maxBytes} bytes (maxBytes)`),
        );
      }
      head ??= Buffer.from(chunk.subarray(0, 16));
      hash.update(chunk);
    });
    // Backpressure: a slow disk pauses this part, which holds busboy, which pauses the request.
    stream.pipe(out, { end: false });
    stream.on('end', () => {
      if (this.#failed !== null) return;
      out.end(() => {
        const file = this.#finished(field, part, { path, size, hash, head });
        part.list[part.index] = file; // in the order sent, whichever reached the disk first
        this.#writing--;
        this.#settle();
      });
    });
    out.on('error', (e) => this.#fail(e));
  }

  /**
   * Hands the form over now, with this file as a stream: counted and hashed as the handler reads
   * it, refused (413) past its bound; reading slowly holds busboy and so the socket.
   */
  #stream(field: FileField, stream: Readable, part: Part): void {
    const hash = createHash('sha256');
    let size = 0;
    const out = new Transform({
      transform: (chunk: Buffer, _encoding, next) => {
        size += chunk.length;
        if (size <= field.maxBytes) {
          hash.update(chunk);
          return next(null, chunk);
        }
        const e = tooLarge(
          `form.${field.name}: file larger than ${field.maxBytes} bytes (maxBytes)`,
        );
        next(e);
        this.#fail(e);
      },
    });
    stream.on('error', (e) => out.destroy(e));
    stream.pipe(out);
    const done = new Promise<{ size: number; sha256: string }>((resolve, reject) => {
      out.once('end', () => resolve({ size, sha256: hash.digest('hex') }));
      out.once('error', reject);
    });
    done.catch(() => {}); // the handler may never ask; its stream errors all the same
    this.#streamed = out;
    part.list[part.index] = new StreamedFile({
      field: field.name,
      name: part.name,
      type: part.type,
      declaredType: part.declaredType,
      stream: out,
      done,
    });
    this.#resolve({ fields: this.#fields, files: this.#files, digest: this.#digest.digest() });
  }

  #finished(
    field: FileField,
    part: Part,
    got: { path: string; size: number; hash: Hash; head: Buffer | null },
  ): UploadedFile {
    const sha256 = got.hash.digest('hex');
    digestPart(this.#digest, 'file', field.name, `${part.name}\0${part.type}\0${sha256}`);
    return new UploadedFile({
      field: field.name,
      name: part.name,
      type: part.type,
      declaredType: part.declaredType,
      sniffed: got.head === null ? null : sniff(got.head),
      size: got.size,
      sha256,
      path: got.path,
    });
  }

  /** Resolves once busboy has read the whole form and every file is on disk. */
  #settle(): void {
    if (this.#streamed !== null) return; // handed over already
    if (this.#failed !== null || !this.#parsed || this.#writing !== 0) return;
    this.#resolve({ fields: this.#fields, files: this.#files, digest: this.#digest.digest() });
  }

  /** Stops the upload at the first problem: nothing more is read or written, the files go. */
  #fail(e: unknown): void {
    if (this.#failed !== null) return;
    this.#failed = e;
    // The rest of the body is never read: the connection cannot carry another request.
    this.#res.shouldKeepAlive = false;
    this.#req.unpipe();
    this.#req.resume();
    this.#bb?.destroy();
    this.#streamed?.destroy(e instanceof Error ? e : undefined);
    this.#removeAll();
    this.#reject(e);
  }

  #removeAll(): void {
    for (const { path, out } of this.#sinks.splice(0)) {
      const remove = () => rm(path, { force: true }, () => {});
      if (out.closed) remove();
      else {
        out.once('close', remove);
        out.destroy();
      }
    }
  }
}

function digestPart(digest: Hash, kind: string, name: string, value: string): void {
  digest.update(`${kind}\0${Buffer.byteLength(name)}\0${name}\0${Buffer.byteLength(value)}\0`);
  digest.update(value);
}

/** busboy's parse errors: its header error is also what its fixed 16 KiB header bound gives. */
function malformed(e: unknown): Failure {
  const why = messageOf(e);
  return new Failure(
    400,
    why === 'Malformed part header'
      ? `form: malformed multipart body (a part's headers are malformed or larger than ${PART_HEADER_CEILING} bytes: maxPartHeaderBytes)`
      : `form: malformed multipart body (${why})`,
  );
}

/** The 415 of a part whose type the field's `types` does not list; a part that declared none is refused too. */
function typeRefusal(field: FileField, declaredType: string | null): Failure | null {
  if (field.types === null || (declaredType !== null && field.types.includes(declaredType)))
    return null;
  const accepted = field.types.join(', ');
  return new Failure(
    415,
    declaredType === null
      ? `form.${field.name}: the part declares no Content-Type (accepted: ${accepted})`
      : `form.${field.name}: type ${declaredType} is not accepted (${accepted})`,
  );
}

const tooLarge = (message: string) => new HttpError('UploadLimit', message);
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));
