import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// fw's own features are built on what a program can use: every file under lib/http/features/ is
// type-checked against the declarations the package ships (emitted with `stripInternal`, as the
// build does), so a feature that uses a member tagged `@internal` — of `Ctx`, `App`, a store, or
// anything else below the features — does not compile there. The engine's side of a request
// (request/exchange.ts, reached through request/exchange-of.ts, exported by no door) is imported
// only by the features that are part of the engine, each listed below with why: the list only
// shrinks, and a feature that stops needing the engine must leave it.

const ROOT = join(__dirname, '..', '..');
const LIB = join(ROOT, 'lib');
const FEATURES = join(LIB, 'http', 'features') + '/';

/** The features that reach the engine, and why a program's capability could not do what they do. */
const ENGINE: Readonly<Record<string, string>> = {
  'idempotency/idempotent-route.ts':
    'sets c.idempotency and records steps under the run lease; reads the body as its fingerprint sees it (an upload as its digest)',
  'idempotency/idempotent-request.ts':
    "captures the handler's answer to keep it before it is sent, and tells the handler's own failures from its arguments'",
  'idempotency/claim-renewer.ts':
    "puts the claim's lease on the request's signal, aborts a run whose claim was lost",
  'idempotency/failure-answer.ts':
    "keeps a failure in the app's failure shape and sends a kept answer",
  'idempotency/kept-record.ts': 'keeps the headers set before the handler apart from its own',
  'idempotency/atomic-run.ts':
    'the idempotent capture, run inside a transaction that commits with the kept answer',
  'idempotency/atomic-tx.ts':
    'cancels the running statement when the client leaves or the claim is lost',
  'files/file-answer.ts':
    'writes a file answer: the head, then the file streamed to the socket with backpressure',
  'files/send-file.ts': "c.sendFile's answer is the route's answer while it is written",
  'static/static-tree.ts': 'answers requests no route took by writing the file answer itself',
  'websocket.ts':
    "hands the request's socket to the WebSocket loop (a 101 written outside the answer path)",
  'telemetry.ts': "the app's spans and metrics: set on the request before it is routed",
  'outcome-notes.ts':
    "fw's own outcome counters (idempotency, rate limits, deprecation) on the request's span",
};

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

const libFiles = (): string[] => ts.sys.readDirectory(LIB, ['.ts'], ['**/*.d.ts']);
const featureFiles = (): string[] => libFiles().filter((f) => f.startsWith(FEATURES));

/** The declarations of all of lib/, as the build emits them (`@internal` stripped), by file name. */
function strippedDeclarations(options: ts.CompilerOptions): Map<string, string> {
  const out = new Map<string, string>();
  const program = ts.createProgram(libFiles(), {
    ...options,
    rootDir: LIB,
    outDir: LIB,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    stripInternal: true,
  });
  const result = program.emit(undefined, (name, text) => out.set(name, text));
  if (result.diagnostics.length) throw new Error(format(result.diagnostics));
  return out;
}

/**
 * The features' own sources type-checked where every other file of lib/ is only its stripped
 * declaration: what the features use of the rest is what a program could use.
 */
function checkFeatures(
  declarations: Map<string, string>,
  options: ts.CompilerOptions,
): readonly ts.Diagnostic[] {
  const checking: ts.CompilerOptions = { ...options, noEmit: true, incremental: false };
  const host = ts.createCompilerHost(checking);
  const source = (f: string) =>
    f.startsWith(LIB + '/') && !f.startsWith(FEATURES) && f.endsWith('.ts') && !f.endsWith('.d.ts');
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => declarations.has(f) || (!source(f) && fileExists.call(host, f));
  host.readFile = (f) => declarations.get(f) ?? (source(f) ? undefined : readFile.call(host, f));
  host.getSourceFile = (f, language, ...rest) => {
    const text = declarations.get(f);
    return text !== undefined
      ? ts.createSourceFile(f, text, language)
      : getSourceFile.call(host, f, language, ...rest);
  };
  const features = featureFiles();
  const program = ts.createProgram(features, checking, host);
  return features.flatMap((f) => [
    ...program.getSyntacticDiagnostics(program.getSourceFile(f)),
    ...program.getSemanticDiagnostics(program.getSourceFile(f)),
  ]);
}

/**
 * What each diagnostic says is missing, by feature file: `Type.member` for a member, the name for
 * an import. A diagnostic of any other kind is kept whole, so it shows.
 */
function strippedUses(diagnostics: readonly ts.Diagnostic[]): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const d of diagnostics) {
    const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    const member = /^Property '(\w+)' does not exist on type '(\w+)'/.exec(text);
    const named = /has no exported member(?: named)? '(\w+)'/.exec(text);
    const what = member ? `${member[2]}.${member[1]}` : named ? named[1]! : format([d]);
    const file = d.file === undefined ? '(no file)' : relative(FEATURES, d.file.fileName);
    (out[file] ??= new Set()).add(what);
  }
  return Object.fromEntries(Object.entries(out).map(([f, s]) => [f, [...s].sort()]));
}

function format(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  });
}

/** The members of class `name` in `file` whose JSDoc carries `@internal`. */
function internalMembers(file: string, name: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found = source.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name,
  );
  if (found === undefined) throw new Error(`no class ${name} in ${file}`);
  return found.members
    .filter((m) => ts.getJSDocTags(m).some((t) => t.tagName.text === 'internal'))
    .map((m) => (m.name === undefined ? 'constructor' : m.name.getText(source)));
}

/** The files under lib/http/features/ that import the engine's modules (request/exchange*). */
function engineImporters(): string[] {
  return featureFiles()
    .filter((f) =>
      ts
        .preProcessFile(readFileSync(f, 'utf8'), true, true)
        .importedFiles.some((i) =>
          /\/request\/(exchange|idempotency)-(of|run)$|\/request\/exchange$/.test(i.fileName),
        ),
    )
    .map((f) => relative(FEATURES, f))
    .sort();
}

describe('built-ins use only what a program can use', () => {
  it('Ctx, IdempotencyInfo and App have no @internal member: what is not public is out of reach', () => {
    expect(internalMembers(join(LIB, 'http/request/ctx.ts'), 'Ctx')).toEqual([]);
    expect(
      internalMembers(join(LIB, 'http/request/idempotency-info.ts'), 'IdempotencyInfo'),
    ).toEqual([]);
    expect(internalMembers(join(LIB, 'http/app/app.ts'), 'App')).toEqual([]);
  });

  it('only the features listed as part of the engine import it, each for its reason', () => {
    expect(engineImporters()).toEqual(Object.keys(ENGINE).sort());
  });

  it('every feature compiles against the declarations the package ships (@internal stripped): no member of Ctx, App, a store or a space out of reach', () => {
    const options = parsedBuildConfig().options;
    expect(strippedUses(checkFeatures(strippedDeclarations(options), options))).toEqual({});
  }, 240_000);
});
