import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { StallWatch } from '../core/stall-watch';

type ServerSocket = Socket & {
  _httpMessage?: unknown;
  _handle?: { writeQueueSize?: number } | null;
};

/**
 * The write and idle timeouts (`writeTimeoutMs`, `idleTimeoutMs`) of a server's connections.
 * Write stalls are the `StallWatch`'s (returned, so upgraded sockets can join it). Idleness is on
 * the one timer Node already keeps per socket, pushed back by every byte read, every write handed
 * over and every write completed: when it runs out with nothing waiting to leave, nothing moved
 * for `idleMs` and the socket is cut (with bytes waiting, the stall watch decides). Cutting the
 * socket ends the answer, frees its in-flight slot and closes its file. 0 turns a timeout off.
 */
export function watchTimeouts(server: Server, writeMs: number, idleMs: number): StallWatch {
  const stalls = new StallWatch(writeMs);
  if (writeMs > 0) server.on('connection', (socket: Socket) => stalls.add(socket));
  if (idleMs <= 0) return stalls;
  server.timeout = idleMs;
  server.on('timeout', (socket: ServerSocket) => {
    // No answer under way: the keep-alive wait ran out or a head stopped arriving (headTimeoutMs
    // answers that one first by default). What Node does when nobody listens for 'timeout'.
    if (!socket._httpMessage) {
      socket.destroy();
      return;
    }
    const waiting = socket.writableLength > 0 || (socket._handle?.writeQueueSize ?? 0) > 0;
    if (waiting) socket.setTimeout(idleMs);
    else socket.destroy();
  });
  return stalls;
}
