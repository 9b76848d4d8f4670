import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Controller, Get, Query, Returns } from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

// One rule for the static tree and for Dir/FileBody: a symlink that leaves the root is never
// followed; one that stays inside is followed only with `followSymlinks: true` (default false);
// names with a segment starting with "." are 404 unless `dotfiles: true` (default false).

@Controller()
class LinkController {
  @Get('/file')
  @Returns(FileBody)
  file(@Query('name') name: string, dir: Dir) {
    return new FileBody({ dir, name, contentType: 'text/plain' });
  }
}

let base: string;
let root: string;
const PASSWD = '/etc/passwd';

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'fw-links-'));
  root = join(base, 'root');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(join(root, '.git'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(root, 'hello.txt'), 'hello');
  writeFileSync(join(root, 'sub', 'inner.txt'), 'inner');
  writeFileSync(join(root, '.env'), 'SECRET=1');
  writeFileSync(join(root, '.git', 'config'), 'git config');
  writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
  symlinkSync(PASSWD, join(root, 'passwd.txt'));
  symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'out.txt'));
  symlinkSync(join(base, 'outside'), join(root, 'out-dir'));
  symlinkSync(join(root, 'hello.txt'), join(root, 'in.txt'));
  symlinkSync(join(root, 'sub'), join(root, 'in-dir'));
  symlinkSync(root, join(root, 'sub', 'loop')); // a cycle: must not hang the walk
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

const LEAVING = ['/passwd.txt', '/out.txt', '/out-dir/secret.txt'];
const INSIDE: [string, string][] = [
  ['/in.txt', 'hello'],
  ['/in-dir/inner.txt', 'inner'],
];

function staticApp(options: Parameters<App['staticWith']>[2]): App {
  return new App({ log: () => {} }).staticWith('/', root, options);
}

describe('static trees: symlinks (one rule with Dir)', () => {
  it('the test machine has /etc/passwd for the link to point at', () => {
    expect(existsSync(PASSWD)).toBe(true);
  });

  for (const [what, options] of [
    ['held', {}],
    ['spilled (maxFileBytes: 0)', { maxFileBytes: 0 }],
    ['reload', { reload: true }],
  ] as const) {
    it(`STATIC-21 a symlink that leaves the root (to /etc/passwd, to a temp file, through a directory) is 404, ${what}, with followSymlinks off and on`, async () => {
      for (const follow of [false, true]) {
        const app = staticApp({ ...options, followSymlinks: follow });
        for (const url of LEAVING) {
          const res = await app.inject({ url });
          expect([url, follow, res.status]).toEqual([url, follow, 404]);
          expect(res.body).not.toContain('root:');
          expect(res.body).not.toContain('outside secret');
        }
        expect((await app.inject({ url: '/hello.txt' })).body).toBe('hello');
      }
    });

    it(`a symlink that stays inside the root is 404 by default and served with followSymlinks: true (${what})`, async () => {
      const off = staticApp(options);
      for (const [url] of INSIDE) expect((await off.inject({ url })).status).toBe(404);
      const on = staticApp({ ...options, followSymlinks: true });
      for (const [url, body] of INSIDE) expect((await on.inject({ url })).body).toBe(body);
      expect((await on.inject({ url: '/sub/inner.txt' })).body).toBe('inner');
    });
  }

  it('with reload, a file swapped for a symlink after startup is not followed (404)', async () => {
    const swap = join(root, 'swap.txt');
    writeFileSync(swap, 'plain');
    try {
      for (const follow of [false, true]) {
        const app = staticApp({ reload: true, followSymlinks: follow });
        expect((await app.inject({ url: '/swap.txt' })).body).toBe('plain');
        unlinkSync(swap);
        symlinkSync(join(base, 'outside', 'secret.txt'), swap);
        expect((await app.inject({ url: '/swap.txt' })).status).toBe(404);
        unlinkSync(swap);
        writeFileSync(swap, 'plain');
      }
    } finally {
      rmSync(swap, { force: true });
    }
  });
});

describe('Dir and FileBody: symlinks and dotfiles (one rule with the static tree)', () => {
  const appFor = (dir: Dir) => new App({ log: () => {} }).controllers(LinkController).provide(dir);
  const get = (app: App, name: string) =>
    app.inject({ url: `/file?name=${encodeURIComponent(name)}` });

  it('ANS-15 a symlink that leaves the directory (to /etc/passwd, to a temp file, through a directory) is 404 with followSymlinks off and on', async () => {
    for (const follow of [false, true]) {
      const app = appFor(Dir.open(root, { followSymlinks: follow }));
      for (const url of LEAVING) {
        const res = await get(app, url.slice(1));
        expect([url, follow, res.status]).toEqual([url, follow, 404]);
        expect(res.body).not.toContain('root:');
      }
      expect((await get(app, 'hello.txt')).body).toBe('hello');
    }
  });

  it('a symlink that stays inside the directory is 404 by default and served with followSymlinks: true', async () => {
    const off = appFor(Dir.open(root));
    const missing = await get(off, 'nope.txt');
    for (const [url] of INSIDE) {
      const res = await get(off, url.slice(1));
      expect(res.status).toBe(404);
      expect(res.body).toBe(missing.body);
    }
    const on = appFor(Dir.open(root, { followSymlinks: true }));
    for (const [url, body] of INSIDE) expect((await get(on, url.slice(1))).body).toBe(body);
  });

  it('STATIC-12 names with a segment starting with "." are 404 by default, the same 404 as a missing file', async () => {
    const app = appFor(Dir.open(root));
    const missing = await get(app, 'nope.txt');
    for (const name of ['.env', '.git/config', 'sub/.hidden', '.']) {
      const res = await get(app, name);
      expect([name, res.status]).toEqual([name, 404]);
      expect(res.body).toBe(missing.body);
    }
  });

  it('STATIC-13 Dir.open(path, { dotfiles: true }) serves them', async () => {
    const app = appFor(Dir.open(root, { dotfiles: true }));
    expect((await get(app, '.env')).body).toBe('SECRET=1');
    expect((await get(app, '.git/config')).body).toBe('git config');
    // a lone "." segment is the directory itself, not a dotfile: followed either way
    expect((await get(appFor(Dir.open(root)), 'sub/./inner.txt')).body).toBe('inner');
  });

  it('the static tree and FileBody answer the same for the same names, by default and with the options on', async () => {
    for (const options of [{}, { followSymlinks: true, dotfiles: true }]) {
      const tree = staticApp(options);
      const files = appFor(Dir.open(root, options));
      for (const name of [
        'hello.txt',
        '.env',
        '.git/config',
        'in.txt',
        'in-dir/inner.txt',
        'out.txt',
        'passwd.txt',
        'out-dir/secret.txt',
      ]) {
        const a = await tree.inject({ url: '/' + name });
        const b = await get(files, name);
        expect([name, options, b.status, b.status === 200 ? b.body : '']).toEqual([
          name,
          options,
          a.status,
          a.status === 200 ? a.body : '',
        ]);
      }
    }
  });
});
