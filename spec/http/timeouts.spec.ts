import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { WebSocket as WsClient } from 'ws';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';
import { WebSocketRoute } from 'fw-http/ws';
import { getOnce, settlesWithin } from '../support/hostile';

// writeTimeoutMs / idleTimeoutMs over real sockets, with small settings. A client that reads
// nothing of its answer loses its socket once no write made progress for writeTimeoutMs (and its
// in-flight slot with it); long streams and upgraded sockets hold no in-flight slot.

const BIG = 16 * 1024 * 1024; // well past what loopback's kernel buffers take in
const dir = mkdtempSync(join(tmpdir(), 'fw-timeouts-'));
const bigFile = join(dir, 'big.bin');
writeFileSync(bigFile, Buffer.alloc(BIG, 0x62));
const big = Buffer.alloc(BIG, 0x61);

const seen = { sse: [] as string[] };
let hold: Promise<void> = new Promise(() => {});

@Controller()
class SlowReaders {
  @Get('/big') big(c: Ctx) {
    c.send(200, 'application/octet-stream', big);
  }
  @Get('/file') file(c: Ctx) {
    return c.sendFile({ file: bigFile });
  }
  @Get('/stream') async stream(c: Ctx) {
    const out = c.stream(200, 'application/octet-stream');
    const piece = Buffer.alloc(64 * 1024, 0x63);
    for (let sent = 0; sent < BIG; sent += piece.length) await out.write(piece);
    out.end();
  }
  @Get('/sse') async sse(c: Ctx) {
    const events = c.events();
    const data = 'e'.repeat(60 * 1024);
    try {
      for (let i = 0; i < 1000; i++) await events.send({ data });
      seen.sse.push('finished');
    } catch (e) {
      seen.sse.push((e as Error).message);
    }
  }
  @Get('/quiet-sse') async quietSse(c: Ctx) {
    const events = c.events();
    await events.send({ data: 'hello' });
    await events.closed;
  }
  @Get('/ticking-sse') async tickingSse(c: Ctx) {
    const events = c.events();
    for (let i = 0; i < 6; i++) {
      await events.send({ data: `tick ${i}` });
      await new Promise((r) => setTimeout(r, 100));
    }
    events.close();
  }
  @Returns(String)
  @Get('/held')
  async held() {
    await hold;
    return 'late';
  }
  @Returns(String)
  @Get('/quick')
  quick() {
    return 'quick';
  }
  @WebSocketRoute('/ws', { origins: '*' }) ws(c: Ctx) {
    c.upgrade((socket) => socket.send('hi'), null);
  }
}

/** Sends a GET and reads nothing: the socket is paused, so the kernel buffers fill and the server's writes stall. */
async function stalled(port: number, path: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  await new Promise((r) => socket.once('connect', r));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return socket;
}

/** Resumes a stalled client and counts what it gets until the connection ends. */
function drain(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let n = 0;
    socket.on('data', (d: Buffer) => (n += d.length));
    socket.once('close', () => resolve(n));
    socket.once('error', () => undefined);
    socket.resume();
  });
}

const connections = (app: App) => () =>
  new Promise<number>((r) => app.server.getConnections((_e, n) => r(n)));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeTimeoutMs: a client that never reads its answer', () => {
  const app = new App({ log: () => {}, writeTimeoutMs: 300, idleTimeoutMs: 5_000 }).controllers(
    SlowReaders,
  );
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it.each(['/big', '/file', '/stream', '/sse'])(
    'LIMITS %s: loses its socket after writeTimeoutMs without write progress',
    async (path) => {
      seen.sse = [];
      const client = await stalled(port, path);
      await new Promise((r) => setTimeout(r, 100));
      expect(await connections(app)()).toBe(1);
      expect(await settlesWithin(connections(app), 0, 5_000)).toBe(0);
      const got = await drain(client);
      expect(got).toBeLessThan(BIG); // cut short: the rest of the answer was never sent
      if (path === '/sse') {
        await settlesWithin(() => 1 - seen.sse.length, 0);
        expect(seen.sse).toEqual(['the client went away']);
      }
      expect((await getOnce(port, '/quick')).body).toBe('quick');
    },
  );

  it('a handler that is silent for longer than writeTimeoutMs (nothing waiting to be sent) is not cut by it', async () => {
    let release: () => void = () => {};
    hold = new Promise((r) => (release = r));
    try {
      const answer = getOnce(port, '/held');
      await new Promise((r) => setTimeout(r, 900)); // three writeTimeoutMs spans, well inside idleTimeoutMs
      release();
      expect(await answer).toEqual({ status: 200, body: 'late' });
    } finally {
      hold = new Promise(() => {});
    }
  });

  it('a slow client that keeps reading is never cut: it gets the whole answer', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /file HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let n = 0;
    const done = new Promise<void>((r) => socket.once('close', () => r()));
    // Reads a little, then waits, for longer than writeTimeoutMs in all: the reads are the progress.
    socket.on('data', (d: Buffer) => {
      n += d.length;
      socket.pause();
      setTimeout(() => socket.resume(), 5);
    });
    await done;
    expect(n).toBeGreaterThan(BIG);
  });
});

describe('idleTimeoutMs: a connection on which nothing moves', () => {
  const app = new App({ log: () => {}, writeTimeoutMs: 5_000, idleTimeoutMs: 300 }).controllers(
    SlowReaders,
  );
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('LIMITS a handler that writes nothing for idleTimeoutMs loses its connection', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    const got = await drain(socket);
    expect(got).toBe(0);
    expect((await getOnce(port, '/quick')).body).toBe('quick');
  });

  it('LIMITS an event stream that sends more often than idleTimeoutMs stays open past it, to its end', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /ticking-sse HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    await new Promise((r) => socket.once('close', r));
    expect(text.match(/data: tick \d/g)).toEqual([
      'data: tick 0',
      'data: tick 1',
      'data: tick 2',
      'data: tick 3',
      'data: tick 4',
      'data: tick 5',
    ]);
  });

  it('LIMITS an event stream with nothing sent for idleTimeoutMs is closed', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /quiet-sse HTTP/1.1\r\nHost: x\r\n\r\n');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    await new Promise((r) => socket.once('close', r));
    expect(text).toContain('data: hello\n\n');
  });
});

describe('maxRequestsInFlight and answers that last', () => {
  it('LIMITS FAIL-30 two stalled readers stop holding their slots after writeTimeoutMs: others are served again', async () => {
    const app = new App({
      log: () => {},
      writeTimeoutMs: 300,
      idleTimeoutMs: 5_000,
      maxRequestsInFlight: 2,
    }).controllers(SlowReaders);
    const { port } = await app.listen();
    try {
      const a = await stalled(port, '/big');
      const b = await stalled(port, '/file');
      await new Promise((r) => setTimeout(r, 100));
      expect((await getOnce(port, '/quick')).status).toBe(503); // both slots are taken while the answers are stalled
      expect(await settlesWithin(connections(app), 0, 5_000)).toBe(0);
      expect((await getOnce(port, '/quick')).status).toBe(200);
      a.destroy();
      b.destroy();
    } finally {
      await app.close();
    }
  });

  it('LIMITS an open event stream and a running c.stream hold no in-flight slot', async () => {
    const app = new App({ log: () => {}, maxRequestsInFlight: 1 }).controllers(SlowReaders);
    const { port } = await app.listen();
    const sockets: Socket[] = [];
    try {
      for (const path of ['/quiet-sse', '/quiet-sse', '/stream']) {
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        await new Promise((r) => socket.once('connect', r));
        const first = new Promise((r) => socket.once('data', r));
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
        await first; // the stream has begun
        if (path === '/stream') socket.pause(); // held open, mid-stream
      }
      expect((await getOnce(port, '/quick')).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await app.close();
    }
  });

  it('LIMITS an upgraded WebSocket holds no in-flight slot', async () => {
    const app = new App({ log: () => {}, maxRequestsInFlight: 1 }).controllers(SlowReaders);
    const { port } = await app.listen();
    const ws = new WsClient(`ws://127.0.0.1:${port}/ws`);
    try {
      expect(
        await new Promise((resolve, reject) =>
          ws.once('message', (m) => resolve(m.toString())).once('error', reject),
        ),
      ).toBe('hi');
      expect((await getOnce(port, '/quick')).status).toBe(200);
      expect((await getOnce(port, '/quick')).status).toBe(200);
    } finally {
      ws.terminate();
      await app.close();
    }
  });

  it('LIMITS a held plain request still holds its slot (the bound is unchanged for ordinary answers)', async () => {
    let release: () => void = () => {};
    hold = new Promise((r) => (release = r));
    const app = new App({ log: () => {}, maxRequestsInFlight: 1 }).controllers(SlowReaders);
    const { port } = await app.listen();
    try {
      const held = getOnce(port, '/held');
      await new Promise((r) => setTimeout(r, 100));
      expect((await getOnce(port, '/quick')).status).toBe(503);
      release();
      expect((await held).body).toBe('late');
      expect((await getOnce(port, '/quick')).status).toBe(200);
    } finally {
      hold = new Promise(() => {});
      await app.close();
    }
  });
});
