import { checkWhole } from '../../options';
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../core/errors';

/** `c.body()` and `@Body()` read at most one megabyte (binary: 1,048,576 bytes). */
export const BODY_LIMIT = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The whole request body when it is here already: none declared, or every declared byte buffered
 * in the request. Null when it has to be waited for (`readBody`). Refuses (413) a declared length
 * over `limit` before anything is read.
 */
export function bufferedBody(req: IncomingMessage, limit: number): Buffer | null {
  const length = req.headers['content-length'];
  if (length === undefined) {
    if (req.headers['transfer-encoding'] === undefined || req.readableEnded) return EMPTY;
    return req.complete ? readBuffered(req, limit) : null;
  }
  if (length === '0' || req.readableEnded) return EMPTY;
  const n = Number(length);
  if (n > limit) throw tooLarge(limit);
  return req.complete || req.readableLength >= n ? readBuffered(req, limit) : null;
}

/** The whole body, already parsed and buffered in the request: one read, no listeners, no ticks. */
function readBuffered(req: IncomingMessage, limit: number): Buffer {
  const body = (req.read() as Buffer | null) ?? EMPTY;
  if (body.length > limit) throw tooLarge(limit);
  // Every declared byte is here but the parser has not marked the message complete yet: its end
  // comes after this read, and a paused stream never emits 'end' for it. node:http lets go of a
  // request (its socket's parser drops it) only once 'end' has fired, so each keep-alive connection
  // would keep its last request until the next one. Flowing, the stream ends as soon as it can.
  if (!req.complete) req.resume();
  return body;
}

/** Reads a body that is still arriving, refusing it (413) as soon as it passes `limit`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Two listeners and no clean-up on the happy path: the request is done once 'end' fires.
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // An aborted or timed-out request errors ('aborted', ECONNRESET): the body stopped arriving.
    req.on('error', () => reject(new HttpError('BodyTooSlow', 'request body did not arrive')));
  });
}

const tooLarge = (limit: number) =>
  new HttpError('BodyTooLarge', `request body is larger than ${limit} bytes`);

/** A body limit as given (`App({ maxBodyBytes })`, `@BodyLimit`), checked; the default when not given. */
export function bodyLimitOf(bytes: number | undefined, where: string): number {
  if (bytes === undefined) return BODY_LIMIT;
  return checkWhole({ where }, 'the body limit', bytes, { unit: 'bytes', min: 1 });
}
