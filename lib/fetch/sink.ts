import type { Writable } from 'node:stream';
import type { CallGuard } from './call-guard';
import { waitForDrain } from '../streams';

/**
 * A writer the caller owns, written by `pipe` and `stream`. Its errors surface unchanged from the
 * operation that hit them, not renamed to one of ours. Node reports a failed write to the write's
 * callback first and emits `error` a tick later, so the listener stays on once an error was seen —
 * removing it would turn that late event into an uncaught exception.
 */
export class Sink {
  readonly #w: Writable;
  readonly #guard: CallGuard;
  #error: Error | null = null;
  #last: Promise<void> | null = null;

  constructor(w: Writable, guard: CallGuard) {
    this.#w = w;
    this.#guard = guard;
    w.on('error', this.#onError);
  }

  /** Writes `chunk`; waits only when the writer asks for `drain`. */
  async write(chunk: Buffer): Promise<void> {
    this.#check();
    const w = this.#w;
    let ok = true;
    this.#last = new Promise<void>((resolve) => {
      ok = w.write(chunk, (err) => {
        if (err) this.#error ??= err;
        resolve();
      });
    });
    if (ok) return;
    await waitForDrain(w, null, this.#guard);
    this.#guard.throwIfAborted();
    this.#check();
  }

  /** Waits until the last write has been handed on, and throws what the writer reported. */
  async flush(): Promise<void> {
    if (this.#last) await this.#last;
    this.#check();
  }

  close(): void {
    if (!this.#error) this.#w.off('error', this.#onError);
  }

  #check(): void {
    if (this.#error) throw this.#error;
    const w = this.#w;
    if (w.errored) throw w.errored;
    if (w.destroyed || w.writableEnded) {
      throw Object.assign(new Error('write to a destroyed or ended writer'), {
        code: 'ERR_STREAM_DESTROYED',
      });
    }
  }

  readonly #onError = (e: Error): void => {
    this.#error ??= e;
  };
}
