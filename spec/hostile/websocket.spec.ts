import { WebSocket as Client } from 'ws';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';
import { WebSocketRoute } from 'fw-http/ws';
import { closePayload, frame, rawWebSocket, type FrameSpec } from '../support/frames';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';

// Malformed frames, oversized messages and silent peers against a real server. The loops are the
// README's echo, as written: whatever a peer sends, fw owns the socket's errors, so no route needs
// an 'error' listener of its own.

@Controller('/ws')
class HostileSockets {
  @WebSocketRoute('/echo', { origins: '*' }) echo(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null);
  }
  @WebSocketRoute('/small', { origins: '*', maxMessageBytes: 64 }) small(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null);
  }
  @WebSocketRoute('/pinged', { origins: '*', pingIntervalMs: 100 }) pinged(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null);
  }
  @WebSocketRoute('/idle', { origins: '*', idleTimeoutMs: 300 }) idle(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m, binary) => ws.send(m, { binary })), null);
  }
  @WebSocketRoute('/throws', { origins: '*' }) throws(c: Ctx) {
    c.upgrade((ws) => ws.on('message', (m) => JSON.parse(m.toString())), null);
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

/** A well-behaved client: resolves once open; `close` resolves with the code and reason it got. */
function client(
  url: string,
): Promise<{ ws: Client; close: Promise<{ code: number; reason: string }> }> {
  return new Promise((resolve, reject) => {
    const ws = new Client(url);
    const close = new Promise<{ code: number; reason: string }>((r) =>
      ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.once('open', () => resolve({ ws, close }));
    ws.once('error', reject);
  });
}

const reply = (ws: Client) =>
  new Promise<Buffer>((resolve) => ws.once('message', (d) => resolve(d as Buffer)));

const until = async (ok: () => boolean, withinMs = 5_000) => {
  const end = Date.now() + withinMs;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

describe('hostile WebSocket peers', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(HostileSockets);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  /** The server still echoes on a second WebSocket and still answers a plain GET. */
  async function stillServes(): Promise<void> {
    const { ws } = await client(`ws://127.0.0.1:${port}/ws/echo`);
    const r = reply(ws);
    ws.send('still here');
    expect((await r).toString()).toBe('still here');
    ws.close();
    expect(await getOnce(port, '/ws/plain')).toEqual({ status: 200, body: 'plain' });
  }

  const malformed: [string, number, FrameSpec[]][] = [
    ['an unmasked client frame', 1002, [{ opcode: 0x1, payload: 'hi', mask: false }]],
    [
      'a declared length past maxMessageBytes (2^40 bytes)',
      1009,
      [{ opcode: 0x2, declaredLength: 2 ** 40 }],
    ],
    ['a reserved opcode (0x3)', 1002, [{ opcode: 0x3, payload: 'x' }]],
    ['RSV1 set with no extension agreed', 1002, [{ opcode: 0x1, payload: 'x', rsv: 4 }]],
    ['RSV2 and RSV3 set', 1002, [{ opcode: 0x2, payload: 'x', rsv: 3 }]],
    [
      'a text message that is not UTF-8',
      1007,
      [{ opcode: 0x1, payload: Buffer.from([0x68, 0xc3, 0x28]) }],
    ],
    [
      'a close frame with a reserved code (999)',
      1002,
      [{ opcode: 0x8, payload: closePayload(999) }],
    ],
    [
      'a close frame with code 1005 (never sent on the wire)',
      1002,
      [{ opcode: 0x8, payload: closePayload(1005) }],
    ],
    ['a close frame with a one-byte payload', 1002, [{ opcode: 0x8, payload: Buffer.from([3]) }]],
    ['a fragmented control frame (ping without FIN)', 1002, [{ opcode: 0x9, fin: false }]],
    ['a continuation frame with no message begun', 1002, [{ opcode: 0x0, payload: 'x' }]],
  ];

  it.each(malformed)(
    '%s: closed with %i, one log line, and the process and other connections go on',
    async (_name, code, frames) => {
      const before = lines.length;
      const peer = await rawWebSocket(port, '/ws/echo');
      peer.socket.write(Buffer.concat(frames.map(frame)));
      expect(await peer.closed).toBe(code);
      await peer.gone.then(undefined, () => undefined);
      peer.socket.destroy();
      await until(() => lines.length > before);
      const logged = lines.slice(before);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('GET /ws/echo');
      expect(logged[0]).toContain(String(code));
      await stillServes();
    },
  );

  it('a message of exactly maxMessageBytes is echoed, one byte more closes with 1009 (LIMITS)', async () => {
    const { ws, close } = await client(`ws://127.0.0.1:${port}/ws/small`);
    const r = reply(ws);
    ws.send(Buffer.alloc(64, 1));
    expect((await r).length).toBe(64);
    ws.send(Buffer.alloc(65, 1));
    expect((await close).code).toBe(1009);
    await stillServes();
  });

  it('a message split into fragments counts whole against maxMessageBytes: 40 + 25 bytes closes with 1009', async () => {
    const peer = await rawWebSocket(port, '/ws/small');
    peer.socket.write(frame({ opcode: 0x2, fin: false, payload: Buffer.alloc(40) }));
    peer.socket.write(frame({ opcode: 0x0, payload: Buffer.alloc(25) }));
    expect(await peer.closed).toBe(1009);
    peer.socket.destroy();
  });

  it('maxMessageBytes defaults to 1 MiB: a message of exactly 1 MiB is echoed, one byte more closes with 1009', async () => {
    const { ws, close } = await client(`ws://127.0.0.1:${port}/ws/echo`);
    const r = reply(ws);
    ws.send(Buffer.alloc(1024 * 1024, 7));
    expect((await r).length).toBe(1024 * 1024);
    ws.send(Buffer.alloc(1024 * 1024 + 1, 7));
    expect((await close).code).toBe(1009);
  });

  it('a peer that never answers a ping is cut after the dead-peer timeout (pingIntervalMs); one that answers stays', async () => {
    const silent = await rawWebSocket(port, '/ws/pinged');
    const answering = await client(`ws://127.0.0.1:${port}/ws/pinged`); // the ws client answers pings itself
    await silent.gone;
    expect(silent.frames.some((f) => f.opcode === 0x9)).toBe(true);
    expect(answering.ws.readyState).toBe(Client.OPEN);
    const r = reply(answering.ws);
    answering.ws.send('alive');
    expect((await r).toString()).toBe('alive');
    answering.ws.close();
  });

  it('a socket with no message either way for idleTimeoutMs is closed with 1001 "idle timeout"; messages keep it open', async () => {
    const quiet = await client(`ws://127.0.0.1:${port}/ws/idle`);
    const busy = await client(`ws://127.0.0.1:${port}/ws/idle`);
    let closedBusy = false;
    void busy.close.then(() => (closedBusy = true));
    for (let i = 0; i < 8; i++) {
      // 8 × 100 ms: well past one idle timeout in all, never one without a message
      const r = reply(busy.ws);
      busy.ws.send(`tick ${i}`);
      await r;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(await quiet.close).toEqual({ code: 1001, reason: 'idle timeout' });
    expect(closedBusy).toBe(false);
    expect(await busy.close).toEqual({ code: 1001, reason: 'idle timeout' });
  });

  it('a message listener that throws closes that socket with 1011 and is logged; the process goes on', async () => {
    const before = lines.length;
    const { ws, close } = await client(`ws://127.0.0.1:${port}/ws/throws`);
    ws.send('not json');
    expect((await close).code).toBe(1011);
    await until(() => lines.length > before);
    expect(lines.slice(before).join('\n')).toMatch(
      /GET \/ws\/throws WebSocket loop failed: .*JSON/,
    );
    await stillServes();
  });

  it('a burst of 100 malformed peers leaves descriptors and heap after GC back within a bound', async () => {
    await stillServes();
    const fds = openDescriptors();
    const heap = await heapAfterGc();
    for (let round = 0; round < 4; round++) {
      const peers = await Promise.all(
        Array.from({ length: 25 }, () => rawWebSocket(port, '/ws/echo')),
      );
      for (const p of peers) p.socket.write(frame({ opcode: 0x1, payload: Buffer.from([0xff]) }));
      expect(await Promise.all(peers.map((p) => p.closed))).toEqual(Array(25).fill(1007));
      for (const p of peers) p.socket.destroy();
    }
    expect(await settlesWithin(openDescriptors, fds + 5)).toBeLessThanOrEqual(fds + 5);
    expect(await settlesWithin(heapAfterGc, heap + 8 * 1024 * 1024)).toBeLessThanOrEqual(
      heap + 8 * 1024 * 1024,
    );
    await stillServes();
  });
});
