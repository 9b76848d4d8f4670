import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { transformFile } from '@swc/core';
import ts from 'typescript';
import { PUBLIC_CTX } from './public-ctx';
import {
  APP_SPEC_TS,
  EXPORTS_CHECK_MJS,
  MAIN_TS,
  SCRATCHES,
  SWC_OPTIONS,
  companions,
  jestConfigOf,
  tsconfigJestOf,
  tsconfigOf,
  type Scratch,
} from './scratch';
import { ROOT, npm, removeDir, run, runOk, stageCheckout, type Ran } from './stage';

/**
 * The consumer check (issue 17): the library as a user gets it. The checkout is packed as
 * `npm pack` on a clean clone packs it (prepack builds it), and the tarball is installed into five
 * scratch projects under os.tmpdir(), one per way of compiling and resolving modules. Each compiles
 * a small controller app (skipLibCheck off: a broken .d.ts fails) and runs it; the test then talks
 * to it over a real socket. The scratch projects install the tarball and what a user installs
 * beside it, from npm's cache where it has them; the compilers are this repository's.
 */

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

interface Prepared {
  readonly dir: string;
  readonly install: Ran;
  /** The jest run through ts-jest, for the project that has one. */
  readonly jest: Ran | null;
}

let root: string;
let stage: string;
let tarball: string;
let prepared: Map<string, Promise<Prepared>>;
let manifestBefore: string;

/** Writes a scratch project, installs the tarball, compiles it; starts its jest run if it has one. */
async function prepare(s: Scratch): Promise<Prepared> {
  const dir = join(root, s.name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const pkg = { name: `scratch-${s.name}`, version: '1.0.0', private: true, type: s.type };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfigOf(s), null, 2));
  writeFileSync(join(dir, 'src', 'main.ts'), MAIN_TS);
  const install = await npm(
    ['install', tarball, ...companions(), '--prefer-offline', '--no-audit', '--no-fund'],
    { cwd: dir },
  );
  if (s.compiler === 'tsc') {
    await runOk(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: dir });
  } else {
    // the user's code compiled by SWC (type-checked by nothing), the library built by tsc
    writeFileSync(join(dir, '.swcrc'), JSON.stringify(SWC_OPTIONS, null, 2));
    const out = await transformFile(join(dir, 'src', 'main.ts'), {
      cwd: dir,
      filename: join(dir, 'src', 'main.ts'),
      sourceFileName: '../src/main.ts',
    });
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'main.js'), out.code);
  }
  let jest: Ran | null = null;
  if (s.jest) {
    mkdirSync(join(dir, 'test'), { recursive: true });
    writeFileSync(join(dir, 'test', 'app.spec.ts'), APP_SPEC_TS);
    writeFileSync(join(dir, 'jest.config.js'), jestConfigOf());
    writeFileSync(join(dir, 'tsconfig.jest.json'), JSON.stringify(tsconfigJestOf(dir), null, 2));
    jest = await run(
      process.execPath,
      [JEST, '--ci', '--watchman=false', '--cacheDirectory', join(dir, '.jest-cache')],
      { cwd: dir },
    );
  }
  return { dir, install, jest };
}

/**
 * Runs at most `n` pieces of work at a time: the scratch projects' installs and compiles are
 * CPU-bound, and the specs in jest's other worker keep their share of the two cores.
 */
function slots(n: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = n;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (free > 0) free--;
    else await new Promise<void>((r) => waiting.push(r));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next !== undefined) next();
      else free++;
    }
  };
}

/** A stand-in for the outbound service: GET /stock/{sku} answers 7 available; it notes each path. */
async function warehouse(): Promise<{ server: Server; url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url!);
    const sku = decodeURIComponent(req.url!.slice('/stock/'.length));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ sku, available: 7 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly docs: { name: string; code: string; message: string } | null;
  readonly stderr: () => string;
}

/** Runs the compiled app with node until its first line (the address it listens on). */
function startApp(dir: string, warehouseUrl: string): Promise<Started> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: dir,
    env: { ...process.env, WAREHOUSE_URL: warehouseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      const first = JSON.parse(line) as Pick<Started, 'url' | 'docs'>;
      resolve({ child, ...first, stderr: () => stderr });
    });
    child.once('exit', (code) =>
      reject(new Error(`the app exited ${code} before listening:\n${stderr}`)),
    );
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => {
    child.once('exit', (code) => r(code));
    child.kill('SIGTERM');
  });
}

/** The names of the members a class declares in a .d.ts (`#private` has none). */
function membersOf(dts: string, className: string): string[] {
  const file = ts.createSourceFile(dts, readFileSync(dts, 'utf8'), ts.ScriptTarget.Latest, true);
  const c = file.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === className,
  );
  if (c === undefined) throw new Error(`no class ${className} in ${dts}`);
  const names = c.members.flatMap((m) =>
    m.name === undefined || ts.isPrivateIdentifier(m.name) ? [] : [m.name.getText()],
  );
  return [...new Set(names)];
}

describe('the consumer check: the packed tarball installed into scratch projects', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-http-consumer-'));
    stage = stageCheckout('fw-http-consumer-stage-');
    manifestBefore = readFileSync(join(stage, 'package.json'), 'utf8');
    const packed = await npm(['pack', '--json', '--pack-destination', root], { cwd: stage });
    tarball = join(root, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);
    const slot = slots(2);
    prepared = new Map(SCRATCHES.map((s) => [s.name, slot(() => prepare(s))]));
    // each test awaits its own project; a failure is reported there, not as an unhandled rejection
    for (const p of prepared.values()) p.catch(() => {});
  }, 120_000);

  afterAll(() => {
    removeDir(root);
    removeDir(stage);
  });

  it.each(SCRATCHES.map((s) => [s.name, s] as const))(
    '%s: compiles, runs, validates, replays the idempotent POST, calls out, writes openapi.json',
    async (_name, s) => {
      const { dir, install } = await prepared.get(s.name)!;
      // nothing runs at install that the user did not ask for (swagger-ui-dist's postinstall was one)
      expect(install.stderr).not.toMatch(/install-script/i);
      expect(existsSync(join(dir, 'node_modules', 'swagger-ui-dist'))).toBe(false);

      const w = await warehouse();
      const app = await startApp(dir, w.url);
      try {
        // .docs() without the optional peer asks for it by name
        expect(app.docs).toEqual({
          name: 'HttpError',
          code: 'PeerMissing',
          message: expect.stringContaining('npm install swagger-ui-dist') as string,
        });

        const post = (key: string, body: unknown) =>
          fetch(`${app.url}/orders`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify(body),
          });
        const first = await post('k1', { sku: 'abc', qty: 2 });
        expect(first.status).toBe(201);
        expect(first.headers.get('location')).toBe('/orders/1');
        const placed = await first.text();
        expect(JSON.parse(placed)).toEqual({ id: '1', sku: 'abc', qty: 2 });
        const again = await post('k1', { sku: 'abc', qty: 2 });
        expect(again.status).toBe(201);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await again.text()).toBe(placed);

        const bad = await post('k2', { sku: 'abc', qty: 0 });
        expect(bad.status).toBe(400);
        expect(await bad.text()).toContain('qty');

        const stock = await fetch(`${app.url}/stock/a%20b`);
        expect(stock.status).toBe(200);
        expect(await stock.json()).toEqual({ sku: 'a b', available: 7 });
        expect(w.paths).toEqual(['/stock/a%20b']);

        const served = await fetch(`${app.url}/openapi.json`);
        expect(served.status).toBe(200);
        const doc = (await served.json()) as { paths: Record<string, unknown> };
        expect(Object.keys(doc.paths).sort()).toEqual(['/orders', '/stock/{sku}']);
        const written = JSON.parse(
          readFileSync(join(dir, 'out', 'openapi.json'), 'utf8'),
        ) as unknown;
        expect(written).toEqual(doc);
      } finally {
        const code = await stop(app.child);
        w.server.close();
        expect(app.stderr()).toBe('');
        expect(code).toBe(0);
      }
    },
    240_000,
  );

  it('cjs-node: a jest test of the app passes through ts-jest, type-checked, with no ts-jest warning', async () => {
    const { jest } = await prepared.get('cjs-node')!;
    expect(jest).not.toBeNull();
    expect({ code: jest!.code, out: jest!.stderr }).toEqual({
      code: 0,
      out: expect.stringMatching(/Tests:\s+1 passed, 1 total/) as string,
    });
    expect(jest!.stderr).not.toMatch(/ts-jest\[[^\]]*\] \(WARN\)/);
  }, 240_000);

  it('esm-nodenext: every export of the three doors is a named ES module export, of one instance', async () => {
    const { dir } = await prepared.get('esm-nodenext')!;
    writeFileSync(join(dir, 'exports-check.mjs'), EXPORTS_CHECK_MJS);
    const out = JSON.parse(
      (await runOk(process.execPath, ['exports-check.mjs'], { cwd: dir })).stdout,
    ) as Record<string, { count: number; missing: string[]; sameInstance: boolean }>;
    expect(Object.keys(out)).toEqual(['fw-http', 'fw-http/cache', 'fw-http/fetch']);
    for (const door of Object.values(out)) {
      expect(door.count).toBeGreaterThan(5);
      expect(door.missing).toEqual([]);
      expect(door.sameInstance).toBe(true);
    }
  }, 240_000);

  it("the tarball's package.json has no prepare (it holds the build); the checkout's is left as it was", async () => {
    const { dir } = await prepared.get('cjs-node')!;
    const shipped = JSON.parse(
      readFileSync(join(dir, 'node_modules', 'fw-http', 'package.json'), 'utf8'),
    ) as { scripts: Record<string, string> };
    expect(shipped.scripts.prepare).toBeUndefined();
    expect(readFileSync(join(stage, 'package.json'), 'utf8')).toBe(manifestBefore);
    expect(
      (JSON.parse(manifestBefore) as { scripts: Record<string, string> }).scripts.prepare,
    ).toBe('npm run build:package');
  }, 240_000);

  it('the packed Ctx declares exactly its public members (the @internal ones are stripped)', async () => {
    const { dir } = await prepared.get('cjs-node')!;
    const dts = join(dir, 'node_modules', 'fw-http', 'dist', 'lib', 'http', 'request', 'ctx.d.ts');
    expect(membersOf(dts, 'Ctx').sort()).toEqual([...PUBLIC_CTX].sort());
  }, 240_000);
});
