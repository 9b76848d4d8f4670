import type { Socket } from 'node:net';

type Handled = Socket & { _handle?: { writeQueueSize?: number } | null };

/** What a socket had written when it was last seen with bytes waiting, and since when nothing moved. */
interface Seen {
  /** Bytes whose write completed (`bytesWritten` counts what is still queued, `writableLength` takes it back). */
  done: number;
  /** Bytes libuv still holds of the write under way: it shrinks as the kernel takes a large write piece by piece. */
  queue: number;
  since: number;
}

/** How often sockets are looked at: an eighth of the timeout, at most every second, at least every 10 ms. */
export const stallTick = (writeMs: number): number =>
  Math.max(10, Math.min(1_000, Math.floor(writeMs / 8)));

/**
 * The write timeout (`writeTimeoutMs`): a socket with bytes waiting to leave that makes no write
 * progress for `writeMs` is cut, at most two ticks later (a tick is an eighth of `writeMs`, at
 * most 1 s: 60–62 s at the default 60 s).
 *
 * Not on the socket's own timer: Node skips that timer's first expiry while a write's queue has
 * changed since it was handed over, so a stalled reader was cut only after twice the timeout; and
 * `ws` turns that timer off on the sockets it takes. One interval per app looks at every socket
 * it was given (kept connections, upgraded sockets, WebSockets), the way Node's own
 * `connectionsCheckingInterval` looks for slow heads; the request path does nothing for it.
 * Progress is a write completing or the kernel taking part of one; a new write alone is not.
 */
export class StallWatch {
  readonly #writeMs: number;
  readonly #sockets = new Map<Socket, Seen | null>();
  readonly #tick: number;
  #timer: NodeJS.Timeout | null = null;
  #last = 0;

  constructor(writeMs: number) {
    this.#writeMs = writeMs;
    this.#tick = stallTick(writeMs);
  }

  /** Watches `socket` until it closes (nothing when the timeout is off). */
  add(socket: Socket): void {
    if (this.#writeMs <= 0 || this.#sockets.has(socket) || socket.destroyed) return;
    this.#sockets.set(socket, null);
    socket.once('close', () => this.#sockets.delete(socket));
    if (this.#timer === null) {
      this.#last = performance.now();
      this.#timer = setInterval(() => this.#sweep(), this.#tick).unref();
    }
  }

  /** Stops the interval (at close; sockets still watched are left to the close). */
  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #sweep(): void {
    const now = performance.now();
    // A sweep that comes late found the process busy (a long GC, a loaded machine): the peer may
    // have read all along, its reads still queued behind this timer. That time is not its silence.
    const late = now - this.#last - this.#tick;
    this.#last = now;
    for (const [socket, seen] of this.#sockets) {
      if (seen !== null && late > this.#tick) seen.since += late;
      const s = socket as Handled;
      const queue = s._handle?.writeQueueSize ?? 0;
      if (s.writableLength === 0 && queue === 0) {
        if (seen !== null) this.#sockets.set(socket, null);
        continue;
      }
      const done = (s.bytesWritten ?? 0) - s.writableLength;
      if (seen === null || seen.done !== done || seen.queue !== queue) {
        this.#sockets.set(socket, { done, queue, since: now });
      } else if (now - seen.since >= this.#writeMs) {
        this.#sockets.delete(socket);
        socket.destroy();
      }
    }
  }
}
