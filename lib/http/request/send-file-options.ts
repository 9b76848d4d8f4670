import type { FileHandle } from 'node:fs/promises';

/** What `c.sendFile` sends. */
export interface SendFileOptions {
  /** An open file (closed when the answer ends, whatever happens) or a path to open. */
  readonly file: FileHandle | string;
  /** The ETag to send and compare; default `"<mtime hex>-<size hex>"` from the open descriptor. A bare value is quoted. */
  readonly etag?: string;
  /** Bytes to send (the file's first `size`); default the descriptor's size. */
  readonly size?: number;
  /** Sent as `Cache-Control` when given and not empty. */
  readonly cacheControl?: string;
  /** Default `application/octet-stream`. */
  readonly contentType?: string;
}
