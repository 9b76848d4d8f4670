#!/usr/bin/env node
// `npm run checks` (the first half of `npm test`): lint, format, both type-checks and the OpenAPI
// check, run at once rather than one after another. Each is single-threaded and they share no
// state (each keeps its own cache under node_modules/.cache or dist/), so on two cores they take
// about half the time in a row would. Each check's output is printed whole when it ends, under
// its name, so two never interleave; exits 1 when any failed, naming them.
import { spawn } from 'node:child_process';

const CHECKS = ['lint', 'format:check', 'typecheck:main', 'typecheck:indexed', 'check:openapi'];

function run(name) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString().trimEnd();
      process.stdout.write(`\n> ${name}: ${code === 0 ? 'ok' : 'FAILED'} (${seconds} s)\n`);
      if (text !== '') process.stdout.write(text + '\n');
      resolve(code === 0 ? null : name);
    });
  });
}

const failed = (await Promise.all(CHECKS.map(run))).filter((n) => n !== null);
if (failed.length > 0) {
  process.stdout.write(`\nchecks failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
