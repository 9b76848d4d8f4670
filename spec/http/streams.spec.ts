import { App, Controller, Ctx, Get, Param, Returns } from 'fw-http';
import { parseResponses, raw } from '../support/raw';

@Controller()
class StreamController {
  @Get('/chunks') async chunks(c: Ctx) {
    const out = c.stream(200, 'text/plain');
    for (const piece of ['one ', 'two ', 'three']) await out.write(piece);
    out.end();
  }
  @Get('/fixed/{n}') async fixed(@Param('n') n: number, c: Ctx) {
    const out = c.streamWith(200, 'application/octet-stream', { length: 10 });
    try {
      await out.write(Buffer.alloc(n, 0x61));
    } finally {
      out.end();
    }
  }
  @Returns(String)
  @Get('/after')
  after() {
    return 'ok';
  }
}

describe('streams', () => {
  const app = new App({ log: () => {} }).controllers(StreamController);
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('CORE-48 c.stream sends the body in pieces, chunked, with no known length', async () => {
    const { text } = await raw(port, 'GET /chunks HTTP/1.1\r\nHost: x\r\n\r\n');
    const [r] = parseResponses(text);
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.body).toBe('one two three');
  });

  it('CORE-49 c.streamWith sends Content-Length: n', async () => {
    const { text } = await raw(
      port,
      'GET /fixed/10 HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    const rs = parseResponses(text);
    expect(rs[0].headers['content-length']).toBe('10');
    expect(rs[0].body).toBe('a'.repeat(10));
    expect(rs[1].body).toBe('ok');
  });

  it('OPEN-54 writing more or less than the declared length closes the connection, never a corrupt keep-alive', async () => {
    for (const n of [11, 4]) {
      const { text, closed } = await raw(
        port,
        `GET /fixed/${n} HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n`,
        { quietMs: 1000 },
      );
      expect(closed).toBe(true);
      expect(text).not.toContain('\r\n\r\nok');
    }
  });
});
