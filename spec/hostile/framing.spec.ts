import { connect, type Socket } from 'node:net';
import { App, Controller, Ctx, Get, Post, Returns, Body } from 'fw-http';
import { IsString } from 'class-validator';
import { getOnce } from '../support/hostile';
import { raw } from '../support/raw';

// Framing a hostile client gets wrong on purpose: a bad request pipelined behind an
// answer under way, more header lines than node keeps, HTTP/1.0 with Transfer-Encoding, two Host
// headers, and a Transfer-Encoding that only looks chunked on the Upgrade path.

class Note {
  @IsString() text!: string;
}

@Controller()
class Framed {
  @Get('/sse') async sse(c: Ctx) {
    const events = c.events();
    for (let n = 1; n <= 5; n++) {
      await events.send({ data: { n } });
      await new Promise((r) => setTimeout(r, 100));
    }
    events.close();
  }
  @Returns(Object)
  @Post('/echo')
  echo(@Body() b: Note) {
    return { text: b.text };
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

/** Everything the server writes on one connection until it closes (or `withinMs` passes). */
function collect(socket: Socket, withinMs = 5_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => finish(false), withinMs);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {});
    socket.once('close', () => finish(true));
  });
}

describe('hostile framing', () => {
  const app = new App({ log: () => {} }).controllers(Framed);
  let port = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
  });
  afterAll(() => app.close());

  it('a bad request pipelined behind an event stream under way cuts the connection; no 400 lands inside the stream', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const got = collect(socket);
    socket.write('GET /sse HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 150)); // the stream's head and first event are out
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    const { text, closed } = await got;
    expect(closed).toBe(true);
    expect(text.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(text).toContain('data: {"n":1}');
    expect(text.indexOf('HTTP/1.1', 1)).toBe(-1);
    expect((await getOnce(port, '/plain')).body).toBe('plain');
  });

  /** A POST of `{"text":"hi"}` whose head holds `lines` header lines, Content-Length the last one. */
  const crowded = (lines: number, extra = '') => {
    const body = '{"text":"hi"}';
    let head = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}`;
    const filler = lines - 3 - (extra === '' ? 0 : extra.split('\r\n').length - 1);
    for (let i = 0; i < filler; i++) head += `x-f${i}: y\r\n`;
    return `${head}Content-Length: ${body.length}\r\n\r\n${body}`;
  };

  it('a head of 1,001 header lines is 431 and the connection closes; 1,000 are read whole', async () => {
    const at = await raw(port, crowded(1_000));
    expect(at.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(at.text).toContain('{"text":"hi"}');
    const over = await raw(port, crowded(1_001));
    expect(over.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(over.text).toContain('"status":431');
    expect(over.text.toLowerCase()).toContain('connection: close');
    expect(over.closed).toBe(true);
  });

  it('the same on the Upgrade path', async () => {
    const over = await raw(port, crowded(1_001, 'Connection: Upgrade\r\nUpgrade: foo\r\n'));
    expect(over.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(over.closed).toBe(true);
  });

  it('HTTP/1.0 with Transfer-Encoding is answered, then the connection closes (RFC 9112 §6.1)', async () => {
    const body = '{"text":"hi"}';
    const r = await raw(
      port,
      `POST /echo HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      { quietMs: 2_000 },
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.text).toContain(body);
    expect(r.closed).toBe(true);
  });

  it('two Host headers are 400 (RFC 9112 §3.2), on the Upgrade path too', async () => {
    const twice = await raw(port, 'GET /plain HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n');
    expect(twice.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(twice.text).toContain('more than one Host header');
    expect(twice.closed).toBe(true);
    const upgrade = await raw(
      port,
      'GET /plain HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: Upgrade\r\nUpgrade: foo\r\n\r\n',
    );
    expect(upgrade.text).toMatch(/^HTTP\/1\.1 400 /);
    expect((await raw(port, 'GET /plain HTTP/1.1\r\nHost: a\r\n\r\n')).text).toMatch(/ 200 /);
  });

  it('on the Upgrade path, Transfer-Encoding: NBSP chunked is not chunked: 400', async () => {
    const body = '{"text":"hi"}';
    const r = await raw(
      port,
      Buffer.from(
        `POST /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: foo\r\nContent-Type: application/json\r\n` +
          `Transfer-Encoding: \xa0chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        'latin1',
      ),
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(r.text).toContain('Transfer-Encoding must end with chunked');
    expect(r.text).not.toContain('"text":"hi"');
  });
});
