import type { Socket } from 'node:net';
import { WebSocket as Client } from 'ws';
import { App, Controller, Ctx } from 'fw-http';
import { WebSocketRoute } from 'fw-http/ws';
import { heapAfterGc } from '../support/hostile';

// A peer that sends and never reads. The route is the guide's echo as written: every
// message the peer sends is answered, and the answers pile up behind a peer that takes none. fw
// bounds what waits per socket (`maxBufferedBytes`, default 4 MiB): past it the socket is closed
// with 1008 and later sends are dropped, so the server's memory stays bounded however much the
// peer sends. Before the bound, 160 MiB sent grew the server by about as much.

@Controller('/ws')
class Echo {
  @WebSocketRoute('/echo', { origins: '*' }) echo(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null);
  }
}

const MiB = 1024 * 1024;

@Controller('/ws')
class Flood {
  /** Sends 32 MiB as soon as the peer is in, whether it reads or not. */
  @WebSocketRoute('/flood', { origins: '*', maxBufferedBytes: 64 * MiB }) flood(c: Ctx) {
    c.upgrade((ws) => ws.send(Buffer.alloc(32 * MiB, 0x62)), null);
  }
}

/** The process's resident memory after full collections (the server under test runs in it). */
async function rssAfterGc(): Promise<number> {
  await heapAfterGc();
  return process.memoryUsage().rss;
}

describe('a WebSocket peer that never reads', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(Echo);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  it('a peer that pauses its socket and keeps sending 1 MiB messages is closed with 1008; the server stays within a bound', async () => {
    const ws = new Client(`ws://127.0.0.1:${port}/ws/echo`, { maxPayload: 256 * MiB });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    (ws as unknown as { _socket: Socket })._socket.pause();
    const before = await rssAfterGc();
    const message = Buffer.alloc(MiB, 0x61);
    let peak = 0;
    for (let sent = 0; sent < 160; sent++) {
      ws.send(message);
      // The client's own queue is not the server's: wait until the server has read what was sent.
      while (ws.bufferedAmount > 4 * MiB) await new Promise((r) => setTimeout(r, 5));
      if (sent % 32 === 31) peak = Math.max(peak, (await rssAfterGc()) - before);
    }
    while (ws.bufferedAmount > 0) await new Promise((r) => setTimeout(r, 5));
    peak = Math.max(peak, (await rssAfterGc()) - before);
    expect(peak).toBeLessThan(64 * MiB);
    (ws as unknown as { _socket: Socket })._socket.resume();
    expect(await closed).toBe(1008);
    expect(lines.some((l) => l.includes('closed 1008: peer not reading'))).toBe(true);
  }, 120_000);
});

describe('the write timeout on upgraded sockets', () => {
  const app = new App({ log: () => {}, writeTimeoutMs: 1_000 }).controllers(Flood);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  it('a WebSocket whose peer takes nothing is cut after writeTimeoutMs (ws turns the socket timer off)', async () => {
    const cut = new Promise<number>((resolve) =>
      app.server.once('connection', (theirs: Socket) => {
        const started = performance.now();
        theirs.once('close', () => resolve(performance.now() - started));
      }),
    );
    const ws = new Client(`ws://127.0.0.1:${port}/ws/flood`, { maxPayload: 256 * MiB });
    ws.on('error', () => {});
    await new Promise((r) => ws.once('upgrade', r));
    (ws as unknown as { _socket: Socket })._socket.pause();
    const ms = await Promise.race([
      cut,
      new Promise<number>((r) => setTimeout(() => r(-1), 15_000)),
    ]);
    ws.terminate();
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(5_000); // without the watch: never (the ping cut comes at 60 s)
  }, 30_000);
});
