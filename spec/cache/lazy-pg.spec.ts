import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { tsRequireHook } from '../support/ts-child';

// pg is loaded by the first `new PgStore({ connectionString })`, not by requiring a door; without
// it installed, that store is refused with CachePeerMissing naming `npm install pg`. Checked in a
// fresh node, which compiles lib's TypeScript as it requires it (as lazy-ioredis.spec does).

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

const CHILD = `
${tsRequireHook()}
const Module = require('node:module');
if (process.argv[2] === 'absent') {
  // As if pg were not installed: resolving it fails the way a missing package does.
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (request === 'pg') { const e = new Error("Cannot find module 'pg'"); e.code = 'MODULE_NOT_FOUND'; throw e; }
    return resolve.call(this, request, ...rest);
  };
}
const loaded = () => Object.keys(require.cache).some((f) => f.includes('/node_modules/pg/'));
const seen = {};
const { PgStore } = require(process.argv[1]);
seen.afterRequire = loaded();
try {
  const store = new PgStore({ connectionString: 'postgres://127.0.0.1:1/x', sweepEveryMs: 0 });
  seen.afterNew = loaded();
  store.close().then(() => console.log(JSON.stringify(seen)));
} catch (e) {
  seen.error = { code: e.code, message: e.message };
  console.log(JSON.stringify(seen));
}
`;

async function child(mode: 'present' | 'absent'): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    ['-e', CHILD, path.join(ROOT, 'lib/cache/index.ts'), mode],
    { cwd: ROOT, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe('pg loads lazily', () => {
  it('requiring fw-http/cache does not load pg; new PgStore({ connectionString }) does', async () => {
    expect(await child('present')).toEqual({ afterRequire: false, afterNew: true });
  }, 60_000);

  it('without pg installed, new PgStore({ connectionString }) throws CachePeerMissing naming npm install pg', async () => {
    expect(await child('absent')).toEqual({
      afterRequire: false,
      error: {
        code: 'CachePeerMissing',
        message: 'PgStore needs the pg package (an optional peer dependency): npm install pg',
      },
    });
  }, 60_000);
});
