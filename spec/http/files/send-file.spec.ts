import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { App, Controller, Ctx, Get, HttpError, Param, Query, Returns } from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

let root: string;
const HELLO = '0123456789';
const BIG = 16 * 1024 * 1024;

/** Every handle the routes opened, to watch them get closed. */
let handles: FileHandle[] = [];
let caught: unknown = null;
const lines: string[] = [];

async function opened(name: string): Promise<FileHandle> {
  const h = await open(join(root, name), 'r');
  handles.push(h);
  return h;
}
const closed = (h: FileHandle) => h.fd === -1;
async function until(test: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

@Controller()
class SendController {
  @Get('/send/{name}')
  async send(@Param('name') name: string, c: Ctx): Promise<void> {
    return c.sendFile({ file: await opened(name), contentType: 'text/plain' });
  }

  @Get('/own')
  async own(c: Ctx): Promise<void> {
    return c.sendFile({
      file: await opened('hello.txt'),
      etag: 'v1',
      size: 4,
      cacheControl: 'max-age=5',
      contentType: 'text/x-own',
    });
  }

  @Get('/path')
  path(@Query('name') name: string, c: Ctx): Promise<void> {
    return c.sendFile({ file: join(root, name) });
  }

  @Get('/forgot')
  forgot(c: Ctx): void {
    void c.sendFile({ file: join(root, 'hello.txt'), contentType: 'text/plain' });
  }

  @Get('/twice')
  async twice(c: Ctx): Promise<void> {
    c.sendText(200, 'first');
    try {
      await c.sendFile({ file: await opened('hello.txt') });
    } catch (e) {
      caught = e;
    }
  }

  @Get('/short')
  async short(c: Ctx): Promise<void> {
    return c.sendFile({ file: await opened('hello.txt'), size: 100 });
  }

  @Get('/files/{name}')
  @Returns(FileBody)
  file(@Param('name') name: string, dir: Dir) {
    return new FileBody({ dir, name, contentType: 'application/octet-stream' });
  }
}

let app: App;
let url: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'fw-sendfile-'));
  writeFileSync(join(root, 'hello.txt'), HELLO);
  const big = Buffer.alloc(BIG);
  for (let i = 0; i < BIG; i++) big[i] = i % 251;
  writeFileSync(join(root, 'big.bin'), big);
  app = new App({ log: (l) => lines.push(l) }).controllers(SendController).provide(Dir.open(root));
  url = (await app.listen({ port: 0 })).url;
});

afterAll(async () => {
  await app.close();
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  handles = [];
  caught = null;
  lines.length = 0;
});

describe('c.sendFile', () => {
  it('CORE-46 sends an open file and closes it after sending', async () => {
    const r = await app.inject({ url: '/send/hello.txt' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
    expect(r.headers['content-type']).toBe('text/plain');
    expect(r.headers['accept-ranges']).toBe('bytes');
    const st = statSync(join(root, 'hello.txt'));
    expect(r.headers.etag).toBe(`"${Math.trunc(st.mtimeMs).toString(16)}-a"`);
    expect(handles).toHaveLength(1);
    await until(() => closed(handles[0]));
  });

  it('CORE-46 closes the file on every answer it gives: 206, 304, 416, HEAD', async () => {
    const etag = (await app.inject({ url: '/send/hello.txt' })).headers.etag as string;
    const answers = [
      await app.inject({ url: '/send/hello.txt', headers: { range: 'bytes=3-4' } }),
      await app.inject({ url: '/send/hello.txt', headers: { 'if-none-match': etag } }),
      await app.inject({ url: '/send/hello.txt', headers: { range: 'bytes=10-' } }),
      await app.inject({ method: 'HEAD', url: '/send/hello.txt' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([206, 304, 416, 200]);
    expect(answers[0].body).toBe('34');
    expect(answers[2].headers['content-range']).toBe('bytes */10');
    expect(answers[3].headers['content-length']).toBe('10');
    expect(answers[3].body).toBe('');
    expect(handles).toHaveLength(5);
    await until(() => handles.every(closed));
  });

  it('CORE-46 closes the file when sending fails: a second answer is refused and the file is closed', async () => {
    const r = await app.inject({ url: '/twice' });
    expect(r.body).toBe('first');
    await until(() => caught !== null);
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).code).toBe('AlreadySent');
    await until(() => closed(handles[0]));
  });

  it('CORE-46 a file shorter than the length promised cuts the connection, logs a warning and closes the file', async () => {
    const r = await app.inject({ url: '/short' });
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('100');
    expect(r.body).toBe(HELLO); // what was sent before the cut
    await until(() => closed(handles[0]));
    await until(() =>
      lines.some((l) =>
        /warning: GET \/short .*failed after answering 200: .*file ended 90 bytes short of the 100 announced/.test(
          l,
        ),
      ),
    );
  });

  it('CORE-46 over a socket: a client that goes away mid-file gets its file closed', async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(`${url}/send/big.bin`, resolve).on('error', reject),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe(String(BIG));
    await new Promise<void>((resolve) => res.once('data', () => resolve()));
    res.destroy();
    await until(() => handles.length === 1 && closed(handles[0]));
  });

  it('CORE-46 STATIC-53 over a socket: a FileBody whose client goes away releases its descriptor', async () => {
    const fds = () => readdirSync('/proc/self/fd').length;
    if (process.platform !== 'linux') return;
    const before = fds();
    for (let i = 0; i < 5; i++) {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        httpGet(`${url}/files/big.bin`, resolve).on('error', reject),
      );
      await new Promise<void>((resolve) => res.once('data', () => resolve()));
      res.destroy();
    }
    await until(() => fds() <= before);
  });

  it('CORE-47 carries its own etag, size and cacheControl, and they are used for the answer', async () => {
    const r = await app.inject({ url: '/own' });
    expect(r.status).toBe(200);
    expect(r.headers.etag).toBe('"v1"');
    expect(r.headers['content-length']).toBe('4');
    expect(r.headers['cache-control']).toBe('max-age=5');
    expect(r.headers['content-type']).toBe('text/x-own');
    expect(r.headers['last-modified']).toBeUndefined(); // nothing was looked up
    expect(r.body).toBe('0123');
    expect((await app.inject({ url: '/own', headers: { 'if-none-match': '"v1"' } })).status).toBe(
      304,
    );
    const part = await app.inject({
      url: '/own',
      headers: { range: 'bytes=-2', 'if-range': '"v1"' },
    });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 2-3/4');
    expect(part.body).toBe('23');
    expect(
      (await app.inject({ url: '/own', headers: { range: 'bytes=4-' } })).headers['content-range'],
    ).toBe('bytes */4');
    await until(() => handles.every(closed));
  });

  it('CORE-46 takes a path too; a missing path is the file 404', async () => {
    const r = await app.inject({ url: '/path?name=hello.txt' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.body).toBe(HELLO);
    const missing = await app.inject({ url: '/path?name=nope.txt' });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: 'Not Found', status: 404 });
  });

  it('CORE-46 a path that cannot name a file (a segment too long, a file taken for a directory) is the same 404 as FileBody gives', async () => {
    for (const name of ['n'.repeat(300), 'hello.txt/inside', '.']) {
      const r = await app.inject({ url: `/path?name=${encodeURIComponent(name)}` });
      expect({ name: name.slice(0, 12), status: r.status }).toEqual({
        name: name.slice(0, 12),
        status: 404,
      });
      expect(r.json()).toEqual({ error: 'Not Found', status: 404 });
    }
  });

  it('CORE-46 a handler that does not await c.sendFile still answers with the file, not 204', async () => {
    const r = await app.inject({ url: '/forgot' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });
});

describe('file answers over a real socket', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = new Pool(url, { connections: 1 });
  });
  afterAll(() => pool.close());

  it('STATIC-38 ANS-21 a range answer, then the next request on the same kept connection', async () => {
    const r = await pool.request({
      path: '/files/big.bin',
      method: 'GET',
      headers: { range: 'bytes=1000-1099' },
    });
    expect(r.statusCode).toBe(206);
    expect(r.headers['content-range']).toBe(`bytes 1000-1099/${BIG}`);
    expect(r.headers['content-length']).toBe('100');
    expect(r.headers['accept-ranges']).toBe('bytes');
    const body = Buffer.from(await r.body.arrayBuffer());
    expect([...body]).toEqual(Array.from({ length: 100 }, (_, i) => (1000 + i) % 251));
    expect(r.headers.connection).toBeUndefined();
    const again = await pool.request({
      path: '/send/hello.txt',
      method: 'GET',
      headers: { range: 'bytes=-3' },
    });
    expect(again.statusCode).toBe(206);
    expect(await again.body.text()).toBe('789');
  });

  it("ANS-24 a HEAD over the socket has the GET's Content-Length and no body; the connection stays usable", async () => {
    const head = await pool.request({ path: '/files/big.bin', method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(BIG));
    expect(await head.body.text()).toBe('');
    const next = await pool.request({ path: '/files/hello.txt', method: 'GET' });
    expect(next.statusCode).toBe(200);
    expect(await next.body.text()).toBe(HELLO);
  });

  it('CORE-46 the whole of a large file arrives byte for byte', async () => {
    const r = await pool.request({ path: '/send/big.bin', method: 'GET' });
    const body = Buffer.from(await r.body.arrayBuffer());
    expect(body.length).toBe(BIG);
    expect(body[BIG - 1]).toBe((BIG - 1) % 251);
    expect(body[123457]).toBe(123457 % 251);
    await until(() => handles.length === 1 && closed(handles[0]));
  });
});
