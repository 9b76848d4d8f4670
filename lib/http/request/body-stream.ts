import type { ServerResponse } from 'node:http';
import { HttpError, clientGone } from '../core/errors';
import { waitForDrain } from '../../streams';

/**
 * An answer sent in pieces (`c.stream`, `c.streamWith`). `write` waits while the socket is full,
 * so a fast producer cannot pile the body up in memory.
 */
export class BodyStream {
  readonly #res: ServerResponse;
  readonly #length: number | null;
  #written = 0;
  #ended = false;

  /** @internal */
  constructor(res: ServerResponse, length: number | null) {
    this.#res = res;
    this.#length = length;
  }

  /** Bytes written so far. */
  get written(): number {
    return this.#written;
  }

  /** Writes one piece; resolves when the socket can take more. Writing past a declared length throws. */
  write(chunk: string | Uint8Array): Promise<void> {
    if (this.#ended)
      return Promise.reject(new HttpError('AlreadySent', 'write after the stream ended'));
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (this.#length !== null && this.#written + size > this.#length) {
      // The head promised a length: anything past it would corrupt the next answer on the connection.
      this.#res.destroy();
      return Promise.reject(
        new HttpError('BodyTooLarge', `stream of declared length ${this.#length} written past it`),
      );
    }
    this.#written += size;
    if (this.#res.write(chunk)) return Promise.resolve();
    return waitForDrain(this.#res, clientGone);
  }

  /** Ends the answer. Ending short of a declared length closes the connection (never a corrupt keep-alive). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#length !== null && this.#written !== this.#length) {
      this.#res.destroy();
      return;
    }
    this.#res.end();
  }
}
