import { join } from 'node:path';
import ts from 'typescript';
import { packageDoors } from '../package/doors';
import { PUBLIC_CTX } from '../package/public-ctx';

/**
 * The `.d.ts` that `npm run build` ships, checked without running the build: the declarations of
 * lib are emitted in memory with tsconfig.build.json's own options (`stripInternal` among them),
 * then the sample and a small consumer are type-checked against them as a user's program would be.
 */
const ROOT = join(__dirname, '..', '..');
/** Where the declarations would go; nothing is written there, the files live in memory. */
const OUT = join(ROOT, '.declarations-in-memory');
const DOORS = packageDoors();

const CONSUMER = join(ROOT, 'sample', '.consumer-in-memory.ts');
const CONSUMER_TEXT = `
import { App, headers, Versioned, type Ctx } from 'fw-http';
declare const c: Ctx;
declare const app: App;
// @ts-expect-error status is read-only
c.status = 200;
const sent: number = c.status;
app.static('/', 'public', { spaFallback: 'index.html' }).staticWith('/', 'public', {}).embedded('/', []).embeddedWith('/', [], {});
Versioned.unchanged(1, headers.of([{ name: 'x-a', value: 'b' }]));
Versioned.unchangedWith(1, headers.of([]));
c.setStaticHeader('x-a', 'b');
export { sent };
`;

function parsedBuildConfig(): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.build.json not read');
  return config;
}

/** The declarations the build emits for everything the doors reach, by file name. */
function emitDeclarations(options: ts.CompilerOptions): Map<string, string> {
  const files = new Map<string, string>();
  const program = ts.createProgram(
    Object.values(DOORS).map((d) => join(ROOT, `${d}.ts`)),
    {
      ...options,
      outDir: OUT,
      noEmit: false,
      declaration: true,
      emitDeclarationOnly: true,
      declarationMap: false,
      sourceMap: false,
    },
  );
  const result = program.emit(undefined, (name, text) => files.set(name, text));
  if (result.diagnostics.length) throw new Error(format(result.diagnostics));
  return files;
}

/** Type-checks the sample and the consumer against the declarations, `fw` resolved to them as for a user. */
function checkAgainst(
  declarations: Map<string, string>,
  options: ts.CompilerOptions,
): readonly ts.Diagnostic[] {
  const memory = new Map(declarations).set(CONSUMER, CONSUMER_TEXT);
  const paths = Object.fromEntries(
    Object.entries(DOORS).map(([name, door]) => [name, [join(OUT, `${door}.d.ts`)]]),
  );
  const checking: ts.CompilerOptions = { ...options, noEmit: true, skipLibCheck: false, paths };
  const host = ts.createCompilerHost(checking);
  const { fileExists, readFile, directoryExists, getSourceFile } = host;
  host.fileExists = (f) => memory.has(f) || fileExists.call(host, f);
  host.readFile = (f) => memory.get(f) ?? readFile.call(host, f);
  host.directoryExists = (d) =>
    d === OUT ||
    d.startsWith(OUT + '/') ||
    (directoryExists?.call(host, d) ?? ts.sys.directoryExists(d));
  host.getSourceFile = (f, language, ...rest) => {
    const text = memory.get(f);
    return text !== undefined
      ? ts.createSourceFile(f, text, language)
      : getSourceFile.call(host, f, language, ...rest);
  };
  const sample = ts.sys.readDirectory(join(ROOT, 'sample'), ['.ts'], ['**/*.d.ts']);
  const program = ts.createProgram([...sample, CONSUMER], checking, host);
  // Only our files: checking all of @types/node as well would triple the time and prove nothing about fw.
  const ours = program
    .getSourceFiles()
    .filter((f) => f.fileName.startsWith(OUT) || f.fileName.startsWith(join(ROOT, 'sample')));
  return [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...ours.flatMap((f) => [
      ...program.getSyntacticDiagnostics(f),
      ...program.getSemanticDiagnostics(f),
    ]),
  ];
}

function format(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  });
}

function classIn(file: ts.SourceFile, name: string): ts.ClassDeclaration {
  const found = file.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name,
  );
  if (found === undefined) throw new Error(`no class ${name} in ${file.fileName}`);
  return found;
}

/** The named members of a class (`#private` fields have no name here), with what kind each is. */
function members(c: ts.ClassDeclaration): Map<string, ts.SyntaxKind[]> {
  const out = new Map<string, ts.SyntaxKind[]>();
  for (const m of c.members) {
    if (m.name === undefined || ts.isPrivateIdentifier(m.name)) continue;
    const name = ts.isIdentifier(m.name) ? m.name.text : m.name.getText();
    out.set(name, [...(out.get(name) ?? []), m.kind]);
  }
  return out;
}

/** The members of a class in the source that carry `@internal` in the JSDoc right before them. */
function internalsOf(sourcePath: string, name: string): string[] {
  const file = ts.createSourceFile(
    sourcePath,
    ts.sys.readFile(sourcePath)!,
    ts.ScriptTarget.Latest,
    true,
  );
  return classIn(file, name)
    .members.filter((m) => ts.getJSDocTags(m).some((t) => t.tagName.text === 'internal'))
    .map((m) => (m.name === undefined ? 'constructor' : (m.name as ts.Identifier).text));
}

describe('the shipped declarations', () => {
  let build: ts.ParsedCommandLine;
  let declarations: Map<string, string>;
  const dts = (path: string) => {
    const text = declarations.get(join(OUT, path));
    if (text === undefined) throw new Error(`no ${path} emitted`);
    return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  };

  beforeAll(() => {
    build = parsedBuildConfig();
    declarations = emitDeclarations(build.options);
  }, 180_000);

  it('the build strips what is tagged @internal', () => {
    expect(build.options.stripInternal).toBe(true);
  });

  it('every value a door exports at runtime is in its shipped types: none is hidden', () => {
    for (const [name, source] of Object.entries(DOORS)) {
      const shown = new Set<string>();
      const visit = (node: ts.Node): void => {
        if (ts.isExportSpecifier(node)) shown.add(node.name.text);
        else if (
          (ts.isClassDeclaration(node) || ts.isFunctionDeclaration(node)) &&
          node.name !== undefined &&
          ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export
        )
          shown.add(node.name.text);
        else if (ts.isVariableStatement(node))
          for (const d of node.declarationList.declarations)
            if (ts.isIdentifier(d.name)) shown.add(d.name.text);
        ts.forEachChild(node, visit);
      };
      visit(dts(`${source}.d.ts`));
      const runtime = Object.keys(require(join(ROOT, source)) as object);
      expect({ door: name, hidden: runtime.filter((k) => !shown.has(k)) }).toEqual({
        door: name,
        hidden: [],
      });
    }
  });

  it("Ctx's .d.ts shows only its public members (none is @internal: the engine's state is elsewhere); status, idempotency and route only as getters (read-only)", () => {
    const shown = members(classIn(dts('lib/http/request/ctx.d.ts'), 'Ctx'));
    expect([...shown.keys()].sort()).toEqual([...PUBLIC_CTX].sort());
    for (const getter of ['status', 'idempotency', 'route'])
      expect(shown.get(getter)).toEqual([ts.SyntaxKind.GetAccessor]);
    expect(internalsOf(join(ROOT, 'lib/http/request/ctx.ts'), 'Ctx')).toEqual([]);
  });

  it("App's .d.ts has none of the capabilities' host hooks (built-ins, build hooks, fallbacks, the compressor)", () => {
    // The exported App (app/defaults.ts) is app/app.ts's with fw's own wired in: its members are both's.
    const shown = new Map([
      ...members(classIn(dts('lib/http/app/app.d.ts'), 'App')),
      ...members(classIn(dts('lib/http/app/defaults.d.ts'), 'App')),
    ]);
    // The hooks are the host's, a separate object a capability's `register` gets: App has none.
    expect(internalsOf(join(ROOT, 'lib/http/app/app.ts'), 'App')).toEqual([]);
    const hooks = ['addBuiltIn', 'atBuild', 'afterBuild', 'addFallback', 'compressAnswers'];
    expect(hooks.filter((m) => shown.has(m))).toEqual([]);
    expect([...shown.keys()]).toEqual(
      expect.arrayContaining([
        'use',
        'static',
        'staticWith',
        'embedded',
        'embeddedWith',
        'health',
        'compress',
        'sessions',
        'build',
        'listen',
      ]),
    );
  });

  it('the sample and a consumer compile against them (no public type names a stripped one)', () => {
    expect(format(checkAgainst(declarations, build.options))).toBe('');
  }, 180_000);
});
