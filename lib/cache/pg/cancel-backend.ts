import net from 'node:net';

/** What a connected `pg.Client` knows of its server and its backend (set by `BackendKeyData`). */
export interface CancelTarget {
  readonly host?: string;
  readonly port?: number;
  readonly processID?: number | null;
  readonly secretKey?: number | null;
}

/** How long the cancel request's own connection may take: it is best effort, never awaited by a request. */
const CANCEL_WITHIN_MS = 2000;

/**
 * Asks Postgres to cancel the statement running on `client`'s backend: the protocol's
 * CancelRequest (the one `pg`'s own `cancel` sends) on a connection of its own, so it needs no
 * pooled connection (a full pool cannot hold it up) and no login. The statement then fails 57014
 * and the backend is free at once, where a connection merely dropped would leave it running until
 * it next writes to its client. Best effort: failures are ignored.
 */
export function cancelBackend(client: CancelTarget): void {
  const { processID, secretKey } = client;
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return;
  const host = client.host ?? 'localhost';
  const port = client.port ?? 5432;
  const socket = host.startsWith('/')
    ? net.connect(`${host}/.s.PGSQL.${port}`)
    : net.connect(port, host);
  socket.setTimeout(CANCEL_WITHIN_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => {
    const request = Buffer.alloc(16);
    request.writeInt32BE(16, 0);
    request.writeInt32BE(80877102, 4); // the CancelRequest code: 1234 << 16 | 5678
    request.writeInt32BE(processID, 8);
    request.writeInt32BE(secretKey, 12);
    // The server closes the connection once it has read the request.
    socket.end(request);
  });
  socket.unref();
}
