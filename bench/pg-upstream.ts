// The upstream of the PgStore bench's atomic routes: a node:http server that answers every POST
// after a fixed delay (a warehouse taking its time), counting the calls and those that carried an
// Idempotency-Key (a Target with `idempotencyKeys: true` sends one derived from the order's).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the upstream saw: calls, and calls with an Idempotency-Key. */
export interface UpstreamCounts {
  readonly calls: number;
  readonly keyed: number;
}

/** A listening upstream: its port, its counts so far, a close. */
export interface Upstream {
  readonly port: number;
  counts(): UpstreamCounts;
  close(): Promise<void>;
}

const RESERVED = JSON.stringify({ reserved: true });

/**
 * Listens on loopback and answers `201 {"reserved":true}` `delayMs` after each request's body has
 * arrived.
 * @example const up = await listenUpstream(50); // http://127.0.0.1:${up.port}/reservations
 */
export async function listenUpstream(delayMs: number): Promise<Upstream> {
  let calls = 0;
  let keyed = 0;
  const server: Server = createServer((req, res) => {
    calls++;
    if (req.headers['idempotency-key'] !== undefined) keyed++;
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(201, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(RESERVED),
        });
        res.end(RESERVED);
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    counts: () => ({ calls, keyed }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
