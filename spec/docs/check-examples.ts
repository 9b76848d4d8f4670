import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';
import type { CodeBlock } from './code-blocks';

/** What one block's check found: its diagnostics as `file:line: TSnnnn message`. */
export interface ExampleResult {
  readonly block: CodeBlock;
  readonly problems: readonly string[];
}

/** Every block's result, and the diagnostics of the prelude files themselves. */
export interface ExamplesCheck {
  readonly examples: readonly ExampleResult[];
  readonly preludes: readonly string[];
}

export interface CheckOptions {
  /** The repository root: tsconfig.json, package.json and the pages are read from it. */
  readonly root: string;
  readonly blocks: readonly CodeBlock[];
  /** The folder holding the prelude files `<name>.ts` and any `.d.ts` they need. */
  readonly preludeDir: string;
}

/** An elided body, `{ … }`: read as one that returns whatever its contract asks. */
const ELIDED_BODY = /\{ … \}/g;
const ELIDED_AS = '{ return undefined as never; }';
/** The class `ts members` blocks are checked in (the guide's prelude declares it). */
const MEMBERS_BASE = 'ExampleController';
/** The prelude name that means "what the page's ts block above exports". */
const ABOVE = 'above';

/**
 * `fw-http` and every subpath door in package.json's `exports` resolved to its source under lib/,
 * as jest's moduleNameMapper does: the examples are checked against the package as it is now.
 */
function doorPaths(root: string): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types?: string } | string>;
  };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    const types = typeof target === 'string' ? undefined : target.types;
    if (types === undefined) continue;
    paths[pkg.name + key.slice(1)] = [types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')];
  }
  return paths;
}

/**
 * tsconfig.json's options (strict, decorators and their metadata) with the doors mapped to lib/.
 * A block is an ES module, as in a reader's ESM project: top-level await is allowed.
 */
function exampleOptions(root: string): ts.CompilerOptions {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d: ts.Diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, host);
  if (parsed === undefined) throw new Error('tsconfig.json not read');
  return {
    ...parsed.options,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: true,
    declaration: false,
    sourceMap: false,
    // An example declares a class or a parameter to show it, not always to use it.
    noUnusedLocals: false,
    noUnusedParameters: false,
    baseUrl: root,
    paths: doorPaths(root),
  };
}

/** Names a module declares at its top level (imports included), which a prelude must not shadow. */
function topLevelNames(code: string): Set<string> {
  const file = ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const names = new Set<string>();
  const add = (n: ts.Node | undefined): void => {
    if (n !== undefined && ts.isIdentifier(n)) names.add(n.text);
  };
  for (const s of file.statements) {
    if (ts.isImportDeclaration(s) && s.importClause !== undefined) {
      add(s.importClause.name);
      const b = s.importClause.namedBindings;
      if (b !== undefined && ts.isNamespaceImport(b)) add(b.name);
      if (b !== undefined && ts.isNamedImports(b)) b.elements.forEach((e) => add(e.name));
    } else if (ts.isVariableStatement(s)) {
      s.declarationList.declarations.forEach((d) => add(d.name));
    } else if ('name' in s) {
      add((s as ts.DeclarationStatement).name);
    }
  }
  return names;
}

/** The module text the compiler sees, each code line on its own line in the page. */
function moduleText(block: CodeBlock, importLine: string): string {
  const code = block.code.replace(ELIDED_BODY, ELIDED_AS);
  // The prelude's import and the members' class open on line 1, and `export {}` takes a line after
  // the block: a diagnostic's line in the module is its line in the block.
  if (block.members)
    return `${importLine}class Members extends ${MEMBERS_BASE} { ${code}\n}\nexport {};\n`;
  return `${importLine}${code}\nexport {};\n`;
}

interface Virtual {
  readonly block: CodeBlock;
  text: string;
}

/** A compiler host that also serves the blocks, as files held in memory. */
function hostWith(options: ts.CompilerOptions, virtual: Map<string, Virtual>): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  // The blocks' folder exists only here: resolution asks for it before it asks for a file in it.
  const dirs = new Set([...virtual.keys()].map((f) => dirname(f)));
  const { directoryExists } = host;
  host.directoryExists = (d) => dirs.has(d) || (directoryExists?.call(host, d) ?? true);
  host.readFile = (f) => virtual.get(f)?.text ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const v = virtual.get(f);
    if (v === undefined) return getSourceFile.call(host, f, lang, ...rest);
    return ts.createSourceFile(f, v.text, lang, true);
  };
  return host;
}

/** What each prelude file exports (its own declarations and what it re-exports). */
function preludeExports(program: ts.Program, files: readonly string[]): Map<string, Set<string>> {
  const checker = program.getTypeChecker();
  const exports = new Map<string, Set<string>>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    const names = symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name);
    exports.set(file, new Set(names));
  }
  return exports;
}

/** Names a block exports, read from its syntax (a block's exports are declarations it writes). */
function blockExports(code: string): Set<string> {
  const file = ts.createSourceFile('x.ts', code, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const names = new Set<string>();
  for (const s of file.statements) {
    const exported =
      ts.canHaveModifiers(s) &&
      ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (exported && ts.isVariableStatement(s)) {
      s.declarationList.declarations.forEach(
        (d) => ts.isIdentifier(d.name) && names.add(d.name.text),
      );
    } else if (exported && 'name' in s && (s as ts.DeclarationStatement).name !== undefined) {
      names.add(((s as ts.DeclarationStatement).name as ts.Identifier).text);
    }
  }
  return names;
}

/** Where a block's assumed names come from: each prelude's file, or the page's block above. */
interface Source {
  readonly file: string;
  readonly names: ReadonlySet<string>;
}

/** `import { … } from '<source>'; ` for the names the block uses and does not declare itself. */
function importLineFor(block: CodeBlock, path: string, sources: readonly Source[]): string {
  const own = topLevelNames(block.code);
  const used = new Set(block.code.match(/[A-Za-z_$][\w$]*/g) ?? []);
  if (block.members) used.add(MEMBERS_BASE);
  const taken = new Set<string>();
  return sources
    .map(({ file, names }) => {
      const wanted = [...names].filter((n) => used.has(n) && !own.has(n) && !taken.has(n));
      wanted.forEach((n) => taken.add(n));
      let spec = relative(dirname(path), file.replace(/\.ts$/, '')).split(sep).join('/');
      if (!spec.startsWith('.')) spec = `./${spec}`;
      return wanted.length === 0 ? '' : `import { ${wanted.join(', ')} } from '${spec}'; `;
    })
    .join('');
}

function formatDiagnostic(d: ts.Diagnostic, where: (line: number) => string): string {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
  if (d.file === undefined || d.start === undefined) return `TS${d.code} ${text}`;
  const { line } = d.file.getLineAndCharacterOfPosition(d.start);
  return `${where(line)}: TS${d.code} ${text}`;
}

/**
 * One compiler program for every block: each block is a module of its own (a file under `.examples/`
 * that exists only in memory), checked with the repository's compiler options. A first, smaller
 * program over the preludes finds what each exports; the second reuses its files.
 *
 * @example checkExamples({ root, blocks, preludeDir: join(root, 'docs/guide/preludes') })
 */
export function checkExamples(options: CheckOptions): ExamplesCheck {
  const { root, blocks, preludeDir } = options;
  const compilerOptions = exampleOptions(root);
  const preludes = readdirSync(preludeDir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(preludeDir, f));
  const virtual = new Map<string, Virtual>();
  const first = ts.createProgram(preludes, compilerOptions, hostWith(compilerOptions, virtual));
  const exported = preludeExports(first, preludes);
  // One folder below the root, as a reader's `client/` or `src/` is: `../sample/…` reaches the sample.
  const pathOf = (b: CodeBlock): string =>
    join(root, '.examples', `${b.file.replace(/\W+/g, '-')}-${b.line}.ts`);
  blocks.forEach((block, i) => {
    const sources = block.preludes.map((name): Source => {
      if (name !== ABOVE) {
        const file = join(preludeDir, `${name}.ts`);
        return { file, names: exported.get(file) ?? new Set() };
      }
      const above = blocks
        .slice(0, i)
        .reverse()
        .find((b) => b.file === block.file);
      if (above === undefined)
        throw new Error(`${block.file}:${block.line}: no ts block above to take names from`);
      return { file: pathOf(above), names: blockExports(above.code) };
    });
    const path = pathOf(block);
    virtual.set(path, { block, text: moduleText(block, importLineFor(block, path, sources)) });
  });
  const host = hostWith(compilerOptions, virtual);
  const program = ts.createProgram([...preludes, ...virtual.keys()], compilerOptions, host, first);
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (global.length > 0) throw new Error(global.map((d) => formatDiagnostic(d, String)).join('\n'));
  const examples = [...virtual].map(([path, { block }]) => {
    const source = program.getSourceFile(path)!;
    const syntax = program.getSyntacticDiagnostics(source);
    const semantic =
      block.fragment || syntax.length > 0 ? [] : program.getSemanticDiagnostics(source);
    const where = (line: number): string => `${block.file}:${block.line + line}`;
    return { block, problems: [...syntax, ...semantic].map((d) => formatDiagnostic(d, where)) };
  });
  const preludeProblems = preludes
    .flatMap((f) => ts.getPreEmitDiagnostics(program, program.getSourceFile(f)))
    .map((d) => formatDiagnostic(d, (line) => `${relative(root, d.file!.fileName)}:${line + 1}`));
  return { examples, preludes: preludeProblems };
}
