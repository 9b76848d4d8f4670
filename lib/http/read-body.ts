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
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = () => {
      cleanup();
      reject(new HttpError('BodyTooSlow', 'request body did not arrive'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onError);
  });
}

const tooLarge = (limit: number) => new HttpError('BodyTooLarge', `request body is larger than ${limit} bytes`);
