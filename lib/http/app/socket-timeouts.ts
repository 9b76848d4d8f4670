import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** A socket whose timer ran out: its counters then (any change since is activity) and the quiet time proven so far. */
interface Quiet {
  read: number;
  written: number;
  queue: number;
  quietMs: number;
}

type ServerSocket = Socket & {
  _httpMessage?: unknown;
  _handle?: { writeQueueSize?: number } | null;
};

/**
 * The write and idle timeouts (`writeTimeoutMs`, `idleTimeoutMs`), on the one timer Node already
 * keeps per socket: it is pushed back by every byte read, every write handed to the socket and
 * every write the kernel completes, so the request path does no work for them. When it runs out
 * (nothing moved for its span), an answer with bytes still waiting to leave has made no write
 * progress: past `writeMs` the socket is cut. With nothing waiting the connection is idle: past
 * `idleMs` it is cut. The timer runs at the shorter of the two and counts quiet spans until the
 * longer is reached. Cutting the socket ends the answer, frees its in-flight slot and closes its
 * file. 0 turns a timeout off. Upgraded sockets leave the server's timer (the WebSocket owns them).
 */
export function watchTimeouts(server: Server, writeMs: number, idleMs: number): void {
  const tick = Math.min(writeMs || Infinity, idleMs || Infinity);
  if (tick === Infinity) return;
  const seen = new WeakMap<Socket, Quiet>();
  server.timeout = tick;
  server.on('timeout', (socket: ServerSocket) => {
    // No answer under way: the keep-alive wait ran out or a head stopped arriving (headTimeoutMs
    // answers that one first by default). What Node does when nobody listens for 'timeout'.
    if (!socket._httpMessage) {
      socket.destroy();
      return;
    }
    const read = socket.bytesRead;
    const written = socket.bytesWritten;
    const queue = socket._handle?.writeQueueSize ?? 0;
    let q = seen.get(socket);
    if (q === undefined || q.read !== read || q.written !== written || q.queue !== queue)
      seen.set(socket, (q = { read, written, queue, quietMs: 0 }));
    q.quietMs += socket.timeout ?? tick;
    const limit = socket.writableLength > 0 || queue > 0 ? writeMs : idleMs;
    if (limit !== 0 && q.quietMs >= limit) {
      socket.destroy();
      return;
    }
    socket.setTimeout(limit === 0 ? tick : Math.min(tick, limit - q.quietMs));
  });
}
