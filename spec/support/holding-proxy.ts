import net from 'node:net';

/** A TCP proxy on loopback in front of one server, which can stop answering new connections. */
export interface HoldingProxy {
  readonly port: number;
  /** Connections made from now on are accepted and never answered; those already made go on. */
  hold(): void;
  /** Connections made from now on reach the server again. */
  release(): void;
  /** Connections that reach the server now. */
  live(): number;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target` on a free loopback port. Holding it makes a client's new connections
 * hang as a server that stopped answering would, while one it already holds (a subscription, say)
 * still gets what the server sends.
 */
export async function startHoldingProxy(target: {
  readonly host: string;
  readonly port: number;
}): Promise<HoldingProxy> {
  let holding = false;
  const sockets = new Set<net.Socket>();
  let live = 0;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (holding) return;
    const upstream = net.connect(target.port, target.host);
    sockets.add(upstream);
    live += 1;
    upstream.on('close', () => {
      live -= 1;
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
    },
    live: () => live,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
