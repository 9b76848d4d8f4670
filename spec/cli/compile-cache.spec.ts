import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { enableCompileCache } from '../../lib/cli/compile-cache';
import { tsChild } from '../support/ts-child';

// `fw-http` turns on Node's compile cache (Node 22.1 and later) before it loads fw and the app;
// on Node 20, which has none, it runs as before. `npm test` runs this on the machine's Node;
// `npm run test:node22` and `test:node24` run it where the cache exists.

const hasCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache;

describe('the compile cache of the fw-http command', () => {
  it('is turned on where node:module has enableCompileCache, and answers its directory', () => {
    const calls: string[] = [];
    const host = {
      enableCompileCache: () => {
        calls.push('enable');
        return { status: 1, directory: '/tmp/cache' };
      },
    };
    expect(enableCompileCache(host)).toBe('/tmp/cache');
    expect(calls).toEqual(['enable']);
  });

  it('is skipped where Node has none (Node 20), and a cache Node turns down or cannot make is no error', () => {
    expect(enableCompileCache({})).toBeNull();
    // NODE_DISABLE_COMPILE_CACHE=1: status DISABLED, no directory
    expect(enableCompileCache({ enableCompileCache: () => ({ status: 3 }) })).toBeNull();
    const failing = () => {
      throw new Error('EACCES');
    };
    expect(enableCompileCache({ enableCompileCache: failing })).toBeNull();
  });

  it(`the command writes the cache before it loads fw on this Node (${process.version}: ${hasCache === 'function' ? 'has' : 'has no'} compile cache), and runs`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fw-compile-cache-'));
    try {
      const { command, args } = tsChild('lib/cli/main.ts');
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir };
      delete env.NODE_COMPILE_CACHE;
      delete env.NODE_DISABLE_COMPILE_CACHE;
      const ran = spawnSync(command, [...args, '--help'], { env, encoding: 'utf8' });
      expect({ status: ran.status, stderr: ran.stderr }).toEqual({ status: 0, stderr: '' });
      expect(ran.stdout).toContain('usage: fw-http <command> <entry>');
      const cache = path.join(dir, 'node-compile-cache');
      if (hasCache === 'function') {
        // one directory per Node version, holding an entry per module compiled after the switch
        const [version] = readdirSync(cache);
        expect(readdirSync(path.join(cache, version!)).length).toBeGreaterThan(0);
      } else {
        expect(existsSync(cache)).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
