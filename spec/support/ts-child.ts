import os from 'node:os';
import path from 'node:path';

// Runs a TypeScript file of this repository in a child node, as the tests see it: each file
// compiled by typescript's transpileModule as it is required (decorator metadata on, as ts-jest
// does), `fw-http` and each subpath door of package.json `exports` mapped to its source in lib/.
// The output is cached on disk by file content, so a child started again (the crash harness
// restarts one many times) starts in well under a second.

const ROOT = path.resolve(__dirname, '../..');

const HOOK = `
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const Module = require('node:module');
const [root, cacheDir, script] = process.argv.slice(1, 4);
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const doors = {};
for (const [key, target] of Object.entries(pkg.exports))
  if (target.types) doors[pkg.name + key.slice(1)] = target.types.slice('./dist/'.length, -'.d.ts'.length) + '.ts';
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (doors[request]) return path.join(root, doors[request]);
  return resolve.call(this, request, ...rest);
};
fs.mkdirSync(cacheDir, { recursive: true });
let ts = null;
require.extensions['.ts'] = (module, file) => {
  const source = fs.readFileSync(file, 'utf8');
  const cached = path.join(cacheDir, crypto.createHash('sha256').update(file + '\\0' + source).digest('hex') + '.js');
  let out;
  try { out = fs.readFileSync(cached, 'utf8'); } catch {
    ts ??= require('typescript');
    out = ts.transpileModule(source, { fileName: file, compilerOptions: {
      module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, experimentalDecorators: true,
      emitDecoratorMetadata: true, esModuleInterop: true } }).outputText;
    fs.writeFileSync(cached + '.' + process.pid, out);
    fs.renameSync(cached + '.' + process.pid, cached);
  }
  module._compile(out, file);
};
process.argv.splice(1, 3, script);
require(script);
`;

/** The command and arguments that run `file` (relative to the repository root) in a child node. */
export function tsChild(file: string): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ['-e', HOOK, ROOT, path.join(os.tmpdir(), 'fw-ts-child-cache'), path.join(ROOT, file)],
  };
}
