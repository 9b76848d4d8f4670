import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tsBlocksOf, type CodeBlock } from './code-blocks';
import { checkExamples, type ExamplesCheck } from './check-examples';

/**
 * Every ```ts block of the guide and the README type-checks against the package as it is now, with
 * the repository's compiler options. A block that needs names from an earlier block or from the
 * reader's app says so with `<!-- prelude: name -->` (docs/guide/preludes/name.ts); a block marked
 * ```ts members is the inside of a controller class; ```ts fragment is only checked for syntax.
 * CONTRIBUTING.md ("Examples in the docs") says more.
 */
const ROOT = join(__dirname, '..', '..');
const PRELUDES = join(ROOT, 'docs', 'guide', 'preludes');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** docs/guide.md while it exists, every page under docs/guide/, and the README. */
const PAGES = [
  join(ROOT, 'README.md'),
  ...[join(ROOT, 'docs', 'guide.md')].filter((p) => existsSync(p)),
  ...(existsSync(join(ROOT, 'docs', 'guide')) ? markdownUnder(join(ROOT, 'docs', 'guide')) : []),
].map((p) => relative(ROOT, p).split('\\').join('/'));

const BLOCKS: CodeBlock[] = PAGES.flatMap((p) =>
  tsBlocksOf(p, readFileSync(join(ROOT, p), 'utf8')),
);

/** A page of the checker's own cases, checked in the same program as the docs. */
const SELF = 'self-check.md';
const SELF_PAGE = [
  'A wrong example:',
  '',
  '<!-- prelude: shop -->',
  '```ts',
  "@Controller('/x')",
  'class X {',
  '  @Get() @Returns(Order) one() { return { id: 1 }; }',
  '}',
  '```',
  '',
  '<!-- prelude: shop -->',
  '```ts members',
  "@Get('/{id}') @Returns(Optional(Order)) one(@Param('id') id: string) { … }",
  '```',
  '',
  '```ts',
  'export const answer: number = 42;',
  '```',
  '',
  '<!-- prelude: above -->',
  '```ts',
  'const twice: string = answer * 2;',
  '```',
  '',
  '  ```ts fragment',
  '  undeclared.call(1);',
  '  ```',
].join('\n');
const SELF_BLOCKS = tsBlocksOf(SELF, SELF_PAGE);

describe('the examples in the docs', () => {
  let check: ExamplesCheck;
  beforeAll(() => {
    const blocks = [...BLOCKS, ...SELF_BLOCKS];
    check = checkExamples({ root: ROOT, blocks, preludeDir: PRELUDES });
  }, 60_000);
  const problemsOf = (file: string, line: number): readonly string[] =>
    check.examples.find((e) => e.block.file === file && e.block.line === line)!.problems;

  it('finds the ts blocks of the guide and the README', () => {
    expect(BLOCKS.length).toBeGreaterThan(50);
  });

  it('reads a block: its first code line, its kind, its preludes, its indentation', () => {
    expect(SELF_BLOCKS.map((b) => [b.line, b.members, b.fragment, b.preludes])).toEqual([
      [5, false, false, ['shop']],
      [13, true, false, ['shop']],
      [17, false, false, []],
      [22, false, false, ['above']],
      [26, false, true, []],
    ]);
    expect(SELF_BLOCKS[4]!.code).toBe('undeclared.call(1);');
  });

  it("names the page, the code line and the compiler's diagnostic of a wrong example", () => {
    const [first] = problemsOf(SELF, 5);
    expect(first).toMatch(/^self-check\.md:7: TS1241 /);
    expect(first).toContain(
      "is missing the following properties from type 'Order': sku, qty, status",
    );
  });

  it('checks a members block inside a controller class, an elided body as any answer', () => {
    expect(problemsOf(SELF, 13)).toEqual([]);
  });

  it('gives a block the names the ts block above it exports', () => {
    expect(problemsOf(SELF, 22)).toEqual([
      "self-check.md:22: TS2322 Type 'number' is not assignable to type 'string'.",
    ]);
  });

  it('checks a fragment for its syntax only: an unknown name is no finding there', () => {
    expect(problemsOf(SELF, 26)).toEqual([]);
  });

  it('names only preludes that exist', () => {
    const missing = BLOCKS.flatMap((b) =>
      b.preludes
        .filter((n) => n !== 'above' && !existsSync(join(PRELUDES, `${n}.ts`)))
        .map((n) => `${b.file}:${b.line}: ${n}`),
    );
    expect(missing).toEqual([]);
  });

  it('has preludes that type-check', () => {
    expect(check.preludes).toEqual([]);
  });

  it.each(PAGES.filter((p) => BLOCKS.some((b) => b.file === p)))(
    '%s: every ts block type-checks',
    (page) => {
      const problems = check.examples
        .filter((e) => e.block.file === page)
        .flatMap((e) => e.problems);
      expect(problems).toEqual([]);
    },
  );
});
