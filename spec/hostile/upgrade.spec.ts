import { connect, type Socket } from 'node:net';
import { App, Controller, Ctx, Get, Post, Returns } from 'fw-http';
import { parseResponses, raw } from '../support/raw';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';

// Node hands every request carrying `Connection: Upgrade` to the server's 'upgrade' listener with
// its raw socket, out of the server's connection list and timers. On a route that is not a
// WebSocket route fw must serve it as ordinary HTTP, body and all, and let the socket go.

@Controller()
class PlainRoutes {
  @Returns(String)
  @Post('/echo')
  async echo(c: Ctx) {
    return `got ${(await c.body()).toString()}`;
  }
  @Returns(String)
  @Post('/ignores')
  ignores() {
    return 'answered without reading';
  }
  @Returns(String)
  @Post('/slow')
  async slow() {
    await new Promise((r) => setTimeout(r, 100));
    return 'late';
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

const upgradeHead = (path: string, extra: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: foo\r\n${extra}\r\n`;

function open(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => {});
  return new Promise((resolve, reject) =>
    s.once('connect', () => resolve(s)).once('error', reject),
  );
}

/** Resolves with everything the server wrote once it has closed the connection (rejects after `ms`). */
function readToClose(s: Socket, ms = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(new Error(`connection still open after ${ms} ms; got ${JSON.stringify(text)}`)),
      ms,
    );
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.once('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

describe('hostile Upgrade requests to routes that are not WebSocket routes', () => {
  const lines: string[] = [];
  const app = new App({
    log: (l) => lines.push(l),
    headTimeoutMs: 500,
    requestTimeoutMs: 600,
  }).controllers(PlainRoutes);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  it('a Content-Length body with Connection: Upgrade is read and answered as ordinary HTTP, then the connection closes', async () => {
    const { text, closed } = await raw(
      port,
      upgradeHead('/echo', 'Content-Length: 5\r\n') + 'hello',
      { quietMs: 2_000 },
    );
    const [r] = parseResponses(text);
    expect(r.status).toBe(200);
    expect(r.body).toBe('got hello');
    expect(r.headers.connection).toBe('close');
    expect(closed).toBe(true);
  });

  it('a chunked body (with a chunk extension and a trailer) sent in pieces is read whole', async () => {
    const s = await open(port);
    const done = readToClose(s);
    s.write(upgradeHead('/echo', 'Transfer-Encoding: chunked\r\n') + '3;ext=1\r\nabc\r');
    await new Promise((r) => setTimeout(r, 50));
    s.write('\n4\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n');
    const [r] = parseResponses(await done);
    expect(r.status).toBe(200);
    expect(r.body).toBe('got abcdefg');
  });

  it('a body that arrives after the head, in several writes, is waited for', async () => {
    const s = await open(port);
    const done = readToClose(s);
    s.write(upgradeHead('/echo', 'Content-Length: 10\r\n'));
    for (const piece of ['01234', '567', '89']) {
      await new Promise((r) => setTimeout(r, 30));
      s.write(piece);
    }
    expect(parseResponses(await done)[0].body).toBe('got 0123456789');
  });

  it('a body larger than the request stream buffers (512 KiB) is read whole', async () => {
    const s = await open(port);
    const done = readToClose(s);
    const body = Buffer.alloc(512 * 1024, 0x61);
    body[body.length - 1] = 0x7a;
    s.write(upgradeHead('/echo', `Content-Length: ${body.length}\r\n`));
    s.write(body);
    const [r] = parseResponses(await done);
    expect(r.body.length).toBe(4 + body.length);
    expect(r.body.endsWith('az')).toBe(true);
  });

  it('a route that answers without reading the body is answered, and the connection still closes', async () => {
    const s = await open(port);
    const done = readToClose(s);
    s.write(upgradeHead('/ignores', 'Content-Length: 100000\r\n') + 'x'.repeat(100_000));
    const [r] = parseResponses(await done);
    expect(r.status).toBe(200);
    expect(r.body).toBe('answered without reading');
  });

  it('a malformed chunked body is 400 in the default shape', async () => {
    const s = await open(port);
    const done = readToClose(s);
    s.write(upgradeHead('/echo', 'Transfer-Encoding: chunked\r\n') + 'zz\r\nabc\r\n');
    const [r] = parseResponses(await done);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ error: 'bad chunk size', status: 400 });
  });

  it('a Transfer-Encoding that does not end with chunked is 400, and those sockets are let go', async () => {
    const { text } = await raw(
      port,
      upgradeHead('/echo', 'Transfer-Encoding: gzip\r\n') + 'hello',
      { quietMs: 2_000 },
    );
    expect(parseResponses(text)[0].status).toBe(400);
    const fds = openDescriptors();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        const s = await open(port);
        const done = readToClose(s);
        s.write(upgradeHead('/echo', 'Transfer-Encoding: gzip\r\n') + 'x'.repeat(256 * 1024)); // more than the socket buffers unread
        expect(parseResponses(await done)[0].status).toBe(400);
      }),
    );
    expect(await settlesWithin(openDescriptors, fds + 5)).toBeLessThanOrEqual(fds + 5);
  });

  it('a body that stops arriving is 408 after requestTimeoutMs and the socket is let go', async () => {
    const s = await open(port);
    const done = readToClose(s);
    s.write(upgradeHead('/echo', 'Content-Length: 10\r\n') + 'abc');
    const [r] = parseResponses(await done);
    expect(r.status).toBe(408);
  });

  it('a client that resets in the middle of the body costs the server nothing but that request', async () => {
    const s = await open(port);
    s.write(upgradeHead('/echo', 'Content-Length: 1000\r\n') + 'abc');
    await new Promise((r) => setTimeout(r, 50));
    s.resetAndDestroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await getOnce(port, '/plain')).toEqual({ status: 200, body: 'plain' });
  });

  it('a client that resets before its answer is written costs the server nothing but that request', async () => {
    for (let i = 0; i < 5; i++) {
      const s = await open(port);
      s.write(upgradeHead('/slow', 'Content-Length: 0\r\n'));
      await new Promise((r) => setTimeout(r, 20));
      s.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(await getOnce(port, '/plain')).toEqual({ status: 200, body: 'plain' });
  });

  it('300 such requests (50 at a time) are each answered with their body; descriptors and heap settle back', async () => {
    expect(await getOnce(port, '/plain')).toEqual({ status: 200, body: 'plain' });
    const fds = openDescriptors();
    const heap = await heapAfterGc();
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const s = await open(port);
          const done = readToClose(s);
          const body = `r${round}i${i}`;
          s.write(upgradeHead('/echo', `Content-Length: ${body.length}\r\n`) + body);
          const [r] = parseResponses(await done);
          return r.body === `got ${body}`;
        }),
      );
      expect(answers.every(Boolean)).toBe(true);
    }
    expect(await settlesWithin(openDescriptors, fds + 5)).toBeLessThanOrEqual(fds + 5);
    expect(await settlesWithin(heapAfterGc, heap + 8 * 1024 * 1024)).toBeLessThanOrEqual(
      heap + 8 * 1024 * 1024,
    );
    expect(await getOnce(port, '/plain')).toEqual({ status: 200, body: 'plain' });
  });

  it('app.close() finishes while such a socket is open (its body still owed), and that socket is closed', async () => {
    const other = new App({ log: () => {}, closeGraceMs: 200 }).controllers(PlainRoutes);
    const p = (await other.listen()).port;
    const waiting = await open(p);
    const waitingClosed = new Promise<void>((r) => waiting.once('close', () => r()));
    waiting.resume();
    waiting.write(upgradeHead('/echo', 'Content-Length: 100\r\n') + 'only part');
    const answered = await open(p);
    const answeredClosed = new Promise<void>((r) => answered.once('close', () => r()));
    answered.resume();
    answered.write(upgradeHead('/ignores', 'Content-Length: 3\r\n') + 'abc');
    await new Promise((r) => setTimeout(r, 100));
    await other.close();
    let timer: NodeJS.Timeout | undefined;
    const outlived = new Promise(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error('an upgraded socket outlived close()')), 3_000)),
    );
    await Promise.race([Promise.all([waitingClosed, answeredClosed]), outlived]).finally(() =>
      clearTimeout(timer),
    );
    expect(waiting.destroyed && answered.destroyed).toBe(true);
  });
});
