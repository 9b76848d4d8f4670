// A smoke test of the sample shop on another JavaScript runtime: `node scripts/test-runtime.mjs deno`
// (`npm run test:deno`) or `… bun` (`npm run test:bun`). The runtime's binary comes from the npm
// registry's platform package (what the `deno` and `bun` packages install), fetched once into
// node_modules/.cache/<runtime>. It builds the sample (`npm run build`, incremental), starts
// dist/sample/main.js under the runtime on a free port, calls GET /catalog, POST /orders twice
// with one Idempotency-Key (the second is the replay) and GET /events, then stops it with SIGTERM
// and expects exit 0. Exits 1 on any failure, printing what the runtime printed.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** How long the runtime may take to print its listening line (a first start compiles a lot). */
const START_TIMEOUT_MS = Number(process.env.SMOKE_START_TIMEOUT_MS ?? 60_000);

const RUNTIMES = {
  // the major tested; `npm view deno` names the same platform packages
  deno: { pkg: '@deno/linux-x64-glibc@2', bin: 'deno', args: ['run', '--allow-all'] },
  bun: { pkg: '@oven/bun-linux-x64@1', bin: 'bin/bun', args: [] },
};

const name = process.argv[2];
const runtime = RUNTIMES[name];
if (runtime === undefined) {
  console.error(`usage: node scripts/test-runtime.mjs ${Object.keys(RUNTIMES).join('|')}`);
  process.exit(2);
}
if (`${process.platform}-${process.arch}` !== 'linux-x64') {
  console.error(`test:${name}: the registry binary is fetched for linux-x64 only; run the sample
under ${name} yourself on ${process.platform}-${process.arch}`);
  process.exit(1);
}

/** The runtime's binary, from node_modules/.cache/<runtime>, fetched from the registry when missing. */
function binary() {
  const dir = join('node_modules', '.cache', name);
  const file = join(dir, runtime.bin);
  if (existsSync(file)) return file;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, runtime.pkg], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [tgz] = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  execFileSync('tar', ['-xzf', join(dir, tgz), '-C', dir, '--strip-components=1']);
  rmSync(join(dir, tgz));
  return file;
}

/** Starts the sample under the runtime; resolves with its URL once it prints the listening line. */
function startSample(file) {
  const env = { ...process.env, HOST: '127.0.0.1', PORT: '0' };
  // the in-memory stores: this tests the runtime, not Redis or Postgres
  for (const k of ['REDIS_URL', 'DATABASE_URL', 'WAREHOUSE_URL', 'NODE_ENV']) delete env[k];
  env.SESSION_SECRET = randomBytes(32).toString('base64');
  const child = spawn(file, [...runtime.args, 'dist/sample/main.js'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const printed = [];
  child.stderr.on('data', (d) => printed.push(String(d)));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line in ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      printed.push(line + '\n');
      const m = /"msg":"listening on (http:\/\/[^"]+)"/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited ${code} before listening`));
    });
  });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { child, url, exited, printed };
}

async function calls(url) {
  const catalog = await fetch(`${url}/catalog`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(catalog.status, 200, 'GET /catalog');
  // fetch inflates on its own; the header says the runtime's zlib sent it gzipped
  assert.equal(catalog.headers.get('content-encoding'), 'gzip', 'GET /catalog is gzipped');
  const items = await catalog.json();
  assert.ok(Array.isArray(items) && items.length >= 200, 'GET /catalog: 200 items or more');

  const post = () =>
    fetch(`${url}/orders`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer alice-token',
        'idempotency-key': `smoke-${name}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ sku: 'abc', qty: 2 }),
    });
  const first = await post();
  const placed = await first.text();
  assert.equal(first.status, 201, `POST /orders: ${placed}`);
  assert.equal(first.headers.get('idempotent-replayed'), null);
  const again = await post();
  assert.equal(again.status, 201, 'POST /orders again');
  assert.equal(again.headers.get('idempotent-replayed'), 'true', 'the second POST is the replay');
  assert.equal(await again.text(), placed, 'the replay is the kept answer, byte for byte');

  const events = await fetch(`${url}/events?count=3`);
  assert.equal(events.status, 200, 'GET /events');
  assert.match(events.headers.get('content-type'), /^text\/event-stream/);
  const data = [...(await events.text()).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
  assert.deepEqual(data, [{ n: 1 }, { n: 2 }, { n: 3 }], 'GET /events: three events, then the end');
}

/** Runs a step of the setup; on a failure says which, and exits 1 (its output is above). */
function step(what, work) {
  try {
    return work();
  } catch (e) {
    console.error(`test:${name}: ${what} failed: ${e.message.split('\n')[0]}`);
    process.exit(1);
  }
}

const file = step(`fetching ${runtime.pkg}`, binary);
const version = step(
  `${file} --version`,
  () => execFileSync(file, ['--version'], { encoding: 'utf8' }).split('\n')[0],
).replace(/^(?!deno|bun)/, `${name} `);
step('npm run build', () =>
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' }),
);
const sample = startSample(file);
try {
  const url = await sample.url;
  await calls(url);
  sample.child.kill('SIGTERM');
  const { code, signal } = await sample.exited;
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'SIGTERM drains and exits 0');
  console.log(
    `test:${name}: the sample on ${version}: GET /catalog, the idempotent replay and GET /events work; SIGTERM exits 0`,
  );
} catch (e) {
  sample.child.kill('SIGKILL');
  console.error(
    `test:${name}: the sample on ${version} failed: ${e.message}\n--- what it printed ---\n${sample.printed.join('')}`,
  );
  process.exitCode = 1;
}
