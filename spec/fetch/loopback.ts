// Real loopback servers for the fw/fetch specs: node:http for well-behaved peers, node:net for
// the ones that lie (short bodies, silence, resets). No mocks anywhere.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client, type Scope } from 'fw-http/fetch';

export const run: Scope = { requestId: () => null };
export const ctx = (id = 'abc'): Scope => ({ requestId: () => id });

export interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
  socket: net.Socket;
}

export interface HttpPeer {
  url: string;
  origin: string;
  /** Connections the server has accepted so far. */
  connections: number;
  /** Requests in flight right now, and the most ever at once. */
  inFlight: number;
  maxInFlight: number;
  seen: Seen[];
  close(): Promise<void>;
}

/** Headers of a seen request with one name, in order, values only. */
export function linesNamed(s: Seen, name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.rawHeaders.length; i += 2)
    if (s.rawHeaders[i].toLowerCase() === name.toLowerCase()) out.push(s.rawHeaders[i + 1]);
  return out;
}

/** An http server; the handler gets the request after its body has been read (`seen.body`). */
export async function httpPeer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => unknown,
): Promise<HttpPeer> {
  const server = http.createServer();
  const peer: HttpPeer = {
    url: '',
    origin: '',
    connections: 0,
    inFlight: 0,
    maxInFlight: 0,
    seen: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', (socket: net.Socket) => {
    peer.connections++;
    socket.on('error', () => undefined);
  });
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    peer.inFlight++;
    peer.maxInFlight = Math.max(peer.maxInFlight, peer.inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        peer.inFlight--;
      }
    };
    res.on('close', finish);
    res.on('error', () => undefined);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      };
      peer.seen.push(seen);
      Promise.resolve(handler(req, res, seen)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  peer.origin = `http://127.0.0.1:${port}`;
  peer.url = peer.origin + '/';
  return peer;
}

export interface RawPeer {
  url: string;
  origin: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

/** A raw TCP server: `onRequest` gets the socket once a request head has arrived. */
export async function rawPeer(
  onRequest: (socket: net.Socket, head: string) => void,
): Promise<RawPeer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    peer.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buf.slice(0, end);
        buf = buf.slice(end + 4);
        onRequest(socket, head);
      }
    };
    socket.on('data', onData);
  });
  const peer: RawPeer = {
    url: '',
    origin: '',
    port: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.port = (server.address() as AddressInfo).port;
  peer.origin = `http://127.0.0.1:${peer.port}`;
  peer.url = peer.origin + '/';
  return peer;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until `cond()` holds, checking every 10 ms; fails after `ms`. */
export async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(10);
  }
}

/** The rejection of `p` (fails the test when `p` resolves). */
export async function rejection(
  p: Promise<unknown>,
): Promise<Error & { code?: string; cause?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection, got a value');
}

/** A port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Runs `body` with a started client of these settings, closed on every way out. */
export async function withClient(
  settings: ConstructorParameters<typeof Client>[0],
  body: (c: Client) => Promise<void>,
): Promise<void> {
  const c = new Client(settings);
  c.start();
  try {
    await body(c);
  } finally {
    await c.close();
  }
}
