import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import {
  App,
  Controller,
  Get,
  HttpError,
  Optional,
  Param,
  Query,
  RefusalError,
  Reply,
  Returns,
  Status,
  Versioned,
  headers,
} from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

let base: string;
let root: string;
let app: App;

const HELLO = '0123456789';

@Controller()
class FilesController {
  @Get('/files/{name}')
  @Returns(FileBody)
  file(@Param('name') name: string, dir: Dir) {
    return new FileBody({ dir, name, contentType: 'text/plain' });
  }

  @Get('/by-query')
  @Returns(FileBody)
  byQuery(@Query('name') name: string, dir: Dir) {
    return new FileBody({ dir, name, contentType: 'text/plain' });
  }

  @Get('/plain/{name}')
  @Returns(FileBody)
  plain(@Param('name') name: string, dir: Dir) {
    return new FileBody({ dir, name });
  }

  @Get('/cached/{name}')
  @Returns(FileBody)
  cached(@Param('name') name: string, dir: Dir) {
    return new FileBody({
      dir,
      name,
      contentType: 'text/plain',
      cacheControl: 'public, max-age=60',
    });
  }

  @Get('/download/{name}')
  @Returns(FileBody)
  download(@Param('name') name: string, dir: Dir) {
    return new FileBody({
      dir,
      name,
      contentType: 'text/plain',
      cacheControl: 'no-cache',
      headers: headers.of([
        { name: 'Content-Disposition', value: `attachment; filename="${name}"` },
      ]),
    });
  }

  @Get('/maybe/{name}')
  @Returns(Optional(FileBody))
  maybe(@Param('name') name: string, dir: Dir) {
    return name === 'none' ? null : new FileBody({ dir, name, contentType: 'text/plain' });
  }
}

// the module object itself (not an import namespace), so its functions can be watched
const fsp = require('node:fs/promises') as typeof FsPromises;

const get = (url: string, h: Record<string, string> = {}, method = 'GET') =>
  app.inject({ method, url, headers: h });
const strip = (h: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'));

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'fw-files-'));
  root = join(base, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(root, 'adir'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'hello.txt'), HELLO);
  writeFileSync(join(root, 'empty.txt'), '');
  writeFileSync(join(root, 'sub', 'inner.txt'), 'inner');
  writeFileSync(join(root, 'back\\slash.txt'), 'a real name on Linux');
  writeFileSync(join(root, 'C:x.txt'), 'a real name on Linux');
  writeFileSync(join(base, 'outside', 'secret.txt'), 'secret');
  writeFileSync(join(base, 'secret.txt'), 'secret');
  symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(join(base, 'outside'), join(root, 'dir-out'));
  symlinkSync(join(root, 'hello.txt'), join(root, 'link-in.txt'));
  app = new App().controllers(FilesController).provide(Dir.open(root)).build();
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('FileBody fields and Dir', () => {
  it('ANS-08 CORE-17 a FileBody has dir, name, contentType, cacheControl and headers, and is sent under its own contentType', async () => {
    const dir = Dir.open(root);
    const body = new FileBody({
      dir,
      name: 'hello.txt',
      contentType: 'text/plain',
      cacheControl: 'no-store',
      headers: headers.of([{ name: 'X-A', value: '1' }]),
    });
    expect(body).toMatchObject({
      dir,
      name: 'hello.txt',
      contentType: 'text/plain',
      cacheControl: 'no-store',
    });
    expect(body.headers.entries).toEqual([{ name: 'X-A', value: '1' }]);
    const r = await get('/files/hello.txt');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain');
    expect(r.headers['content-length']).toBe('10');
    expect(r.body).toBe(HELLO);
  });

  it('ANS-09 contentType defaults to application/octet-stream', async () => {
    expect(new FileBody({ dir: Dir.open(root), name: 'x' }).contentType).toBe(
      'application/octet-stream',
    );
    const r = await get('/plain/hello.txt');
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.body).toBe(HELLO);
  });

  it('ANS-10 an empty cacheControl sends no Cache-Control', async () => {
    const r = await get('/files/hello.txt');
    expect(r.headers['cache-control']).toBeUndefined();
  });

  it('ANS-11 a non-empty cacheControl is sent as Cache-Control', async () => {
    const r = await get('/cached/hello.txt');
    expect(r.headers['cache-control']).toBe('public, max-age=60');
  });

  it('ANS-12 Dir.open resolves a directory once; it is provided as a service and names are opened relative to it', async () => {
    const dir = Dir.open(relative(process.cwd(), root));
    expect(dir.path).toBe(realpathSync(root));
    const r = await get('/by-query?name=sub/inner.txt');
    expect(r.status).toBe(200);
    expect(r.body).toBe('inner');
  });

  it('ANS-12 OPEN-60 REF-31 a directory that cannot be opened stops build(): one Refusal line naming it, among the others', () => {
    const missing = join(base, 'no-such-dir');
    const dir = Dir.open(missing);
    expect(dir.problem).toContain(missing);
    let err: unknown;
    try {
      new App({ log: () => {} })
        .controllers(FilesController)
        .provide(dir)
        .static('/s', missing)
        .build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError);
    const problems = (err as RefusalError).problems;
    expect(problems).toHaveLength(2);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^Dir\.open: directory ".*no-such-dir" .* cannot be opened: ENOENT: create it/,
      ),
    );
    // Used anyway (no app to refuse it), it throws DirNotFound naming it.
    expect(() => dir.path).toThrow(HttpError);
    expect(() => dir.path).toThrow(/no-such-dir.*cannot be opened/);
    expect(Dir.open(join(root, 'hello.txt')).problem).toMatch(
      /hello\.txt.*cannot be opened: ENOTDIR/,
    );
  });

  it('ANS-13 headers go out with the file; a download name is a Content-Disposition entry', async () => {
    const r = await get('/download/hello.txt');
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toBe('attachment; filename="hello.txt"');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect('downloadAs' in new FileBody({ dir: Dir.open(root), name: 'x' })).toBe(false);
  });
});

describe('FileBody names', () => {
  it('ANS-14 a file that does not exist → 404', async () => {
    const r = await get('/files/nope.txt');
    expect(r.status).toBe(404);
    expect(r.json()).toEqual({ error: 'Not Found', status: 404 });
  });

  it('ANS-14 a directory, or an empty name, → 404 as a missing file', async () => {
    expect((await get('/files/adir')).status).toBe(404);
    expect((await get('/by-query?name=')).status).toBe(404);
    expect((await get('/by-query?name=sub')).status).toBe(404);
  });

  it('ANS-15 a name with a .. segment → 404, even when the file it points at exists', async () => {
    for (const name of [
      '../secret.txt',
      'sub/../../secret.txt',
      '..',
      'sub/..',
      '..%2Fsecret.txt',
    ]) {
      const r = await get(`/by-query?name=${encodeURIComponent(name)}`);
      expect(r.status).toBe(404);
    }
    expect((await get('/files/..%2Fsecret.txt')).status).toBe(404);
    // a dot inside a name is not a segment
    expect((await get('/by-query?name=sub/./inner.txt')).status).toBe(200);
  });

  it('ANS-16 an absolute name → 404, even when the file exists', async () => {
    const r = await get(`/by-query?name=${encodeURIComponent(join(root, 'hello.txt'))}`);
    expect(r.status).toBe(404);
  });

  it('ANS-17 a name with a NUL byte → 404', async () => {
    const r = await get(`/by-query?name=${encodeURIComponent('hello.txt\0.png')}`);
    expect(r.status).toBe(404);
    expect((await get('/files/hello.txt%00')).status).toBe(404);
  });

  it('ANS-18 backslashes and drive letters → 404 (refused on every platform, so Windows behaves as Linux does)', async () => {
    for (const name of [
      'back\\slash.txt',
      '..\\secret.txt',
      'C:x.txt',
      'c:/Windows/win.ini',
      'C:\\secret.txt',
    ]) {
      const r = await get(`/by-query?name=${encodeURIComponent(name)}`);
      expect(r.status).toBe(404);
    }
  });

  it('ANS-19 refused names never touch the filesystem', async () => {
    const open = jest.spyOn(fsp, 'open');
    const realpath = jest.spyOn(fsp, 'realpath');
    try {
      for (const name of [
        '../secret.txt',
        join(root, 'hello.txt'),
        'a\0b',
        'a\\b',
        'C:x.txt',
        '',
      ]) {
        expect((await get(`/by-query?name=${encodeURIComponent(name)}`)).status).toBe(404);
      }
      expect(open).not.toHaveBeenCalled();
      expect(realpath).not.toHaveBeenCalled();
      await get('/files/hello.txt');
      expect(open).toHaveBeenCalledTimes(1);
    } finally {
      open.mockRestore();
      realpath.mockRestore();
    }
  });

  it('ANS-20 a refused name and a missing file answer with the same 404 body and headers', async () => {
    const missing = await get('/by-query?name=nope.txt');
    const answers = [
      missing,
      await get(`/by-query?name=${encodeURIComponent('../secret.txt')}`),
      await get(`/by-query?name=${encodeURIComponent('/etc/passwd')}`),
      await get(`/by-query?name=${encodeURIComponent('a\0b')}`),
      await get(`/by-query?name=${encodeURIComponent('a\\b')}`),
      await get('/by-query?name=link-out.txt'),
    ];
    for (const r of answers) {
      expect(r.status).toBe(404);
      expect(r.body).toBe(missing.body);
      expect(strip(r.headers)).toEqual(strip(missing.headers));
    }
  });

  it('ANS-15 a symlink that leaves the directory → the same 404; one that stays inside is 404 too unless the Dir follows symlinks', async () => {
    const out = await get('/files/link-out.txt');
    expect(out.status).toBe(404);
    expect(out.body).toBe((await get('/files/nope.txt')).body);
    expect((await get('/by-query?name=dir-out/secret.txt')).status).toBe(404);
    expect((await get('/files/link-in.txt')).status).toBe(404);
    const following = new App()
      .controllers(FilesController)
      .provide(Dir.open(root, { followSymlinks: true }));
    const inside = await following.inject({ url: '/files/link-in.txt' });
    expect(inside.status).toBe(200);
    expect(inside.body).toBe(HELLO);
    expect((await following.inject({ url: '/files/link-out.txt' })).status).toBe(404);
  });

  it('ANS-14 Optional(FileBody) answers 404 for null and the file otherwise', async () => {
    expect((await get('/maybe/none')).status).toBe(404);
    const r = await get('/maybe/hello.txt');
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });
});

describe('FileBody validators (OPEN-24, OPEN-26)', () => {
  it('ANS-23 STATIC-52 OPEN-24 OPEN-26 the ETag is strong: "<mtime ms hex>-<size hex>", with Last-Modified from the same look', async () => {
    const st = statSync(join(root, 'hello.txt'));
    const r = await get('/files/hello.txt');
    expect(r.headers.etag).toBe(`"${Math.trunc(st.mtimeMs).toString(16)}-${(10).toString(16)}"`);
    expect(r.headers['last-modified']).toBe(st.mtime.toUTCString());
  });
});

describe('Range on a FileBody (ANS-21, STATIC-37..45)', () => {
  it('ANS-21 STATIC-37 every file answer carries Accept-Ranges: bytes (200, 206, 304, 416, HEAD)', async () => {
    const etag = (await get('/files/hello.txt')).headers.etag as string;
    const answers = [
      await get('/files/hello.txt'),
      await get('/files/hello.txt', { range: 'bytes=0-1' }),
      await get('/files/hello.txt', { 'if-none-match': etag }),
      await get('/files/hello.txt', { range: 'bytes=50-' }),
      await get('/files/hello.txt', {}, 'HEAD'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 206, 304, 416, 200]);
    for (const r of answers) expect(r.headers['accept-ranges']).toBe('bytes');
  });

  it("ANS-21 STATIC-38 bytes=a-b → 206 with Content-Range and the part's Content-Length", async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=2-5' });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 2-5/10');
    expect(r.headers['content-length']).toBe('4');
    expect(r.headers['content-type']).toBe('text/plain');
    expect(r.body).toBe('2345');
  });

  it('ANS-21 STATIC-39 bytes=a- → 206 from a to the last byte', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=7-' });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 7-9/10');
    expect(r.headers['content-length']).toBe('3');
    expect(r.body).toBe('789');
  });

  it('ANS-21 STATIC-40 bytes=-n → 206 with the last n bytes', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=-4' });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 6-9/10');
    expect(r.headers['content-length']).toBe('4');
    expect(r.body).toBe('6789');
  });

  it('ANS-21 STATIC-41 a Range that cannot be parsed is ignored: the whole file with 200', async () => {
    for (const range of [
      'bytes=a-b',
      'bytes=1-x',
      'bytes=-',
      'bytes=',
      'items=0-1',
      'bytes 0-1',
      'bytes=0x1-2',
      'garbage',
    ]) {
      const r = await get('/files/hello.txt', { range });
      expect([range, r.status]).toEqual([range, 200]);
      expect(r.body).toBe(HELLO);
      expect(r.headers['content-range']).toBeUndefined();
      expect(r.headers['content-length']).toBe('10');
    }
  });

  it('ANS-21 STATIC-42 a Range whose start is greater than its end is ignored: the whole file with 200', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=5-2' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });

  it('ANS-21 STATIC-43 OPEN-33 a Range starting at or past the end → 416 with Content-Range: bytes */size and the failure body', async () => {
    for (const range of ['bytes=10-', 'bytes=10-20', 'bytes=99-']) {
      const r = await get('/files/hello.txt', { range });
      expect(r.status).toBe(416);
      expect(r.headers['content-range']).toBe('bytes */10');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json()).toEqual({ error: 'Range Not Satisfiable', status: 416 });
    }
  });

  it("ANS-21 STATIC-43 the 416 body follows the app's own failure shape", async () => {
    class Problem {
      static failure(status: number, message: string) {
        return { problem: message, code: status };
      }
    }
    const shaped = new App().controllers(FilesController).provide(Dir.open(root)).failures(Problem);
    const r = await shaped.inject({ url: '/files/hello.txt', headers: { range: 'bytes=10-' } });
    expect(r.status).toBe(416);
    expect(r.json()).toEqual({ problem: 'Range Not Satisfiable', code: 416 });
    expect(r.headers['content-range']).toBe('bytes */10');
  });

  it('ANS-21 STATIC-44 several ranges get the whole file with 200', async () => {
    for (const range of ['bytes=0-1,3-4', 'bytes=0-1, -2', 'bytes=0-1,']) {
      const r = await get('/files/hello.txt', { range });
      expect(r.status).toBe(200);
      expect(r.body).toBe(HELLO);
    }
  });

  it('ANS-21 STATIC-45 a range gets the uncompressed bytes whatever Accept-Encoding says; files are never gzipped', async () => {
    const gz = new App()
      .controllers(FilesController)
      .provide(Dir.open(root))
      .compress({ minBytes: 1 });
    const part = await gz.inject({
      url: '/files/hello.txt',
      headers: { range: 'bytes=1-3', 'accept-encoding': 'gzip' },
    });
    expect(part.status).toBe(206);
    expect(part.headers['content-encoding']).toBeUndefined();
    expect(part.body).toBe('123');
    const whole = await gz.inject({
      url: '/files/hello.txt',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(whole.headers['content-encoding']).toBeUndefined();
    expect(whole.body).toBe(HELLO);
  });

  it('ANS-21 OPEN-33 an end past the last byte is clamped; a suffix longer than the file is the whole file as 206', async () => {
    const clamped = await get('/files/hello.txt', { range: 'bytes=5-100' });
    expect(clamped.status).toBe(206);
    expect(clamped.headers['content-range']).toBe('bytes 5-9/10');
    expect(clamped.body).toBe('56789');
    const suffix = await get('/files/hello.txt', { range: 'bytes=-100' });
    expect(suffix.status).toBe(206);
    expect(suffix.headers['content-range']).toBe('bytes 0-9/10');
    expect(suffix.body).toBe(HELLO);
    const last = await get('/files/hello.txt', { range: 'bytes=9-9' });
    expect(last.headers['content-range']).toBe('bytes 9-9/10');
    expect(last.body).toBe('9');
  });

  it('ANS-21 OPEN-33 any range of an empty file, and a zero-length suffix, → 416', async () => {
    for (const range of ['bytes=0-', 'bytes=0-0', 'bytes=-1']) {
      const r = await get('/files/empty.txt', { range });
      expect(r.status).toBe(416);
      expect(r.headers['content-range']).toBe('bytes */0');
    }
    const zero = await get('/files/hello.txt', { range: 'bytes=-0' });
    expect(zero.status).toBe(416);
    const whole = await get('/files/empty.txt');
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe('0');
    expect(whole.body).toBe('');
  });
});

describe('If-Range on a FileBody (ANS-22, STATIC-46..49)', () => {
  let etag: string;
  beforeAll(async () => {
    etag = (await get('/files/hello.txt')).headers.etag as string;
  });

  it('ANS-22 STATIC-46 If-Range equal to the ETag honours the Range (206)', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=0-2', 'if-range': etag });
    expect(r.status).toBe(206);
    expect(r.body).toBe('012');
  });

  it('ANS-22 STATIC-47 a stale If-Range tag gets the whole file (200)', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=0-2', 'if-range': '"0-0"' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });

  it('ANS-22 STATIC-48 a weak If-Range tag (W/) gets the whole file (200), even with the same opaque tag', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=0-2', 'if-range': `W/${etag}` });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });

  it('ANS-22 STATIC-49 If-Range: * gets the whole file (200)', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=0-2', 'if-range': '*' });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });

  it('ANS-22 OPEN-34 If-Range with an HTTP-date never matches: the whole file (200)', async () => {
    const r = await get('/files/hello.txt', {
      range: 'bytes=0-2',
      'if-range': new Date(Date.now() + 86_400_000).toUTCString(),
    });
    expect(r.status).toBe(200);
    expect(r.body).toBe(HELLO);
  });

  it('ANS-22 a stale If-Range with an unsatisfiable Range still gets the whole file, not 416', async () => {
    const r = await get('/files/hello.txt', { range: 'bytes=50-', 'if-range': '"stale"' });
    expect(r.status).toBe(200);
  });
});

describe('If-None-Match and HEAD on a FileBody (ANS-23, ANS-24)', () => {
  let etag: string;
  beforeAll(async () => {
    etag = (await get('/download/hello.txt')).headers.etag as string;
  });

  it("ANS-23 OPEN-36 a matching If-None-Match → 304 with no body, carrying ETag, Cache-Control and the answer's own headers", async () => {
    const r = await get('/download/hello.txt', { 'if-none-match': etag });
    expect(r.status).toBe(304);
    expect(r.body).toBe('');
    expect(r.headers.etag).toBe(etag);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['content-disposition']).toBe('attachment; filename="hello.txt"');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.headers['content-type']).toBeUndefined();
  });

  it('ANS-23 If-None-Match compares weakly, takes a list and *', async () => {
    for (const value of [`W/${etag}`, `"other", ${etag}`, '*']) {
      const r = await get('/files/hello.txt', { 'if-none-match': value });
      expect([value, r.status]).toEqual([value, 304]);
    }
    const stale = await get('/files/hello.txt', { 'if-none-match': '"other"' });
    expect(stale.status).toBe(200);
    expect(stale.body).toBe(HELLO);
  });

  it('ANS-23 If-None-Match is decided before Range: a match is 304 even with a Range', async () => {
    const r = await get('/files/hello.txt', { 'if-none-match': etag, range: 'bytes=0-1' });
    expect(r.status).toBe(304);
    expect(r.headers['content-range']).toBeUndefined();
  });

  it('ANS-23 without If-None-Match, If-Modified-Since at or after the modification time → 304', async () => {
    const mtime = statSync(join(root, 'hello.txt')).mtime;
    expect(
      (await get('/files/hello.txt', { 'if-modified-since': mtime.toUTCString() })).status,
    ).toBe(304);
    expect(
      (
        await get('/files/hello.txt', {
          'if-modified-since': new Date(mtime.getTime() - 5000).toUTCString(),
        })
      ).status,
    ).toBe(200);
    expect((await get('/files/hello.txt', { 'if-modified-since': 'not a date' })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3)
    expect(
      (
        await get('/files/hello.txt', {
          'if-none-match': '"other"',
          'if-modified-since': mtime.toUTCString(),
        })
      ).status,
    ).toBe(200);
  });

  it('ANS-24 HEAD answers the headers its GET would have, with no body', async () => {
    const getR = await get('/files/hello.txt');
    const head = await get('/files/hello.txt', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(strip(head.headers)).toEqual(strip(getR.headers));
  });

  it('ANS-24 HEAD with a Range carries the 206 head its GET would have', async () => {
    const head = await get('/files/hello.txt', { range: 'bytes=1-3' }, 'HEAD');
    expect(head.status).toBe(206);
    expect(head.headers['content-length']).toBe('3');
    expect(head.headers['content-range']).toBe('bytes 1-3/10');
    expect(head.body).toBe('');
    const notModified = await get('/files/hello.txt', { 'if-none-match': etag }, 'HEAD');
    expect(notModified.status).toBe(304);
  });

  it('ANS-24 a HEAD of a missing file is the same 404 head', async () => {
    const head = await get('/files/nope.txt', {}, 'HEAD');
    expect(head.status).toBe(404);
    expect(head.body).toBe('');
  });
});

describe('FileBody Refusals', () => {
  const refusal = (cls: Function): RefusalError => {
    try {
      new App().controllers(cls).provide(Dir.open(root)).build();
    } catch (e) {
      return e as RefusalError;
    }
    throw new Error('not refused');
  };

  it('REF-17 Status(code, FileBody) → Refusal naming the route', () => {
    @Controller()
    class StatusFile {
      @Get('/made/{name}')
      @Returns(Status(201, FileBody))
      made(@Param('name') name: string, dir: Dir) {
        return new FileBody({ dir, name });
      }
    }
    const e = refusal(StatusFile);
    expect(e).toBeInstanceOf(RefusalError);
    expect(e.problems).toEqual([
      expect.stringMatching(
        /^GET \/made\/\{name\} \(StatusFile\.made\): FileBody cannot take a wrapper's status/,
      ),
    ]);
  });

  it('REF-17 a FileBody inside Reply, or Versioned(FileBody), is refused the same way (a file has its own status and ETag)', () => {
    @Controller()
    class Wrapped {
      @Get('/r')
      @Returns(Reply(FileBody, { statuses: [200] }))
      r() {
        return null as never; // refused before it runs
      }
      @Get('/v')
      @Returns(Versioned(FileBody))
      v() {
        return null as never; // refused before it runs
      }
      @Get('/s')
      @Returns(Status(200, Optional(FileBody)))
      s() {
        return null;
      }
    }
    const e = refusal(Wrapped);
    expect(e.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^GET \/r \(Wrapped\.r\): FileBody cannot sit inside Reply/),
        expect.stringMatching(/^GET \/v \(Wrapped\.v\): FileBody cannot sit inside Versioned/),
        expect.stringMatching(/^GET \/s \(Wrapped\.s\): FileBody cannot sit inside Status\(200/),
      ]),
    );
  });

  it('ANS-12 a FileBody route without a provided Dir is refused naming the route and the parameter', () => {
    @Controller()
    class NoDir {
      @Get('/f/{name}')
      @Returns(FileBody)
      f(@Param('name') name: string, dir: Dir) {
        return new FileBody({ dir, name });
      }
    }
    let err: unknown;
    try {
      new App().controllers(NoDir).build();
    } catch (e) {
      err = e;
    }
    expect((err as RefusalError).problems).toEqual([
      expect.stringMatching(/^GET \/f\/\{name\} \(NoDir\.f\): parameter 1 \(Dir\) is not provided/),
    ]);
  });
});

describe('descriptors', () => {
  const openFds = () => readdirSync('/proc/self/fd').length;
  // Closing is asynchronous and the test process opens descriptors of its own now and then: wait
  // (up to 2 s) for the count to come back rather than reading it once.
  const settled = async (before: number) => {
    for (let i = 0; i < 40 && openFds() > before; i++) await new Promise((r) => setTimeout(r, 50));
    return openFds();
  };

  it('CORE-46 STATIC-53 every FileBody answer closes its descriptor: 200, 206, 304, 416, HEAD, refused and missing', async () => {
    await get('/files/hello.txt'); // warm up lazily opened handles
    const before = openFds();
    const etag = (await get('/files/hello.txt')).headers.etag as string;
    for (let i = 0; i < 20; i++) {
      await Promise.all([
        get('/files/hello.txt'),
        get('/files/hello.txt', { range: 'bytes=1-2' }),
        get('/files/hello.txt', { 'if-none-match': etag }),
        get('/files/hello.txt', { range: 'bytes=99-' }),
        get('/files/hello.txt', {}, 'HEAD'),
        get('/files/adir'),
        get('/files/nope.txt'),
        get('/files/link-out.txt'),
      ]);
    }
    expect(await settled(before)).toBeLessThanOrEqual(before);
  });
});
