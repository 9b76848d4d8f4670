import { App, Controller, Ctx, Get, Param, Post, headers, Returns, Redirect } from 'fw-http';

/** True once a log line holds `text` (as it is escaped inside the JSON line). 500 bodies say only `internal server error`, the detail goes to the log. */
async function logged(lines: readonly string[], text: string): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  const escaped = JSON.stringify(text).slice(1, -1);
  return lines.some((l) => l.includes(escaped));
}

@Controller()
class CtxController {
  @Get('/text') text(c: Ctx) {
    c.sendText(201, 'made');
  }
  @Get('/json') json(c: Ctx) {
    c.sendJson(202, { a: [1, 2] });
  }
  @Get('/send') send(c: Ctx) {
    c.send(200, 'application/x-thing', Buffer.from([1, 2, 3]));
  }
  @Get('/go') go(c: Ctx) {
    c.redirect(307, '/there');
  }
  @Get('/twice') twice(c: Ctx) {
    c.sendText(200, 'first');
    c.sendText(200, 'second');
  }
  @Get('/late-header') lateHeader(c: Ctx) {
    c.sendText(200, 'sent');
    c.setHeader('x-late', '1');
  }
  @Get('/headers') many(c: Ctx) {
    for (let i = 0; i < 20; i++) c.setHeader(`x-h${i}`, String(i));
    c.setStaticHeader('x-static', 'yes');
    c.sendText(200, 'ok');
  }
  @Get('/reserved/{name}') reserved(@Param('name') name: string, c: Ctx) {
    c.setHeader(name, 'x');
    c.sendText(200, 'no');
  }
  @Get('/control') control(c: Ctx) {
    c.setHeader('x-evil', 'a\r\nInjected: yes');
    c.sendText(200, 'no');
  }
  @Get('/char/{code}') char(@Param('code') code: number, c: Ctx) {
    c.setHeader('x-char', `a${String.fromCharCode(code)}b`);
    c.sendText(200, 'sent');
  }
  @Get('/nontoken') nonToken(c: Ctx) {
    c.setHeader('bad name', 'x');
    c.sendText(200, 'no');
  }
  @Get('/cookies') cookies(c: Ctx) {
    c.setHeader('Set-Cookie', 'a=1');
    c.setHeader('Set-Cookie', 'b=2');
    c.setHeader('Set-Cookie', 'a=1');
    c.setHeader('Vary', 'Origin');
    c.setHeader('Vary', 'Accept-Language');
    c.setHeader('Vary', 'origin');
    c.sendText(200, 'ok');
  }
  @Get('/returned-reserved')
  @Returns(Redirect(302))
  returnedReserved() {
    return Redirect.with('/', headers.of([{ name: 'Content-Length', value: '5' }]));
  }
  @Post('/echo') async echo(c: Ctx) {
    const body = await c.body();
    const again = await c.body();
    c.send(200, 'application/octet-stream', Buffer.concat([body, again]));
  }
  @Post('/size') async size(c: Ctx) {
    c.sendJson(200, { bytes: (await c.body()).length });
  }
  @Get('/header') header(c: Ctx) {
    c.sendJson(200, { present: c.header('X-Thing'), absent: c.header('x-missing') });
  }
  @Get('/status') status(c: Ctx) {
    const before = c.status;
    let refused = '';
    try {
      (c as unknown as { status: number }).status = 200; // what the type forbids: a program cannot fake an answer's status
    } catch (e) {
      refused = (e as Error).name;
    }
    const after = [before, c.status, c.sent, refused];
    c.setHeader('x-seen', after.join(','));
    c.sendText(201, 'made');
    if (c.status !== 201 || !c.sent) throw new Error(`status ${c.status} after sending`);
  }
}

const appLines: string[] = [];
const app = new App({ log: (l) => appLines.push(l) }).controllers(CtxController);

describe('Ctx sending API', () => {
  it('CORE-06 CORE-43 sendText answers status with text/plain', async () => {
    const res = await app.inject({ url: '/text' });
    expect([res.status, res.headers['content-type'], res.body]).toEqual([
      201,
      'text/plain; charset=utf-8',
      'made',
    ]);
  });

  it('CORE-44 sendJson answers status with JSON', async () => {
    const res = await app.inject({ url: '/json' });
    expect([res.status, res.headers['content-type'], res.json()]).toEqual([
      202,
      'application/json',
      { a: [1, 2] },
    ]);
  });

  it('CORE-45 send answers status with bytes under the caller content type', async () => {
    const res = await app.inject({ url: '/send' });
    expect(res.headers['content-type']).toBe('application/x-thing');
    expect([...res.bytes]).toEqual([1, 2, 3]);
  });

  it('CORE-50 redirect sends Location and no body', async () => {
    const res = await app.inject({ url: '/go' });
    expect([res.status, res.headers.location, res.body]).toEqual([307, '/there', '']);
  });

  it('CORE-53 a response is written once: a second send throws and no second response reaches the wire', async () => {
    const lines: string[] = [];
    const a = new App({ log: (l) => lines.push(l) }).controllers(CtxController);
    const res = await a.inject({ url: '/twice' });
    expect([res.status, res.body]).toEqual([200, 'first']);
    await new Promise((r) => setImmediate(r));
    expect(lines.join('\n')).toMatch(/failed after answering 200: .*AlreadySent/);
  });

  it('CORE-29 a header set after the answer was sent changes nothing (HeadersSent)', async () => {
    const lines: string[] = [];
    const a = new App({ log: (l) => lines.push(l) }).controllers(CtxController);
    const res = await a.inject({ url: '/late-header' });
    expect(res.headers['x-late']).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(lines.join('\n')).toContain('HeadersSent');
  });

  it('CORE-36 CORE-37 setHeader has no count limit; setStaticHeader sets a header as setHeader does', async () => {
    const res = await app.inject({ url: '/headers' });
    expect(res.headers['x-h19']).toBe('19');
    expect(res.headers['x-static']).toBe('yes');
  });

  it.each(['Content-Type', 'content-length', 'Transfer-Encoding', 'Connection'])(
    'CORE-30 setting %s is refused (500 naming it)',
    async (name) => {
      const res = await app.inject({ url: `/reserved/${encodeURIComponent(name)}` });
      expect(res.status).toBe(500);
      expect(res.json<{ error: string }>().error).toBe('internal server error');
      expect(await logged(appLines, `"${name.toLowerCase()}"`)).toBe(true);
    },
  );

  it('CORE-30 a returned header the framework writes is refused too', async () => {
    const res = await app.inject({ url: '/returned-reserved' });
    expect(res.status).toBe(500);
    expect(res.json<{ error: string }>().error).toBe('internal server error');
    expect(await logged(appLines, '"content-length"')).toBe(true);
  });

  it('CORE-34 a header value holding a control byte is a 500 naming the header', async () => {
    const res = await app.inject({ url: '/control' });
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    expect(await logged(appLines, 'header "x-evil" holds a control byte')).toBe(true);
    expect(res.headers.injected).toBeUndefined();
  });

  it('CORE-34 every control byte (0x00-0x08, 0x0A-0x1F, 0x7F) and obs-text (0x80-0xFF) is refused; TAB and 0x20-0x7E are sent', async () => {
    const refused: number[] = [];
    for (let code = 0; code <= 0xff; code++) {
      const res = await app.inject({ url: `/char/${code}` });
      if (res.status === 500) {
        const why = code >= 0x80 ? 'holds a character outside ASCII' : 'holds a control byte';
        expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
        expect(await logged(appLines, `header "x-char" ${why}`)).toBe(true);
        refused.push(code);
      } else {
        expect(res.status).toBe(200);
        expect(res.headers['x-char']).toBe(`a${String.fromCharCode(code)}b`);
      }
    }
    const control = [...Array(0x20).keys()].filter((c) => c !== 0x09).concat(0x7f);
    const obsText = [...Array(0x80).keys()].map((c) => c + 0x80);
    expect(refused).toEqual([...control, ...obsText]);
  });

  it.each([0x100, 0x2028, 0xfffd, 0xd83d])(
    'CORE-34 a character above U+00FF (%i) is refused, naming the header',
    async (code) => {
      const res = await app.inject({ url: `/char/${code}` });
      expect(res.status).toBe(500);
      expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
      expect(await logged(appLines, 'header "x-char" holds a character outside ASCII')).toBe(true);
    },
  );

  it('CORE-35 a header name that is not a token is a 500 naming the header', async () => {
    const res = await app.inject({ url: '/nontoken' });
    expect(res.status).toBe(500);
    expect(res.json<{ error: string }>().error).toBe('internal server error');
    expect(await logged(appLines, 'header name "bad name" is not a token')).toBe(true);
  });

  it('CORE-31 CORE-32 CORE-33 Set-Cookie and Vary add; an identical pair adds nothing', async () => {
    const res = await app.inject({ url: '/cookies' });
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers.vary).toBe('Origin, Accept-Language');
  });

  it('CORE-52 c.body() gives the raw body, read once', async () => {
    const res = await app.inject({ method: 'POST', url: '/echo', body: Buffer.from([0xff, 0x01]) });
    expect([...res.bytes]).toEqual([0xff, 0x01, 0xff, 0x01]);
  });

  it('CORE-52 LIMITS-06 a body of exactly one megabyte is read; one byte more is 413', async () => {
    const ok = await app.inject({ method: 'POST', url: '/size', body: Buffer.alloc(1024 * 1024) });
    expect(ok.json()).toEqual({ bytes: 1048576 });
    const over = await app.inject({
      method: 'POST',
      url: '/size',
      body: Buffer.alloc(1024 * 1024 + 1),
    });
    expect(over.status).toBe(413);
    expect(over.json<{ status: number }>().status).toBe(413);
  });

  it('c.status is read-only: 0 until the head goes out, then the status sent; assigning it throws and changes nothing', async () => {
    const res = await app.inject({ url: '/status' });
    expect([res.status, res.body, res.headers['x-seen']]).toEqual([
      201,
      'made',
      '0,0,false,TypeError',
    ]);
  });

  it('CORE-28 c.header gives the value or null', async () => {
    expect((await app.inject({ url: '/header', headers: { 'x-thing': 'v' } })).json()).toEqual({
      present: 'v',
      absent: null,
    });
  });
});
