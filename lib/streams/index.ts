/**
 * What fw's modules share about writing to a Node stream: the wait for `drain`. lib/http (an answer
 * in pieces, an event stream, a file) and lib/fetch (a body piped into the caller's writer) both
 * wait for it, and lib/fetch may not import lib/http, so it lives here. Like lib/errors, this
 * module imports nothing of fw's.
 */
import type { EventEmitter } from 'node:events';

/** A writer to wait on: a `Writable`, a `ServerResponse`, or anything that emits as they do. */
export type Drainable = EventEmitter & { readonly destroyed?: boolean };

/** Something besides the writer that may end a wait (fw/fetch's call guard): it runs the listener once. */
export interface WaitEnd {
  onEnd(fn: () => void): void;
  offEnd(fn: () => void): void;
}

/**
 * Waits until `w` takes more after a `write` answered false. Resolves on its `drain`. When it can
 * no longer drain — destroyed already, or `close` or `error` comes first, or `end` ends the wait —
 * rejects with `gone()` when given, else resolves (the caller then looks at why). Every listener
 * is gone once it settles.
 *
 * @example if (!res.write(chunk)) await waitForDrain(res, clientWentAway);
 */
export function waitForDrain(
  w: Drainable,
  gone: (() => Error) | null = null,
  end: WaitEnd | null = null,
): Promise<void> {
  if (w.destroyed === true) return gone === null ? Promise.resolve() : Promise.reject(gone());
  return new Promise<void>((resolve, reject) => {
    const off = (): void => {
      w.off('drain', drained);
      w.off('close', stopped);
      w.off('error', stopped);
      end?.offEnd(stopped);
    };
    const drained = (): void => {
      off();
      resolve();
    };
    const stopped = (): void => {
      off();
      if (gone === null) resolve();
      else reject(gone());
    };
    w.on('drain', drained);
    w.on('close', stopped);
    w.on('error', stopped);
    end?.onEnd(stopped);
  });
}
