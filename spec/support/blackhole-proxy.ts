import net from 'node:net';

/** A TCP proxy on loopback whose connections can go silent both ways while staying open. */
export interface BlackholeProxy {
  readonly port: number;
  /** From now on, bytes on connections already made are dropped both ways (new connections still pass). */
  blackhole(): void;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target` on a free loopback port. Blackholed, a connection behaves as a
 * network path that lost every packet: nothing arrives, nothing fails, until one side closes it
 * (the proxy then closes the other side, as the server would see its client go).
 */
export async function startBlackholeProxy(target: {
  readonly host: string;
  readonly port: number;
}): Promise<BlackholeProxy> {
  const sockets = new Set<net.Socket>();
  let silentBelow = 0;
  let made = 0;
  const server = net.createServer((client) => {
    const n = made++;
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    const pass = (into: net.Socket) => (chunk: Buffer) => {
      if (n >= silentBelow) into.write(chunk);
    };
    client.on('data', pass(upstream));
    upstream.on('data', pass(client));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole: () => {
      silentBelow = made;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
