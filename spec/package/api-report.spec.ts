import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

// The API report (api/report.md) is the declarations each door of package.json `exports` ships in
// its `.d.ts`, one member per line, so a changed signature is a one-line diff in review.
// `npm run api:report` rewrites it.

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'api-report.mjs');
const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: ROOT });
const failure = (e: { code: number; stdout: string; stderr: string }) => e;

// The fw run is a TypeScript program over every door: tens of seconds on a loaded machine.
jest.setTimeout(240_000);

/** A line past this is refused, unless it is one string literal type, which cannot be broken. */
const MAX_LINE = 200;
const STRING_MEMBER = /^\s*(?:readonly\s+)?[\w$]+\??:\s*(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*");$/;

describe('the API report of fw-http', () => {
  const committed = join(ROOT, 'api', 'report.md');
  let text: string;
  let checked: { code: number; stdout: string; stderr: string };
  let dir: string;

  beforeAll(async () => {
    text = readFileSync(committed, 'utf8');
    dir = mkdtempSync(join(tmpdir(), 'fw-api-'));
    const stale = join(dir, 'report.md');
    writeFileSync(stale, text.replace(/^export declare class App /m, 'export declare class Ap '));
    // One run checks both: the committed report, and a copy with one line changed.
    checked = await run('--check', committed, stale).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      failure,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('api/report.md is the declarations of the code as it is', () => {
    expect(checked.stdout).toContain(`${committed} is the API`);
  });

  it('a report that differs from the declarations fails, naming the first differing line', () => {
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(
      /report\.md is not the API from line \d+:\n- export declare class Ap .*\n\+ export declare class App /,
    );
  });

  it('has a section for each door of package.json exports', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const doors = Object.entries(pkg.exports)
      .filter(([, target]) => typeof target === 'object')
      .map(([key]) => (key === '.' ? 'fw-http' : `fw-http${key.slice(1)}`));
    expect(doors).toEqual(
      expect.arrayContaining(['fw-http', 'fw-http/cache', 'fw-http/fetch', 'fw-http/ws']),
    );
    for (const door of doors) expect(text).toContain(`\n## ${door}\n\n\`\`\`ts\n`);
  });

  it(`no line is longer than ${MAX_LINE} characters but one string literal type`, () => {
    const long = text.split('\n').filter((l) => l.length > MAX_LINE && !STRING_MEMBER.test(l));
    expect(long).toEqual([]);
  });

  it('lists the options an exported type takes from an interface no door exports', () => {
    // RedisStoreOptions is `CommonOptions & (…)`: `maxBatch` was once added unseen.
    const named = text.slice(text.indexOf('\n## Named by the doors, exported by none\n'));
    expect(named).toMatch(
      /^interface CommonOptions \{\n(?: {2}.*\n)*? {2}readonly maxBatch\?: number;$/m,
    );
    expect(named).toMatch(
      /^interface PgCommonOptions \{\n(?: {2}.*\n)*? {2}readonly poolSize\?: number;$/m,
    );
  });
});

// A package of the fixture's own, so each rule of the format is checked on known declarations.
const FIXTURE: Record<string, string> = {
  'package.json': JSON.stringify({
    name: 'pkg',
    exports: {
      '.': { types: './dist/lib/main/index.d.ts', default: './dist/lib/main/index.js' },
      './extra': { types: './dist/lib/extra/index.d.ts', default: './dist/lib/extra/index.js' },
      './package.json': './package.json',
    },
  }),
  'tsconfig.lib.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'commonjs',
      strict: true,
      declaration: true,
      stripInternal: true,
      rootDir: '.',
      outDir: 'dist',
      types: [],
    },
    include: ['lib'],
  }),
  'lib/main/index.ts': `
export { Widget, type WidgetOptions, type Mode } from './widget';
export { make as create, make } from './make';
export { shout as yell } from './make';
export const zeta = 1 as const;
export { Fancy } from './fancy';
`,
  'lib/main/fancy.ts': `
import { Base as Core } from './widget';
export class Fancy extends Core {}
`,
  'lib/main/widget.ts': `
interface Common {
  readonly retries?: number;
}
export type WidgetOptions = Common & { readonly name: string };
export type Mode = 'first-mode-of-many' | 'second-mode-of-many' | 'third-mode-of-many' | 'fourth-mode-of-many' | 'fifth';
export class Base {
  protected kept(): void {}
  base = 1;
}
export class Widget extends Base {
  #secret = 1;
  private hidden = 2;
  /** @internal */ internal = 3;
  /** Doc comments are not API. */
  zebra(a: string): string {
    return a + this.#secret + this.hidden;
  }
  static of(): Widget {
    return new Widget({ name: 'w' });
  }
  alpha = 'a';
  constructor(readonly options: WidgetOptions) {
    super();
  }
}
`,
  'lib/main/make.ts': `
import type { Mode } from './widget';
export function make(mode: Mode): string;
export function make(mode: Mode, times: number): string;
export function make(mode: Mode, times = 1): string {
  return mode.repeat(times);
}
export function shout(text: string): string {
  return text.toUpperCase();
}
`,
  'lib/extra/index.ts': `
export interface Extra {
  zed: number;
  (call: string): void;
  able?: string;
}
`,
};

describe('the API report of a package', () => {
  let dir: string;
  let report: string;
  const block = (heading: string) => {
    const at = report.indexOf(`\n## ${heading}\n\n\`\`\`ts\n`);
    return report.slice(at, report.indexOf('\n```\n', at + 1)).split('```ts\n')[1];
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fw-api-fixture-'));
    for (const [path, content] of Object.entries(FIXTURE)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    await run('--root', dir);
    report = readFileSync(join(dir, 'api', 'report.md'), 'utf8');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is each door of package.json exports in turn: the root door first, then the subpaths', () => {
    expect(report.match(/^## .*$/gm)).toEqual([
      '## pkg',
      '## pkg/extra',
      '## Named by the doors, exported by none',
    ]);
  });

  it('declares each exported name as the .d.ts does, alphabetical by exported name', () => {
    expect(block('pkg')).toBe(
      [
        'export { make as create };',
        '',
        'export declare class Fancy extends Core {}',
        '',
        'export declare function make(mode: Mode): string;',
        'export declare function make(mode: Mode, times: number): string;',
        '',
        'export type Mode =',
        "  | 'first-mode-of-many'",
        "  | 'second-mode-of-many'",
        "  | 'third-mode-of-many'",
        "  | 'fourth-mode-of-many'",
        "  | 'fifth';",
        '',
        'export declare class Widget extends Base {',
        '  constructor(options: WidgetOptions);',
        '  static of(): Widget;',
        '  alpha: string;',
        '  readonly options: WidgetOptions;',
        '  zebra(a: string): string;',
        '}',
        '',
        'export type WidgetOptions = Common & {',
        '  readonly name: string;',
        '};',
        '',
        'declare function shout(text: string): string;',
        'export { shout as yell };',
        '',
        'export declare const zeta: 1;',
      ].join('\n'),
    );
  });

  it("an interface's unnamed signatures come first, then its members by name, one per line", () => {
    expect(block('pkg/extra')).toBe(
      [
        'export interface Extra {',
        '  (call: string): void;',
        '  able?: string;',
        '  zed: number;',
        '}',
      ].join('\n'),
    );
  });

  it('ends with the declarations no door exports that the doors name, under the file of each', () => {
    expect(block('Named by the doors, exported by none')).toBe(
      [
        '// lib/main/widget.ts, named Core where imported',
        'declare class Base {',
        '  base: number;',
        '  protected kept(): void;',
        '}',
        '',
        '// lib/main/widget.ts',
        'interface Common {',
        '  readonly retries?: number;',
        '}',
      ].join('\n'),
    );
  });
});
