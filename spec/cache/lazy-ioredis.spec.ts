import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { tsRequireHook } from '../support/ts-child';

// ioredis is loaded by the first `new RedisStore(…)`, not by requiring a door: an app that never
// uses Redis does not pay for it, nor install it (an optional peer: without it that store is
// refused with CachePeerMissing naming `npm install ioredis`). Checked in a fresh node, which compiles lib's TypeScript as it
// requires it (swc, one file at a time, as the suite does; cached on disk
// by support/ts-child.ts).

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

const CHILD = `
${tsRequireHook()}
if (process.argv[4] === 'absent') {
  // As if ioredis were not installed: resolving it fails the way a missing package does.
  const Module = require('node:module');
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (request === 'ioredis') { const e = new Error("Cannot find module 'ioredis'"); e.code = 'MODULE_NOT_FOUND'; throw e; }
    return resolve.call(this, request, ...rest);
  };
}
const ioredis = () => Object.keys(require.cache).some((f) => f.includes('/node_modules/ioredis/'));
const seen = {};
const door = require(process.argv[1]);
seen.afterRequire = ioredis();
const { RedisStore } = process.argv[2] === 'http' ? require(process.argv[3]) : door;
try {
  const store = new RedisStore({ url: 'redis://127.0.0.1:1' });
  seen.afterNew = ioredis();
  store.close().then(() => console.log(JSON.stringify(seen)));
} catch (e) {
  seen.error = { code: e.code, message: e.message };
  console.log(JSON.stringify(seen));
}
`;

async function loads(
  door: 'cache' | 'http',
  mode: 'present' | 'absent' = 'present',
): Promise<Record<string, unknown>> {
  const cacheDoor = path.join(ROOT, 'lib/cache/index.ts');
  const first = door === 'http' ? path.join(ROOT, 'lib/http/index.ts') : cacheDoor;
  const { stdout } = await run(process.execPath, ['-e', CHILD, first, door, cacheDoor, mode], {
    cwd: ROOT,
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe('ioredis loads lazily', () => {
  it('requiring fw-http/cache does not load ioredis; new RedisStore(…) does', async () => {
    expect(await loads('cache')).toEqual({ afterRequire: false, afterNew: true });
  }, 60_000);

  it('requiring fw-http does not load ioredis; new RedisStore(…) does', async () => {
    expect(await loads('http')).toEqual({ afterRequire: false, afterNew: true });
  }, 60_000);

  it('without ioredis installed, new RedisStore(…) throws CachePeerMissing naming npm install ioredis', async () => {
    expect(await loads('cache', 'absent')).toEqual({
      afterRequire: false,
      error: {
        code: 'CachePeerMissing',
        message:
          'RedisStore needs the ioredis package (an optional peer dependency): npm install ioredis',
      },
    });
  }, 60_000);
});
