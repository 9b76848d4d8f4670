import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { App } from 'fw-http';
import { appWithLog, cleanTrees, noise, text, tree } from './support';

afterEach(cleanTrees);
const tick = () => new Promise((r) => setImmediate(r));
const GZ = { 'accept-encoding': 'gzip, deflate, br' };
const BODY = text(4000);

function app(files: Record<string, string | Uint8Array>, options = {}): App {
  return new App({ log: () => {} }).staticWith('/', tree(files), options);
}

describe('static trees: gzipped copies', () => {
  it('STATIC-27 GZIP-20 a gzipped copy made at load is sent with Content-Encoding: gzip to a client taking gzip', async () => {
    const a = app({ 'a.txt': BODY });
    const res = await a.inject({ url: '/a.txt', headers: GZ });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.bytes).toString()).toBe(BODY);
    expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
    // the same copy every time: not compressed per request
    expect((await a.inject({ url: '/a.txt', headers: GZ })).bytes.equals(res.bytes)).toBe(true);
  });

  it('GZIP-20 app.compress() does not compress static files per request (no Vary, no gzip, for a tree without a copy)', async () => {
    const a = new App({ log: () => {} })
      .compress({ minBytes: 10 })
      .staticWith('/', tree({ 'a.txt': BODY }), { compress: false });
    const res = await a.inject({ url: '/a.txt', headers: GZ });
    expect([res.headers['content-encoding'], res.headers.vary, res.body]).toEqual([
      undefined,
      undefined,
      BODY,
    ]);
  });

  it('STATIC-28 STATIC-29 STATIC-30 STATIC-36 no copy: under compressMinBytes, already compressed types, not smaller, compress: false', async () => {
    const a = app({ 'small.txt': text(500), 'pic.png': BODY, 'noise.txt': noise(4000) });
    for (const url of ['/small.txt', '/pic.png', '/noise.txt']) {
      const res = await a.inject({ url, headers: GZ });
      expect([url, res.headers['content-encoding'], res.headers.vary]).toEqual([
        url,
        undefined,
        undefined,
      ]);
    }
    const off = app({ 'a.txt': BODY }, { compress: false });
    expect(
      (await off.inject({ url: '/a.txt', headers: GZ })).headers['content-encoding'],
    ).toBeUndefined();
  });

  it('STATIC-31 no copy for a file over maxFileBytes', async () => {
    const res = await app({ 'a.txt': BODY }, { maxFileBytes: 1000 }).inject({
      url: '/a.txt',
      headers: GZ,
    });
    expect([res.status, res.headers['content-encoding'], res.body]).toEqual([200, undefined, BODY]);
  });

  it('STATIC-32 STATIC-33 both representations send Vary: Accept-Encoding and carry different ETags (OPEN-25 -gz suffix)', async () => {
    const a = app({ 'a.txt': BODY });
    const plain = await a.inject({ url: '/a.txt' });
    const zipped = await a.inject({ url: '/a.txt', headers: GZ });
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(plain.headers.etag).not.toBe(zipped.headers.etag);
    expect(zipped.headers.etag).toBe((plain.headers.etag as string).slice(0, -1) + '-gz"');
    const notModified = await a.inject({
      url: '/a.txt',
      headers: { ...GZ, 'if-none-match': zipped.headers.etag as string },
    });
    expect([notModified.status, notModified.headers.vary, notModified.headers.etag]).toEqual([
      304,
      'Accept-Encoding',
      zipped.headers.etag,
    ]);
    // the plain tag does not match the gzipped representation
    expect(
      (
        await a.inject({
          url: '/a.txt',
          headers: { ...GZ, 'if-none-match': plain.headers.etag as string },
        })
      ).status,
    ).toBe(200);
  });

  it('STATIC-34 Accept-Encoding: gzip;q=0 gets the plain file', async () => {
    const res = await app({ 'a.txt': BODY }).inject({
      url: '/a.txt',
      headers: { 'accept-encoding': 'gzip;q=0, br' },
    });
    expect([res.headers['content-encoding'], res.body]).toEqual([undefined, BODY]);
  });

  it('STATIC-35 OPEN-28 gzipped copies count against maxTotalBytes: dropped first, then the largest files spill', async () => {
    const { app: a, lines } = appWithLog();
    const big = text(8000);
    a.staticWith('/', tree({ 'a.txt': big, 'b.txt': text(3000) }), { maxTotalBytes: 11000 });
    const res = await a.inject({ url: '/a.txt', headers: GZ });
    expect([res.headers['content-encoding'], res.body]).toEqual([undefined, big]); // 11000 plain bytes fit; the copies did not
    await tick();
    expect(lines.find((l) => l.startsWith('static /'))).toMatch(
      /2 files, 11000 bytes held, 0 bytes gzipped, 0 spilled \(over maxTotalBytes: 2 gzipped copies dropped, 0 files spilled\)/,
    );

    const { app: b, lines: bLines } = appWithLog();
    b.staticWith('/', tree({ 'a.txt': big, 'b.txt': text(3000) }), { maxTotalBytes: 5000 });
    const spilled = await b.inject({ url: '/a.txt' });
    expect(spilled.body).toBe(big);
    expect(spilled.headers.etag).toMatch(/^"[0-9a-f]+-1f40"$/);
    await tick();
    expect(bLines.find((l) => l.startsWith('static /'))).toMatch(
      /2 files, 3000 bytes held, \d+ bytes gzipped, 1 spilled/,
    );
  });

  it('LIMITS-10 a file of exactly compressMinBytes gets a copy; one byte less does not', async () => {
    const a = app({
      'at.txt': text(1024),
      'under.txt': text(1023),
      'c600.txt': text(600),
      'c599.txt': text(599),
    });
    expect((await a.inject({ url: '/at.txt', headers: GZ })).headers['content-encoding']).toBe(
      'gzip',
    );
    expect(
      (await a.inject({ url: '/under.txt', headers: GZ })).headers['content-encoding'],
    ).toBeUndefined();
    const b = app({ 'c600.txt': text(600), 'c599.txt': text(599) }, { compressMinBytes: 600 });
    expect((await b.inject({ url: '/c600.txt', headers: GZ })).headers['content-encoding']).toBe(
      'gzip',
    );
    expect(
      (await b.inject({ url: '/c599.txt', headers: GZ })).headers['content-encoding'],
    ).toBeUndefined();
  });
});

describe('static trees: ranges and If-Range', () => {
  const DIGITS = '0123456789';
  const get = (a: App, headers: Record<string, string>) => a.inject({ url: '/d.txt', headers });

  it('STATIC-37 STATIC-38 STATIC-39 STATIC-40 ranges a-b, a- and -n are 206 with Content-Range and Content-Length; Accept-Ranges always', async () => {
    const a = app({ 'd.txt': DIGITS });
    expect((await get(a, {})).headers['accept-ranges']).toBe('bytes');
    for (const [range, body, cr] of [
      ['bytes=2-4', '234', 'bytes 2-4/10'],
      ['bytes=7-', '789', 'bytes 7-9/10'],
      ['bytes=-3', '789', 'bytes 7-9/10'],
      ['bytes=8-99', '89', 'bytes 8-9/10'],
    ]) {
      const res = await get(a, { range });
      expect([
        res.status,
        res.body,
        res.headers['content-range'],
        res.headers['content-length'],
        res.headers['accept-ranges'],
      ]).toEqual([206, body, cr, String(body.length), 'bytes']);
    }
  });

  it('STATIC-41 STATIC-42 STATIC-44 a range not understood, start after end, or several ranges: whole file with 200', async () => {
    const a = app({ 'd.txt': DIGITS });
    for (const range of ['bytes=a-b', 'bytes=5-2', 'bytes=0-1,3-4', 'items=0-1']) {
      const res = await get(a, { range });
      expect([range, res.status, res.body]).toEqual([range, 200, DIGITS]);
    }
  });

  it('STATIC-43 a range starting past the end is 416 with Content-Range: bytes */size', async () => {
    const res = await get(app({ 'd.txt': DIGITS }), { range: 'bytes=10-' });
    expect([res.status, res.headers['content-range']]).toEqual([416, 'bytes */10']);
    expect(res.json()).toEqual({ error: 'Range Not Satisfiable', status: 416 });
  });

  it('STATIC-45 a range request gets bytes of the uncompressed file whatever Accept-Encoding says', async () => {
    const a = new App({ log: () => {} }).static('/', tree({ 'd.txt': BODY }));
    const res = await get(a, { ...GZ, range: 'bytes=0-19' });
    expect([res.status, res.headers['content-encoding'], res.body]).toEqual([
      206,
      undefined,
      BODY.slice(0, 20),
    ]);
  });

  it('STATIC-46 STATIC-47 STATIC-48 STATIC-49 If-Range is strong: matching tag 206; stale, weak, * and dates get 200', async () => {
    const a = app({ 'd.txt': DIGITS });
    const etag = (await get(a, {})).headers.etag as string;
    expect((await get(a, { range: 'bytes=0-1', 'if-range': etag })).status).toBe(206);
    for (const ifRange of [
      '"stale"',
      `W/${etag}`,
      '*',
      new Date(Date.now() + 60_000).toUTCString(),
    ]) {
      const res = await get(a, { range: 'bytes=0-1', 'if-range': ifRange });
      expect([ifRange, res.status, res.body]).toEqual([ifRange, 200, DIGITS]);
    }
  });
});

describe('static trees: spilled files', () => {
  it('STATIC-50 STATIC-51 STATIC-52 a file over maxFileBytes is opened per request: no copy, ETag "<mtime hex>-<size hex>"', async () => {
    const dir = tree({ 'big.txt': BODY });
    const a = new App({ log: () => {} }).staticWith('/', dir, { maxFileBytes: 1024 });
    const res = await a.inject({ url: '/big.txt', headers: GZ });
    const st = statSync(join(dir, 'big.txt'));
    expect([res.status, res.body, res.headers['content-encoding'], res.headers.vary]).toEqual([
      200,
      BODY,
      undefined,
      undefined,
    ]);
    expect(res.headers.etag).toBe(
      `"${Math.trunc(st.mtimeMs).toString(16)}-${st.size.toString(16)}"`,
    );
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('STATIC-53 a spilled file is read from disk per request (one descriptor per answer, closed at the end)', async () => {
    const dir = tree({ 'big.txt': BODY });
    const a = new App({ log: () => {} }).staticWith('/', dir, { maxFileBytes: 1024 });
    await a.inject({ url: '/big.txt' });
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    const many = await Promise.all(Array.from({ length: 20 }, () => a.inject({ url: '/big.txt' })));
    expect(many.every((r) => r.body === BODY)).toBe(true);
    // Closing is asynchronous: wait (up to 2 s) for the count to come back rather than reading it once.
    for (let i = 0; i < 40 && fds() > before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(fds()).toBeLessThanOrEqual(before);
    writeFileSync(join(dir, 'big.txt'), BODY.toUpperCase());
    expect((await a.inject({ url: '/big.txt' })).body).toBe(BODY.toUpperCase());
  });

  it('STATIC-54 a spilled file counts nothing toward maxTotalBytes', async () => {
    const { app: a, lines } = appWithLog();
    a.staticWith('/', tree({ 'big.bin': noise(5000), 'a.txt': BODY }), {
      maxFileBytes: 4096,
      maxTotalBytes: 4500,
    });
    expect((await a.inject({ url: '/a.txt', headers: GZ })).headers['content-encoding']).toBe(
      'gzip',
    );
    await tick();
    expect(lines.find((l) => l.startsWith('static /'))).toMatch(
      /2 files, 4000 bytes held, \d+ bytes gzipped, 1 spilled$/,
    );
  });

  it('STATIC-55 Range, If-Range, If-None-Match and HEAD behave for a spilled file as for a held one', async () => {
    const a = app({ 'd.txt': BODY }, { maxFileBytes: 100 });
    const whole = await a.inject({ url: '/d.txt' });
    const etag = whole.headers.etag as string;
    const part = await a.inject({
      url: '/d.txt',
      headers: { range: 'bytes=-5', 'if-range': etag },
    });
    expect([part.status, part.body, part.headers['content-range']]).toEqual([
      206,
      BODY.slice(-5),
      'bytes 3995-3999/4000',
    ]);
    expect(
      (await a.inject({ url: '/d.txt', headers: { range: 'bytes=-5', 'if-range': '"old"' } }))
        .status,
    ).toBe(200);
    expect((await a.inject({ url: '/d.txt', headers: { range: 'bytes=4000-' } })).status).toBe(416);
    const nm = await a.inject({ url: '/d.txt', headers: { 'if-none-match': etag } });
    expect([nm.status, nm.body]).toEqual([304, '']);
    const head = await a.inject({ method: 'HEAD', url: '/d.txt' });
    expect([head.status, head.body, head.headers['content-length'], head.headers.etag]).toEqual([
      200,
      '',
      '4000',
      etag,
    ]);
  });

  it('LIMITS-08 a file of exactly maxFileBytes is held; one byte more is spilled', async () => {
    const a = app({ 'at.txt': text(2048), 'over.txt': text(2049) }, { maxFileBytes: 2048 });
    expect((await a.inject({ url: '/at.txt' })).headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect((await a.inject({ url: '/over.txt' })).headers.etag).toMatch(/^"[0-9a-f]+-801"$/);
  });

  it('STATIC-10 STATIC-11 the defaults are 8 MiB per file and 64 MiB per tree (OPEN-27: binary)', async () => {
    const a = app({
      'at.bin': Buffer.alloc(8 * 1024 * 1024, 1),
      'over.bin': Buffer.alloc(8 * 1024 * 1024 + 1, 1),
    });
    expect((await a.inject({ method: 'HEAD', url: '/at.bin' })).headers.etag).toMatch(
      /^"[A-Za-z0-9_-]{22}"$/,
    );
    expect((await a.inject({ method: 'HEAD', url: '/over.bin' })).headers.etag).toMatch(
      /^"[0-9a-f]+-800001"$/,
    );
    const { STATIC_DEFAULTS } = await import('../../../lib/http/features/static/static-tree');
    expect(STATIC_DEFAULTS.maxTotalBytes).toBe(64 * 1024 * 1024);
  });
});
