import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Controller, Ctx, Get, Param, Returns, Versioned, type Middleware } from 'fw-http';
import { cors } from 'fw-http/browser';
import { raw } from '../support/raw';

// RFC 9110 §8.6: a server must not send Content-Length in a 1xx or 204 answer, and in a 304 only
// the representation's. Read from the raw bytes on a real socket: what Node and fw put on the wire.

/** The status line and header lines of the first answer in `text`, lower-cased names. */
function headOf(text: string): { status: number; names: string[]; rest: string } {
  const end = text.indexOf('\r\n\r\n');
  const lines = text.slice(0, end).split('\r\n');
  return {
    status: Number(lines[0]!.split(' ')[1]),
    names: lines.slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase()),
    rest: text.slice(end + 4),
  };
}

/** Sends `GET <url>` then `GET /after` on one kept connection; answers both heads. */
async function twice(port: number, url: string, method = 'GET') {
  const r = await raw(
    port,
    `${method} ${url} HTTP/1.1\r\nHost: x\r\nOrigin: https://shop.example\r\n` +
      'Access-Control-Request-Method: POST\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n',
  );
  const first = headOf(r.text);
  return { first, second: headOf(first.rest) };
}

const dir = mkdtempSync(path.join(tmpdir(), 'fw-bodiless-'));
writeFileSync(path.join(dir, 'a.txt'), 'static bytes');

@Controller()
class Answers {
  @Get('/after') @Returns(String) after() {
    return 'after';
  }
  @Get('/empty/{n}') emptyOf(@Param('n') n: number, c: Ctx) {
    c.empty(n);
  }
  @Get('/text204') text204(c: Ctx) {
    c.sendText(204, '');
  }
  @Get('/send204') send204(c: Ctx) {
    c.send(204, 'text/plain', new Uint8Array(0));
  }
  @Get('/body204') body204(c: Ctx) {
    c.sendText(204, 'not allowed');
  }
  @Get('/stream304') stream304(c: Ctx) {
    c.streamWith(304, 'text/plain', { length: 0 }).end();
  }
  @Get('/v') @Returns(Versioned(String)) v() {
    return Versioned.of(1, 'the representation');
  }
}

/** A user's preflight middleware answering with the public API. */
const preflight: Middleware = (c, next) => {
  if (c.method !== 'OPTIONS') return next();
  c.setHeader('access-control-allow-origin', 'https://shop.example');
  c.empty(204);
};

async function serve(use: Middleware) {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) })
    .use(use)
    .controllers(Answers)
    .static('/files', dir);
  const { port } = await app.listen({ port: 0 });
  return { app, port, lines };
}

describe('answers without content carry no Content-Length (RFC 9110 §8.6)', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (s = await serve(preflight)));
  afterAll(() => s.app.close());

  it("a user's preflight answered with c.empty(204): no Content-Length, no body, the connection goes on", async () => {
    const { first, second } = await twice(s.port, '/after', 'OPTIONS');
    expect(first.status).toBe(204);
    expect(first.names).toContain('access-control-allow-origin');
    expect(first.names).not.toContain('content-length');
    expect(first.names).not.toContain('transfer-encoding');
    expect(second.status).toBe(200);
  });

  it('c.empty(200) and c.empty(404) send Content-Length: 0, so the connection stays usable', async () => {
    for (const n of [200, 404, 205]) {
      const { first, second } = await twice(s.port, `/empty/${n}`);
      expect(first.status).toBe(n);
      expect(first.names).toContain('content-length');
      expect(first.names).not.toContain('content-type');
      expect(second.status).toBe(200);
    }
    const r = await raw(s.port, 'GET /empty/200 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.text).toMatch(/\r\ncontent-length: 0\r\n/i);
  });

  it('c.empty(204) and c.empty(304) send no Content-Length', async () => {
    for (const n of [204, 304]) {
      const { first, second } = await twice(s.port, `/empty/${n}`);
      expect([first.status, first.names.includes('content-length')]).toEqual([n, false]);
      expect(second.status).toBe(200);
    }
  });

  it('an empty body sent with 204 through sendText or send is sent as no body: no Content-Length', async () => {
    for (const url of ['/text204', '/send204']) {
      const { first, second } = await twice(s.port, url);
      expect(first.status).toBe(204);
      expect(first.names).not.toContain('content-length');
      expect(second.status).toBe(200);
    }
  });

  it('a body or a stream with 204 or 304 is an error naming c.empty (500 BodyNotAllowed), never a Content-Length', async () => {
    for (const url of ['/body204', '/stream304']) {
      const { first } = await twice(s.port, url);
      expect(first.status).toBe(500);
    }
    await new Promise((r) => setImmediate(r));
    const logged = s.lines.map(
      (l) => JSON.parse(l) as { err?: { code?: string; message: string } },
    );
    const codes = logged.flatMap((l) => (l.err?.code === 'BodyNotAllowed' ? [l.err.message] : []));
    expect(codes).toEqual([
      'a body with 204: a 204 answer has no content: answer with c.empty(204)',
      'a stream with 304: a 304 answer has no content: answer with c.empty(304)',
    ]);
  });

  it('c.empty with a status outside 200–599 is an error (500 BadStatus)', async () => {
    for (const n of [101, 600]) expect((await twice(s.port, `/empty/${n}`)).first.status).toBe(500);
  });

  it("a Versioned 304 and a static file's 304 carry no Content-Length", async () => {
    const v = await raw(s.port, 'GET /v HTTP/1.1\r\nHost: x\r\nIf-None-Match: W/"1"\r\n\r\n');
    const file = await raw(s.port, 'GET /files/a.txt HTTP/1.1\r\nHost: x\r\n\r\n');
    const etag = /\r\netag: ([^\r]+)/i.exec(file.text)![1]!;
    const again = await raw(
      s.port,
      `GET /files/a.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\n\r\n`,
    );
    for (const head of [headOf(v.text), headOf(again.text)]) {
      expect(head.status).toBe(304);
      expect(head.names).not.toContain('content-length');
    }
  });
});

describe('cors answers its preflight with c.empty(204)', () => {
  it('the preflight head has no Content-Length and the next request on the connection is answered', async () => {
    const s = await serve(cors({ origins: ['https://shop.example'] }));
    try {
      const { first, second } = await twice(s.port, '/after', 'OPTIONS');
      expect(first.status).toBe(204);
      expect(first.names).toContain('access-control-allow-methods');
      expect(first.names).not.toContain('content-length');
      expect(second.status).toBe(200);
    } finally {
      await s.app.close();
    }
  });
});
