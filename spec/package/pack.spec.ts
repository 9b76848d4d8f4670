import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, npm, removeDir, runOk, stageCheckout } from './stage';

/**
 * What `npm pack` puts in the package: only the built library, its `.d.ts` and source
 * maps, README, LICENSE, CHANGELOG and package.json; built from scratch by `prepack`, whatever a
 * developer's build left in dist/. Checked on a staged copy of the checkout (as a clean clone has
 * it), never on this checkout's dist/.
 */

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  main: string;
  types: string;
  files?: string[];
  engines: { node: string };
  scripts: Record<string, string>;
  publishConfig?: Record<string, string>;
  exports: Record<string, { types: string; default: string } | string>;
  typesVersions?: Record<string, Record<string, string[]>>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** Every .ts under lib, relative to lib and without the extension. */
function librarySources(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts')) out.push(relative(join(ROOT, 'lib'), path).slice(0, -3));
    }
  };
  walk(join(ROOT, 'lib'));
  return out.sort();
}

/** The lowest version a `>=a.b.c` range allows, as numbers (other range forms are refused). */
function floorOf(range: string): number[] {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (m === null) throw new Error(`engines range "${range}" is not of the form >=a.b.c`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}
const compare = (a: number[], b: number[]): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

describe('npm pack', () => {
  let stage: string;
  let listed: string[];

  beforeAll(async () => {
    stage = stageCheckout('fw-http-pack-');
    // what a developer's `npm start`, `npm run bench` and an old build leave behind
    for (const leftover of [
      'dist/sample/main.js',
      'dist/bench/run.js',
      'dist/lib/http/renamed-long-ago.js',
      'dist/lib/http/renamed-long-ago.d.ts',
      'dist/build.tsbuildinfo',
    ]) {
      mkdirSync(join(stage, leftover, '..'), { recursive: true });
      writeFileSync(join(stage, leftover), '// left over\n');
    }
    const out = await npm(['pack', '--dry-run', '--json'], { cwd: stage });
    listed = (JSON.parse(out.stdout) as { files: { path: string }[] }[])[0].files
      .map((f) => f.path)
      .sort();
  }, 180_000);

  afterAll(() => removeDir(stage));

  it('--dry-run lists only the built library (.js, .d.ts, .js.map), README, LICENSE, CHANGELOG and package.json', () => {
    const expected = [
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'package.json',
      ...librarySources().flatMap((f) => [
        `dist/lib/${f}.d.ts`,
        `dist/lib/${f}.js`,
        `dist/lib/${f}.js.map`,
      ]),
    ].sort();
    expect(listed).toEqual(expected);
  });

  it('ships source maps that carry their sources (the .ts files are not in the package)', () => {
    const map = JSON.parse(readFileSync(join(stage, 'dist/lib/http/index.js.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: string[];
    };
    expect(map.sources).toEqual(['../../../lib/http/index.ts']);
    expect(map.sourcesContent).toEqual([readFileSync(join(ROOT, 'lib/http/index.ts'), 'utf8')]);
  });

  it('the build is incremental: a second `npm run build` (what `npm start` runs first) emits nothing', async () => {
    rmSync(join(stage, 'dist', 'build.tsbuildinfo'));
    const first = await runOk('npm', ['run', 'build', '--', '--listEmittedFiles'], { cwd: stage });
    expect(first.stdout).toContain('TSFILE: ');
    expect(first.stdout).toContain('dist/sample/main.js');
    const second = await runOk('npm', ['run', 'build', '--', '--listEmittedFiles'], { cwd: stage });
    expect(second.stdout).not.toContain('TSFILE: ');
  }, 180_000);
});

describe('package.json', () => {
  it('can be published: no "private", public publishConfig, a files list', () => {
    expect(pkg.name).toBe('fw-http');
    expect(pkg.private).toBeUndefined();
    expect(pkg.publishConfig).toEqual(expect.objectContaining({ access: 'public' }));
    expect(pkg.files).toEqual(expect.arrayContaining(['dist/lib/**/*.js']));
  });

  it('builds itself on a git or file: install (prepare) and before packing (prepack)', () => {
    expect(pkg.scripts.prepare).toBe('npm run build:package');
    expect(pkg.scripts.prepack).toMatch(/^npm run build:package && /);
  });

  it('the docs page assets are an optional peer dependency, not a hard one (no install script pulled in)', () => {
    expect(pkg.dependencies['swagger-ui-dist']).toBeUndefined();
    expect(pkg.peerDependencies?.['swagger-ui-dist']).toBeDefined();
    expect(pkg.peerDependenciesMeta?.['swagger-ui-dist']).toEqual({ optional: true });
    expect(pkg.devDependencies['swagger-ui-dist']).toBeDefined();
  });

  it('the subpath doors have types under moduleResolution node (typesVersions) and node16/bundler (exports)', () => {
    const doors = {
      '.': 'http',
      './atomic': 'http/features/atomic',
      './browser': 'http/features/browser',
      './cache': 'cache',
      './capabilities': 'http/features/capabilities',
      './fetch': 'fetch',
      './files': 'http/features/files',
      './jwt': 'http/features/jwt',
      './mcp': 'http/features/mcp',
      './openapi': 'http/features/openapi',
      './uploads': 'http/features/uploads',
      './ws': 'http/features/ws',
    };
    expect(Object.keys(pkg.exports).filter((k) => k !== './package.json')).toEqual(
      Object.keys(doors),
    );
    const typesVersions: Record<string, string[]> = {};
    for (const [door, dir] of Object.entries(doors)) {
      expect(pkg.exports[door]).toEqual({
        types: `./dist/lib/${dir}/index.d.ts`,
        default: `./dist/lib/${dir}/index.js`,
      });
      if (door !== '.') typesVersions[door.slice(2)] = [`dist/lib/${dir}/index.d.ts`];
    }
    expect(pkg.typesVersions).toEqual({ '*': typesVersions });
    expect(pkg.types).toBe('dist/lib/http/index.d.ts');
    expect(pkg.main).toBe('dist/lib/http/index.js');
  });

  it('engines.node is no lower than what any runtime dependency itself requires', () => {
    const ours = floorOf(pkg.engines.node);
    expect(compare(ours, floorOf(`>=${process.versions.node}`))).toBeLessThanOrEqual(0);
    for (const dep of Object.keys(pkg.dependencies)) {
      const theirs = (
        JSON.parse(readFileSync(join(ROOT, 'node_modules', dep, 'package.json'), 'utf8')) as {
          engines?: { node?: string };
        }
      ).engines?.node;
      if (theirs === undefined || !theirs.startsWith('>=')) continue;
      expect({ dep, ok: compare(ours, floorOf(theirs)) >= 0 }).toEqual({ dep, ok: true });
    }
  });

  it('every package lib imports is a dependency (or peer) that brings its types along (the .d.ts name them)', () => {
    const lib = join(ROOT, 'lib');
    const imported = new Set<string>();
    // A package only ever imported as a type, into code the .d.ts leave it out of (busboy: its
    // @types are the build's, not the user's), must be declared but need not bring types along.
    const valueImported = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else
          for (const m of readFileSync(path, 'utf8').matchAll(
            /^(import type |import |export )[^'"]*from '([^'.][^']*)'/gm,
          ))
            if (!m[2].startsWith('node:')) {
              const name = m[2].startsWith('@')
                ? m[2].split('/').slice(0, 2).join('/')
                : m[2].split('/')[0];
              imported.add(name);
              if (m[1] !== 'import type ') valueImported.add(name);
            }
      }
    };
    walk(lib);
    for (const name of imported) {
      const own = JSON.parse(
        readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
      ) as {
        types?: string;
        typings?: string;
        exports?: unknown;
      };
      const typed =
        own.types !== undefined ||
        own.typings !== undefined ||
        JSON.stringify(own.exports ?? {}).includes('"types"');
      const where = name in pkg.dependencies || name in (pkg.peerDependencies ?? {});
      const types = typed || `@types/${name}` in pkg.dependencies || !valueImported.has(name);
      expect({ name, where, types }).toEqual({
        name,
        where: true,
        types: true,
      });
    }
  });
});
