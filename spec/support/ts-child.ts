import os from 'node:os';
import path from 'node:path';

// Runs a TypeScript file of this repository in a child node, as the tests see it: each file
// compiled by swc as it is required (decorator metadata on, as the tests' own transform has it),
// `fw-http` and each subpath door of package.json `exports` mapped to its source in lib/. The
// output is cached on disk by file content (tsRequireHook), so a child started again (the crash
// harness restarts one many times) starts in well under a second; swc rather than typescript's
// transpileModule, so the first child of a fresh checkout compiles lib in a second, not twenty.

const ROOT = path.resolve(__dirname, '../..');

const CACHE = path.join(os.tmpdir(), 'fw-ts-child-cache');

/**
 * JavaScript that makes a child node's `require` compile .ts files (swc, legacy decorators with
 * their metadata, ES2022, CommonJS), each output cached in CACHE under a hash of the compiler's
 * version, the file's path and its text: a child that requires lib again reads the cache instead
 * of compiling some hundred files. The first lines of a child's script (`node -e`).
 *
 * @example
 * execFile(process.execPath, ['-e', `${tsRequireHook()}\nrequire(${JSON.stringify(door)})`]);
 */
export function tsRequireHook(): string {
  return `
{
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  const cacheDir = ${JSON.stringify(CACHE)};
  const version = 'swc ' + require('@swc/core/package.json').version;
  fs.mkdirSync(cacheDir, { recursive: true });
  let swc = null;
  require.extensions['.ts'] = (module, file) => {
    const source = fs.readFileSync(file, 'utf8');
    const key = crypto.createHash('sha256').update(version + '\\0' + file + '\\0' + source).digest('hex');
    const cached = path.join(cacheDir, key + '.js');
    let out;
    try { out = fs.readFileSync(cached, 'utf8'); } catch {
      swc ??= require('@swc/core');
      out = swc.transformSync(source, { filename: file, swcrc: false, configFile: false,
        jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022',
          transform: { legacyDecorator: true, decoratorMetadata: true } },
        module: { type: 'commonjs' } }).code;
      fs.writeFileSync(cached + '.' + process.pid, out);
      fs.renameSync(cached + '.' + process.pid, cached);
    }
    module._compile(out, file);
  };
}
`;
}

const HOOK = `${tsRequireHook()}
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const [root, script] = process.argv.slice(1, 3);
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const doors = {};
for (const [key, target] of Object.entries(pkg.exports))
  if (target.types) doors[pkg.name + key.slice(1)] = target.types.slice('./dist/'.length, -'.d.ts'.length) + '.ts';
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (doors[request]) return path.join(root, doors[request]);
  return resolve.call(this, request, ...rest);
};
process.argv.splice(1, 2, script);
require(script);
`;

/** The command and arguments that run `file` (relative to the repository root) in a child node. */
export function tsChild(file: string): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['-e', HOOK, ROOT, path.join(ROOT, file)],
  };
}
