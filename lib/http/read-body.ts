import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors';

/** `c.body()` and `@Body()` read at most one megabyte (binary: 1,048,576 bytes). */
export const BODY_LIMIT = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** Reads a request body, refusing it (413) as soon as it passes `limit`; the Content-Length is checked before reading. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > limit) return Promise.reject(tooLarge(limit));
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined) || req.readableEnded) {
    return Promise.resolve(EMPTY);
  }
  // Node's parser hands a body that came in the head's packet to the request after the handler has
  // started, but before any promise settles: one microtask later it is usually all buffered, and
  // taking it in one read spares the listeners and the ticks of a flowing stream.
  return Promise.resolve(req).then((r) => (arrived(r, length) ? readBuffered(r, limit) : readFlowing(r, limit)));
}

/** The whole body is buffered: the message is complete, or as many bytes as it declared are here. */
const arrived = (req: IncomingMessage, length: string | undefined): boolean =>
  req.complete || (length !== undefined && req.readableLength >= Number(length));

/** The whole body, already parsed and buffered in the request. */
function readBuffered(req: IncomingMessage, limit: number): Buffer {
  const body = (req.read() as Buffer | null) ?? EMPTY;
  if (body.length > limit) throw tooLarge(limit);
  return body;
}

function readFlowing(req: IncomingMessage, limit: number): Promise<Buffer> {
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
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    // An aborted or timed-out request errors ('aborted', ECONNRESET): the body stopped arriving.
    req.on('error', () => reject(new HttpError('BodyTooSlow', 'request body did not arrive')));
  });
}

const tooLarge = (limit: number) => new HttpError('BodyTooLarge', `request body is larger than ${limit} bytes`);
