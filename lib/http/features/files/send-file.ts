import { open, type FileHandle } from 'node:fs/promises';
import type { Ctx } from '../../request/ctx';
import type { SendFileOptions } from '../../request/send-file-options';
import { HttpError } from '../../core/errors';
import { OCTET_STREAM } from '../../core/media-types';
import { answerOpenFile, missingAsNotFound } from './file-answer';
import { exchangeOf } from '../../request/exchange-of';

export type { SendFileOptions } from '../../request/send-file-options';

/**
 * `c.sendFile`: answers with a file through the shared file answer (ranges, If-Range,
 * If-None-Match, HEAD). The promise is also kept on the Ctx, so a handler that forgets to await
 * it still has its answer (and its failures) go through the route's pipeline.
 */
export function sendFile(c: Ctx, options: SendFileOptions): Promise<void> {
  const p = send(c, options);
  if (exchangeOf(c).answering === null) exchangeOf(c).answering = p;
  p.catch(ignore); // reported by the route's pipeline; never an unhandled rejection
  return p;
}

async function send(c: Ctx, options: SendFileOptions): Promise<void> {
  let owned: FileHandle | null = typeof options.file === 'string' ? null : options.file;
  try {
    exchangeOf(c).ownAnswer();
    if (c.sent || exchangeOf(c).answering !== null)
      throw new HttpError('AlreadySent', 'c.sendFile after the answer was sent or begun');
    if (owned === null) owned = await openPath(options.file as string);
    const handle = owned;
    owned = null; // from here the shared answer closes it
    await answerOpenFile(c, handle, {
      contentType: options.contentType ?? OCTET_STREAM,
      cacheControl: options.cacheControl ?? '',
      own: null,
      etag: options.etag,
      size: options.size,
    });
  } finally {
    if (owned !== null) await owned.close().catch(ignore);
  }
}

async function openPath(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (e) {
    throw missingAsNotFound(e);
  }
}

const ignore = (): void => {};
