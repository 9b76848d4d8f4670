import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { transformFile } from '@swc/core';
import ts from 'typescript';
import { packageDoors } from './doors';
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
import {
  EXPECTED_INSTALL_SCRIPTS,
  installScriptsNamed,
  readmeBlock,
  readmeExpects,
  readmeToolchains,
  type ReadmeToolchain,
} from './readme-toolchains';
import { ROOT, npm, removeDir, run, runOk, stageCheckout, type Ran } from './stage';

/**
 * The consumer check (`npm run test:consumers`, not part of `npm test`'s jest run): the library as
 * a user gets it. The checkout is packed as `npm pack` on a clean clone packs it (prepack builds
 * it), and the tarball is installed into scratch projects under os.tmpdir(): five, one per way of
 * compiling and resolving modules, compiled by this repository's TypeScript 5.9 or SWC; and two
 * set up as the README says, whose compilers and jest come from the registry as `npm install`
 * gives them today (TypeScript 7 with @swc/jest, TypeScript 6 with ts-jest). Each compiles a small
 * controller app (skipLibCheck off: a broken .d.ts fails) and runs it; the test then talks to it
 * over a real socket. The scratch projects install from npm's cache where it has the packages.
 */

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

interface Prepared {
  readonly dir: string;
  readonly install: Ran;
  /** The jest run, for the projects that have one. */
  readonly jest: Ran | null;
  /** The README's toolchains: their `npm install -D`, and the `tsc --version` it gave. */
  readonly tools?: { readonly install: Ran; readonly tscVersion: string };
}

/** What an install of npm's here must not wait on, or report at length. */
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];

let root: string;
let stage: string;
let tarball: string;
let prepared: Map<string, Promise<Prepared>>;
let manifestBefore: string;

/** A scratch project with its package.json, tsconfig.json and app; the tarball installed in it. */
async function scaffold(
  name: string,
  files: { type: Scratch['type']; tsconfig: string },
): Promise<{ dir: string; install: Ran }> {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const pkg = { name: `scratch-${name}`, version: '1.0.0', private: true, type: files.type };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), files.tsconfig);
  writeFileSync(join(dir, 'src', 'main.ts'), MAIN_TS);
  const install = await npm(['install', tarball, ...companions(), ...NPM_FLAGS], { cwd: dir });
  return { dir, install };
}

/** Writes a scratch project, installs the tarball, compiles it; starts its jest run if it has one. */
async function prepare(s: Scratch): Promise<Prepared> {
  const tsconfig = JSON.stringify(tsconfigOf(s), null, 2);
  const { dir, install } = await scaffold(s.name, { type: s.type, tsconfig });
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
 * A project set up as the README says: its tsconfig.json, its `npm install -D` line (the
 * compiler and jest as the registry gives them today), its jest.config.js. It is built by its
 * own tsc with skipLibCheck off, and its jest test is run by its own jest.
 */
async function prepareToolchain(t: ReadmeToolchain): Promise<Prepared> {
  const { dir, install } = await scaffold(t.name, {
    type: 'commonjs',
    tsconfig: readmeBlock('tsconfig.json'),
  });
  // a first install of a toolchain fetches a few hundred packages
  const tools = await run('npm', ['install', '-D', ...t.devPackages, ...NPM_FLAGS], {
    cwd: dir,
    timeoutMs: 600_000,
  });
  if (tools.code !== 0) throw new Error(`npm install -D failed:\n${tools.stderr}`);
  const tsc = join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
  const tscVersion = (await runOk(process.execPath, [tsc, '--version'], { cwd: dir })).stdout;
  // the README's tsconfig leaves skipLibCheck at its default, off; said here so that it stays off
  await runOk(process.execPath, [tsc, '-p', 'tsconfig.json', '--skipLibCheck', 'false'], {
    cwd: dir,
  });
  mkdirSync(join(dir, 'test'), { recursive: true });
  writeFileSync(join(dir, 'test', 'app.spec.ts'), APP_SPEC_TS);
  writeFileSync(join(dir, 'jest.config.js'), t.jestConfig);
  const jest = await run(
    process.execPath,
    [
      join(dir, 'node_modules', 'jest', 'bin', 'jest.js'),
      ...['--ci', '--watchman=false', '--cacheDirectory', join(dir, '.jest-cache')],
    ],
    { cwd: dir },
  );
  return { dir, install, jest, tools: { install: tools, tscVersion } };
}

const TOOLCHAINS = readmeToolchains();

/** Every scratch project's name: the five module setups, then the README's toolchains. */
const PROJECTS = [...SCRATCHES.map((s) => s.name), ...TOOLCHAINS.map((t) => t.name)];

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
    prepared = new Map([
      ...SCRATCHES.map((s) => [s.name, slot(() => prepare(s))] as const),
      ...TOOLCHAINS.map((t) => [t.name, slot(() => prepareToolchain(t))] as const),
    ]);
    // each test awaits its own project; a failure is reported there, not as an unhandled rejection
    for (const p of prepared.values()) p.catch(() => {});
  }, 120_000);

  afterAll(() => {
    removeDir(root);
    removeDir(stage);
  });

  it.each(PROJECTS)(
    '%s: compiles, runs, validates, replays the idempotent POST, calls out, writes openapi.json',
    async (name) => {
      const { dir, install } = await prepared.get(name)!;
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
    // the README's toolchains are installed from the registry when npm's cache lacks them
    900_000,
  );

  it.each(TOOLCHAINS.map((t) => [t.name, t] as const))(
    "%s: the README's toolchain as installed today builds with skipLibCheck off and passes the app's jest test, warning only as the README says",
    async (_name, t) => {
      const { jest, tools } = await prepared.get(t.name)!;
      expect(tools!.tscVersion).toMatch(new RegExp(`^Version ${t.typescript}\\.`));
      expect({ code: jest!.code, out: jest!.stderr }).toEqual({
        code: 0,
        out: expect.stringMatching(/Tests:\s+1 passed, 1 total/) as string,
      });
      // ts-jest's TS151002 (a hybrid module kind without isolatedModules) or any other warning
      expect(jest!.stderr).not.toMatch(/ts-jest\[[^\]]*\] \(WARN\)/);
      const named = installScriptsNamed(tools!.install.stderr);
      expect(named.filter((p) => !EXPECTED_INSTALL_SCRIPTS.includes(p))).toEqual([]);
      for (const p of EXPECTED_INSTALL_SCRIPTS)
        expect({ p, inReadme: readmeExpects(p) }).toEqual({ p, inReadme: true });
    },
    900_000,
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

  it('esm-nodenext: every export of every door is a named ES module export, of one instance', async () => {
    const { dir } = await prepared.get('esm-nodenext')!;
    writeFileSync(join(dir, 'exports-check.mjs'), EXPORTS_CHECK_MJS);
    const out = JSON.parse(
      (await runOk(process.execPath, ['exports-check.mjs'], { cwd: dir })).stdout,
    ) as Record<string, { count: number; missing: string[]; sameInstance: boolean }>;
    expect(Object.keys(out)).toEqual(Object.keys(packageDoors()));
    for (const door of Object.values(out)) {
      expect(door.count).toBeGreaterThan(0);
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
