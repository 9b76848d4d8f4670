import { unlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App, Controller, Get, logger, Post, RefusalError, Returns } from 'fw-http';
import { cors } from 'fw-http/browser';
import { appWithLog, cleanTrees, text, tree } from './support';

afterEach(cleanTrees);
const tick = () => new Promise((r) => setImmediate(r));

const SITE = {
  'index.html': '<h1>home</h1>',
  'app.js': 'console.log(1)',
  'docs/index.html': '<h1>docs</h1>',
  'docs/a.txt': 'a',
};

describe('static trees: registration and options', () => {
  it('STATIC-01 STATIC-05 STATIC-07 app.static serves a directory under a prefix with the default options', async () => {
    const app = new App({ log: () => {} }).static('/site', tree(SITE));
    const res = await app.inject({ url: '/site/app.js' });
    expect([res.status, res.body]).toEqual([200, 'console.log(1)']);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await app.inject({ url: '/site/' })).body).toBe('<h1>home</h1>');
    expect((await app.inject({ url: '/site/docs/' })).body).toBe('<h1>docs</h1>');
    expect((await app.inject({ url: '/site/docs/a.txt' })).headers['content-type']).toBe(
      'text/plain; charset=utf-8',
    );
    expect((await app.inject({ url: '/other/app.js' })).status).toBe(404);
  });

  it('STATIC-02 STATIC-06 staticWith takes options: index "" turns index serving off, cacheControl is sent on every file', async () => {
    const app = new App({ log: () => {} }).staticWith('/', tree(SITE), {
      index: '',
      cacheControl: 'no-cache',
    });
    expect((await app.inject({ url: '/', headers: { accept: 'text/html' } })).status).toBe(404);
    expect((await app.inject({ url: '/index.html' })).headers['cache-control']).toBe('no-cache');
  });

  it('STATIC-02 app.static takes the same options as a third argument: the same answers as staticWith', async () => {
    const dir = tree(SITE);
    const one = new App({ log: () => {} }).static('/', dir, {
      index: '',
      cacheControl: 'no-cache',
    });
    const two = new App({ log: () => {} }).staticWith('/', dir, {
      index: '',
      cacheControl: 'no-cache',
    });
    for (const app of [one, two]) {
      expect((await app.inject({ url: '/', headers: { accept: 'text/html' } })).status).toBe(404);
      const res = await app.inject({ url: '/index.html' });
      expect([res.status, res.body, res.headers['cache-control']]).toEqual([
        200,
        '<h1>home</h1>',
        'no-cache',
      ]);
    }
  });

  it('STATIC-04 a dir path is relative to the working directory', async () => {
    const dir = relative(process.cwd(), tree(SITE));
    const app = new App({ log: () => {} }).static('/', dir);
    expect((await app.inject({ url: '/app.js' })).body).toBe('console.log(1)');
  });

  it('STATIC-08 STATIC-09 STATIC-14 STATIC-15 STATIC-16 the defaults: no fallback, no reload, gzip from 1 KiB', async () => {
    const { app, lines } = appWithLog();
    app.static('/', tree({ 'a.txt': text(1024), 'b.txt': text(1023) }));
    await app.inject({ url: '/a.txt' });
    expect((await app.inject({ url: '/nothing', headers: { accept: 'text/html' } })).status).toBe(
      404,
    );
    expect(
      (await app.inject({ url: '/a.txt', headers: { 'accept-encoding': 'gzip' } })).headers[
        'content-encoding'
      ],
    ).toBe('gzip');
    expect(
      (await app.inject({ url: '/b.txt', headers: { 'accept-encoding': 'gzip' } })).headers[
        'content-encoding'
      ],
    ).toBeUndefined();
    await tick();
    expect(lines.some((l) => l.startsWith('static /'))).toBe(true);
    expect(lines.some((l) => l.includes('reload'))).toBe(false);
  });

  it('STATIC-12 STATIC-13 dotfiles off skips any segment starting with "." (404); dotfiles: true serves them', async () => {
    const files = { '.env': 'SECRET=1', '.git/config': 'x', 'ok.txt': 'ok' };
    const off = new App({ log: () => {} }).staticWith('/', tree(files), { spaFallback: 'ok.txt' });
    for (const url of ['/.env', '/.git/config', '/%2Eenv'])
      expect((await off.inject({ url })).status).toBe(404);
    const on = new App({ log: () => {} }).staticWith('/', tree(files), { dotfiles: true });
    expect((await on.inject({ url: '/.env' })).body).toBe('SECRET=1');
    expect((await on.inject({ url: '/.git/config' })).body).toBe('x');
  });
});

describe('static trees: loading', () => {
  it('STATIC-17 STATIC-20 the tree is read at startup: later edits do not show and files added later are 404', async () => {
    const dir = tree({ 'a.txt': 'before' });
    const app = new App({ log: () => {} }).static('/', dir).build();
    writeFileSync(join(dir, 'a.txt'), 'after!');
    writeFileSync(join(dir, 'new.txt'), 'new');
    expect((await app.inject({ url: '/a.txt' })).body).toBe('before');
    expect((await app.inject({ url: '/new.txt' })).status).toBe(404);
    unlinkSync(join(dir, 'a.txt'));
    expect((await app.inject({ url: '/a.txt' })).body).toBe('before');
  });

  it('STATIC-18 STATIC-19 every file answer has an ETag; a matching If-None-Match is 304 with no body', async () => {
    const app = new App({ log: () => {} }).static('/', tree(SITE));
    const res = await app.inject({ url: '/app.js' });
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const again = await app.inject({
      url: '/app.js',
      headers: { 'if-none-match': res.headers.etag as string },
    });
    expect([again.status, again.body]).toEqual([304, '']);
    expect(again.headers.etag).toBe(res.headers.etag);
  });

  it('STATIC-56 each tree logs one startup line: files, bytes held, gzipped bytes, spilled', async () => {
    const { app, lines } = appWithLog();
    app.staticWith('/', tree({ 'a.txt': text(2000), 'b.txt': 'b', 'big.bin': text(5000) }), {
      maxFileBytes: 4096,
    });
    app.build();
    await tick();
    const line = lines.find((l) => l.startsWith('static /'))!;
    expect(line).toMatch(/: 3 files, 2001 bytes held, \d+ bytes gzipped, 1 spilled$/);
    expect(lines.filter((l) => l.startsWith('static '))).toHaveLength(1);
  });

  it('STATIC-57 STATIC-58 STATIC-59 STATIC-60 reload opens every file per request, shows edits, still 404s new files, says so once', async () => {
    const { app, lines } = appWithLog();
    const dir = tree({ 'a.txt': 'one' });
    app.staticWith('/', dir, { reload: true });
    const first = await app.inject({ url: '/a.txt' });
    expect(first.body).toBe('one');
    expect(first.headers.etag).toMatch(/^"[0-9a-f]+-3"$/);
    writeFileSync(join(dir, 'a.txt'), 'two!');
    writeFileSync(join(dir, 'b.txt'), 'b');
    const second = await app.inject({ url: '/a.txt' });
    expect(second.body).toBe('two!');
    expect(second.headers.etag).toMatch(/-4"$/);
    expect((await app.inject({ url: '/b.txt' })).status).toBe(404);
    await tick();
    expect(lines.filter((l) => l.includes('reload'))).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/1 files, 0 bytes held, 0 bytes gzipped, 1 spilled/);
  });

  it('REF-31 STATIC-04 a directory that cannot be opened stops build() and listen() with an error naming it', async () => {
    const app = new App({ log: () => {} }).static('/', 'no/such/dir');
    let err: unknown;
    try {
      app.build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError); // REF-01: one line among the other Refusals
    expect((err as RefusalError).problems).toEqual([
      expect.stringMatching(
        /^static \/: directory "no\/such\/dir" \(.*\) cannot be opened: ENOENT: create it, or give app.static the right path/,
      ),
    ]);
    await expect(
      new App({ log: () => {} }).static('/', 'no/such/dir').listen({ port: 0 }),
    ).rejects.toThrow(/cannot be opened/);
  });
});

describe('static trees: lookup and fallback', () => {
  it('STATIC-21 traversal never leaves the fixed list: .., encoded and absolute tricks are 404', async () => {
    const dir = tree({ 'pub/a.txt': 'a', 'secret.txt': 'secret' });
    const app = new App({ log: () => {} }).static('/', join(dir, 'pub'));
    for (const url of [
      '/../secret.txt',
      '/..%2Fsecret.txt',
      '/%2E%2E/secret.txt',
      '/%2e%2e%2fsecret.txt',
      `/${encodeURIComponent(join(dir, 'secret.txt'))}`,
      '//etc/passwd',
      '/a.txt%00',
      '/%E0%A4%A',
    ]) {
      const res = await app.inject({ url });
      expect([url, res.status]).toEqual([url, 404]);
    }
    expect((await app.inject({ url: '/a.txt' })).body).toBe('a');
  });

  it('STATIC-21 with a fallback, traversal gets the fallback page (dotfiles on) or 404 (off), never the file', async () => {
    const dir = tree({ 'pub/index.html': 'home', 'secret.txt': 'secret' });
    const on = new App({ log: () => {} }).staticWith('/', join(dir, 'pub'), {
      spaFallback: 'index.html',
      dotfiles: true,
    });
    expect((await on.inject({ url: '/..%2Fsecret.txt' })).body).toBe('home');
    expect((await on.inject({ url: '/../secret.txt' })).body).toBe('home');
    const off = new App({ log: () => {} }).staticWith('/', join(dir, 'pub'), {
      spaFallback: 'index.html',
    });
    expect((await off.inject({ url: '/..%2Fsecret.txt' })).status).toBe(404);
  });

  it('STATIC-22 STATIC-23 STATIC-24 VERS-02 navigations (text/html, no Accept, */*) get the fallback by default', async () => {
    const app = new App({ log: () => {} }).staticWith('/', tree(SITE), {
      spaFallback: 'index.html',
    });
    const own = await app.inject({ url: '/index.html' });
    for (const headers of [
      { accept: 'text/html,application/xhtml+xml;q=0.9' },
      {},
      { accept: '*/*' },
    ] as Record<string, string>[]) {
      const res = await app.inject({ url: '/shop/cart/3', headers });
      expect([res.status, res.body]).toEqual([200, '<h1>home</h1>']);
      // OPEN-32: the fallback file's own ETag, Cache-Control and Content-Type
      expect(res.headers.etag).toBe(own.headers.etag);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
    }
  });

  it('STATIC-25 VERS-02 with navigations, another Accept (script, JSON) is 404 naming the path', async () => {
    const app = new App({ log: () => {} }).staticWith('/', tree(SITE), {
      spaFallback: 'index.html',
    });
    for (const accept of ['application/json', 'text/javascript', 'image/*', 'text/html;q=0']) {
      const res = await app.inject({ url: '/missing.js', headers: { accept } });
      expect(res.status).toBe(404);
      expect(res.json<{ error: string }>().error).toContain('/missing.js');
    }
  });

  it('STATIC-26 VERS-02 anyPath serves the fallback for every path under the prefix, whatever Accept says', async () => {
    const app = new App({ log: () => {} }).staticWith('/app', tree(SITE), {
      spaFallback: 'index.html',
      spaFallbackFor: 'anyPath',
    });
    const res = await app.inject({
      url: '/app/missing.js',
      headers: { accept: 'application/json' },
    });
    expect([res.status, res.body]).toEqual([200, '<h1>home</h1>']);
    expect((await app.inject({ url: '/elsewhere', headers: { accept: 'text/html' } })).status).toBe(
      404,
    );
  });

  it('OPEN-30 routes win over static; static answers GET and HEAD, other methods on a file are 405 with Allow: GET, HEAD', async () => {
    @Controller()
    class Pages {
      @Returns(String)
      @Get('/app.js')
      js(): string {
        return 'from a route';
      }
      @Returns(String)
      @Post('/index.html')
      post(): string {
        return 'posted';
      }
    }
    const app = new App({ log: () => {} }).controllers(Pages).static('/', tree(SITE));
    expect((await app.inject({ url: '/app.js' })).body).toBe('from a route');
    expect((await app.inject({ method: 'POST', url: '/index.html' })).body).toBe('posted');
    const head = await app.inject({ method: 'HEAD', url: '/docs/a.txt' });
    expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '1']);
    const del = await app.inject({ method: 'DELETE', url: '/docs/a.txt' });
    expect([del.status, del.headers.allow]).toEqual([405, 'GET, HEAD']);
  });
});

describe('static trees: middleware', () => {
  it('STATIC-65 STATIC-67 the logger logs static requests, whether use() came before or after static()', async () => {
    const { app, records } = appWithLog();
    app.static('/', tree(SITE)).use(logger.with({ format: 'json' }));
    await app.inject({ url: '/app.js' });
    await new Promise((r) => setImmediate(r));
    expect(
      records.find((l) => (l.req as { url?: string } | undefined)?.url === '/app.js'),
    ).toMatchObject({ req: { method: 'GET' }, res: { statusCode: 200 } });
  });

  it('STATIC-66 CORS applies to static answers', async () => {
    const app = new App({ log: () => {} })
      .use(cors({ origins: ['https://a.example'] }))
      .static('/', tree(SITE));
    const res = await app.inject({ url: '/app.js', headers: { origin: 'https://a.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://a.example');
  });
});

describe('embedded trees', () => {
  const entries = [
    { path: 'index.html', bytes: '<h1>embedded</h1>' },
    { path: 'assets/app.js', bytes: Buffer.from(text(3000)) },
  ];

  it('STATIC-03 STATIC-61 STATIC-63 embeddedWith serves entries from memory with ETag, 304, index, fallback and gzipped copies', async () => {
    const { app, lines } = appWithLog();
    app.embeddedWith('/e', entries, { spaFallback: 'index.html' });
    const home = await app.inject({ url: '/e/' });
    expect([home.status, home.body, home.headers['cache-control']]).toEqual([
      200,
      '<h1>embedded</h1>',
      'public, max-age=3600',
    ]);
    expect(
      (await app.inject({ url: '/e/', headers: { 'if-none-match': home.headers.etag as string } }))
        .status,
    ).toBe(304);
    expect((await app.inject({ url: '/e/page' })).body).toBe('<h1>embedded</h1>');
    expect(
      (await app.inject({ url: '/e/page', headers: { accept: 'application/json' } })).status,
    ).toBe(404);
    const js = await app.inject({
      url: '/e/assets/app.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect([js.headers['content-encoding'], js.headers.vary, js.headers['last-modified']]).toEqual([
      'gzip',
      'Accept-Encoding',
      undefined,
    ]);
    await tick();
    expect(lines.find((l) => l.startsWith('embedded /e'))).toMatch(
      /2 files, 3017 bytes held, \d+ bytes gzipped, 0 spilled/,
    );
  });

  it('STATIC-03 app.embedded serves entries with the default options, or with options as embeddedWith does', async () => {
    const plain = new App({ log: () => {} }).embedded('/', entries);
    const home = await plain.inject({ url: '/' });
    expect([home.status, home.body, home.headers['cache-control']]).toEqual([
      200,
      '<h1>embedded</h1>',
      'public, max-age=3600',
    ]);
    expect((await plain.inject({ url: '/page', headers: { accept: 'text/html' } })).status).toBe(
      404,
    ); // no fallback by default
    const one = new App({ log: () => {} }).embedded('/', entries, {
      spaFallback: 'index.html',
      cacheControl: 'no-cache',
    });
    const two = new App({ log: () => {} }).embeddedWith('/', entries, {
      spaFallback: 'index.html',
      cacheControl: 'no-cache',
    });
    for (const app of [one, two]) {
      const page = await app.inject({ url: '/page', headers: { accept: 'text/html' } });
      expect([page.status, page.body, page.headers['cache-control']]).toEqual([
        200,
        '<h1>embedded</h1>',
        'no-cache',
      ]);
    }
  });

  it('REF-29 STATIC-64 an embedded tree listing a path twice is refused at startup, in one line', () => {
    const app = new App({ log: () => {} }).embeddedWith(
      '/',
      [...entries, { path: 'index.html', bytes: 'again' }],
      {},
    );
    expect(() => app.build()).toThrow(RefusalError);
    try {
      new App({ log: () => {} })
        .embeddedWith('/', [...entries, { path: 'index.html', bytes: 'again' }], {})
        .build();
    } catch (e) {
      expect((e as RefusalError).problems).toEqual([
        'embedded /: path "index.html" is listed twice: list each path once',
      ]);
    }
  });

  it('REF-30 STATIC-64 an embedded spaFallback naming no entry is refused at startup, in one line', async () => {
    const app = new App({ log: () => {} }).embeddedWith('/', entries, {
      spaFallback: 'missing.html',
    });
    await expect(app.listen({ port: 0 })).rejects.toThrow(
      /spaFallback "missing.html" names no file/,
    );
    try {
      new App({ log: () => {} })
        .embeddedWith('/', entries, { spaFallback: 'missing.html' })
        .build();
    } catch (e) {
      expect((e as RefusalError).problems).toHaveLength(1);
      expect((e as RefusalError).problems[0]).not.toContain('\n');
    }
  });
});
