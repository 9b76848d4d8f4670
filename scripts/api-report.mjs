// The public surface of fw-http as declarations: for each door in package.json `exports` (fw-http,
// fw-http/cache, fw-http/fetch, and any subpath door added there), the exported declarations as the
// shipped `.d.ts` declares them, alphabetical by exported name, one member per line, so a changed
// signature is a one-line diff in review. `npm run api:report` writes api/report.md;
// spec/package/api-report.spec.ts fails while the committed file differs.
//
// Why our own printer and not @microsoft/api-extractor: api-extractor reads a built dist/ (a
// package build before every check), needs one config and one run per door, analyses with the
// TypeScript it bundles rather than ours, writes a `// @public` line above every declaration, and
// copies each `.d.ts` line as emitted, so a long union or conditional type stays one line of up to
// 360 characters. Here the compiler that ships the `.d.ts` emits it in memory, with the package
// build's options (`stripInternal` included), and prettier, already the house formatter, breaks it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve as absolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as prettier from 'prettier';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The report of the package at `root` (fw's own by default): a Markdown file with one `ts` block per
 * door and one for the types they name that no door exports.
 */
export async function apiReport(at = ROOT) {
  const root = absolute(at);
  // Where the emitted declarations live: in memory only, never written (a folder of its own, so
  // no stale build on disk under dist/ can stand in for a file the emit did not make).
  const virtual = join(root, '.api-report');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const doors = publicDoors(pkg);
  const { files, types } = emitDeclarations(root, virtual, doors);
  const program = declarationProgram(virtual, files, types);
  const checker = program.getTypeChecker();
  const modules = doors.map((d) => {
    const file = program.getSourceFile(join(virtual, d.source.replace(/\.ts$/, '.d.ts')));
    if (!file) throw new Error(`${d.name}: no declarations emitted for ${d.source}`);
    return checker.getSymbolAtLocation(file);
  });
  // Each exported declaration with the names the doors export it as.
  const exported = new Map();
  for (const s of modules.flatMap((m) => checker.getExportsOfModule(m))) {
    const symbol = resolve(checker, s);
    exported.set(symbol, new Set([...(exported.get(symbol) ?? []), s.name]));
  }
  const format = await formatter();
  const ctx = { checker, exported, virtual, named: new Map(), aliases: new Map(), format };
  const out = [...preamble(pkg.name)];
  for (const [i, door] of doors.entries()) {
    out.push(`## ${door.name}`, '', '```ts');
    const exports = checker.getExportsOfModule(modules[i]).sort((a, b) => byName(a.name, b.name));
    const blocks = [];
    for (const symbol of exports) blocks.push(await exportedBlock(ctx, symbol));
    out.push(blocks.join('\n\n'), '```', '');
  }
  out.push(...(await namedBlocks(ctx)));
  return out.join('\n');
}

function preamble(name) {
  return [
    `# The public API of ${name}`,
    '',
    'Made by `npm run api:report`; checked by `spec/package/api-report.spec.ts`. Each door is the',
    "declarations its shipped `.d.ts` makes (comments and `@internal` members left out, a class's",
    'private members too), alphabetical by exported name, members by name, one member per line.',
    '',
  ];
}

/** The doors in package.json `exports` with types: the root first, then subpaths by name. */
function publicDoors(pkg) {
  const doors = [];
  for (const [key, target] of Object.entries(pkg.exports ?? {})) {
    const types = typeof target === 'object' ? target.types : undefined;
    if (typeof types !== 'string') continue;
    const source = types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
    doors.push({ name: key === '.' ? pkg.name : `${pkg.name}${key.slice(1)}`, source });
  }
  return doors.sort((a, b) =>
    a.name === pkg.name ? -1 : b.name === pkg.name ? 1 : byName(a.name, b.name),
  );
}

/**
 * The `.d.ts` text of every file the doors reach, as `npm run build:package` emits it (the options
 * of tsconfig.lib.json, `stripInternal` among them), by path under `virtual`; and the `types` the
 * package is compiled with.
 */
function emitDeclarations(root, virtual, doors) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: fail };
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.lib.json'), {}, host);
  const options = {
    ...config.options,
    outDir: virtual,
    rootDir: root,
    declaration: true,
    emitDeclarationOnly: true,
    noEmit: false,
    removeComments: true,
    declarationMap: false,
    sourceMap: false,
    inlineSources: false,
    incremental: false,
    tsBuildInfoFile: undefined,
  };
  const program = ts.createProgram(
    doors.map((d) => join(root, d.source)),
    options,
  );
  const files = new Map();
  // Type errors are `npm run typecheck`'s to report; a declaration that cannot be written is ours.
  const result = program.emit(undefined, (name, text) => files.set(name, text), undefined, true);
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length) fail(errors[0]);
  return { files, types: config.options.types };
}

function fail(diagnostic) {
  throw new Error(
    ts.formatDiagnostic(diagnostic, {
      ...ts.sys,
      getCanonicalFileName: (f) => f,
      getNewLine: () => '\n',
      getCurrentDirectory: () => process.cwd(),
    }),
  );
}

/** A program over the emitted declarations, as a user's compiler sees the package. */
function declarationProgram(virtual, files, types) {
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    skipLibCheck: true,
    ...(types ? { types } : {}),
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const inVirtual = (path) => path.startsWith(virtual + '/');
  host.fileExists = (path) => (inVirtual(path) ? files.has(path) : ts.sys.fileExists(path));
  host.readFile = (path) => (inVirtual(path) ? files.get(path) : ts.sys.readFile(path));
  host.directoryExists = (path) =>
    path === virtual || inVirtual(path)
      ? [...files.keys()].some((f) => f.startsWith(path + '/'))
      : ts.sys.directoryExists(path);
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (path, language) =>
    inVirtual(path)
      ? files.has(path) && ts.createSourceFile(path, files.get(path), language, true)
      : getSourceFile(path, language);
  return ts.createProgram([...files.keys()], options, host);
}

/** Whether `node` is declared by the package (not by Node's types or a dependency's). */
const isOurs = (ctx, node) => node.getSourceFile().fileName.startsWith(ctx.virtual + '/');
/** The package's source file that declares `node`. */
const sourceOf = (ctx, node) =>
  relative(ctx.virtual, node.getSourceFile().fileName).replace(/\.d\.ts$/, '.ts');
/** Alphabetical as a reader looks a name up (`app` beside `App`), ties broken by code point. */
const byName = (a, b) => a.localeCompare(b, 'en') || (a < b ? -1 : a > b ? 1 : 0);

function resolve(checker, symbol) {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

async function formatter() {
  const config = (await prettier.resolveConfig(join(ROOT, 'lib', 'index.ts'))) ?? {};
  return (text) => prettier.format(text, { ...config, parser: 'typescript' });
}

/** One exported name: each of its declarations (overloads, merges) as the `.d.ts` has them. */
async function exportedBlock(ctx, exportSymbol) {
  const symbol = resolve(ctx.checker, exportSymbol);
  const decls = (symbol.declarations ?? []).filter((d) => isOurs(ctx, d));
  if (!decls.length) {
    const from = symbol.declarations?.[0]?.getSourceFile().fileName ?? 'an unknown module';
    return `export { ${exportSymbol.name} }; // from ${packageOf(from)}`;
  }
  const declared = symbol.name;
  if (declared === exportSymbol.name)
    return (
      await ctx.format(decls.map((d) => declarationText(ctx, d, 'export ')).join('\n'))
    ).trimEnd();
  // Exported under another name: declared once, where a door exports it under its own.
  const rename = `export { ${declared} as ${exportSymbol.name} };`;
  if (ctx.exported.get(symbol).has(declared)) return rename;
  const texts = decls.map((d) => declarationText(ctx, d, ''));
  return (await ctx.format([...texts, rename].join('\n'))).trimEnd();
}

const packageOf = (file) => file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? file;

/**
 * A declaration's text without its modifiers, opened by `prefix` (`export ` or nothing), with the
 * types it names noted in `ctx.named` when no door exports them.
 */
function declarationText(ctx, decl, prefix) {
  const text =
    ts.isClassDeclaration(decl) || ts.isInterfaceDeclaration(decl)
      ? typeText(ctx, decl)
      : ts.isVariableDeclaration(decl)
        ? variableText(ctx, decl)
        : wholeText(ctx, decl);
  // A type the `.d.ts` names through a relative `import("./file")` is written by name alone: the
  // file's place is not API, and the name is listed (exported, or in the last section).
  return prefix + text.replace(/import\("\.\.?\/[^"]*"\)\./g, '');
}

/** `declare ` where a `.d.ts` needs it: before all but an interface or a type alias. */
const declareOf = (decl) =>
  ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl) ? '' : 'declare ';

/** A class or an interface: its head, then its public members one per line, by name. */
function typeText(ctx, decl) {
  const members = publicMembers(decl);
  const named = [...(decl.heritageClauses ?? []), ...(decl.typeParameters ?? []), ...members];
  for (const node of named) noteNamed(ctx, node);
  const head = withoutModifiers(
    decl,
    decl.getSourceFile().text.slice(decl.getStart(), decl.members.pos),
  );
  return `${declareOf(decl)}${head}\n${members.map((m) => m.getText()).join('\n')}\n}`;
}

/** A function, type alias, enum or namespace: as the `.d.ts` declares it. */
function wholeText(ctx, decl) {
  noteNamed(ctx, decl);
  return `${declareOf(decl)}${withoutModifiers(decl)}`;
}

/** `declare const x: T;` (a variable's declaration holds its name and type, not its keyword). */
function variableText(ctx, decl) {
  const flags = decl.parent.flags;
  const keyword = flags & ts.NodeFlags.Const ? 'const' : flags & ts.NodeFlags.Let ? 'let' : 'var';
  noteNamed(ctx, decl);
  return `declare ${keyword} ${decl.getText()};`;
}

/** `text` (default: the declaration's own) from its first token after `export`/`declare`/`default`. */
function withoutModifiers(decl, text) {
  const sourceText = decl.getSourceFile().text;
  const start = decl.getStart();
  const whole = text ?? sourceText.slice(start, decl.end);
  const end = decl.modifiers?.length ? ts.skipTrivia(sourceText, decl.modifiers.end) : start;
  return whole.slice(end - start);
}

/**
 * The members a user can reach: private ones (`#private`, `private x`) are dropped, except a private
 * constructor, which says `new` is refused. Signatures without a name first as declared, then by
 * name; statics before instance members; overloads keep their order (the sort is stable).
 */
function publicMembers(decl) {
  const isPrivate = (m) =>
    (m.name && ts.isPrivateIdentifier(m.name)) ||
    (!ts.isConstructorDeclaration(m) && ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private);
  const rank = (m) =>
    !m.name || ts.isConstructorDeclaration(m)
      ? 0
      : ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static
        ? 1
        : 2;
  const key = (m) => (m.name ? m.name.getText().replace(/^['"[]|['"\]]$/g, '') : '');
  return [...decl.members]
    .filter((m) => !isPrivate(m))
    .sort((a, b) => rank(a) - rank(b) || (rank(a) ? byName(key(a), key(b)) : 0));
}

/** Notes in `ctx.named` each declaration of fw's own that `node` names and no door exports. */
function noteNamed(ctx, node) {
  const visit = (n) => {
    const entity = ts.isTypeReferenceNode(n)
      ? n.typeName
      : ts.isExpressionWithTypeArguments(n)
        ? n.expression
        : ts.isTypeQueryNode(n)
          ? n.exprName
          : ts.isImportTypeNode(n)
            ? n.qualifier
            : ts.isComputedPropertyName(n)
              ? n.expression
              : undefined;
    if (entity) noteEntity(ctx, leftmost(entity));
    ts.forEachChild(n, visit);
  };
  visit(node);
}

function leftmost(entity) {
  let e = entity;
  while (ts.isQualifiedName(e) || ts.isPropertyAccessExpression(e))
    e = ts.isQualifiedName(e) ? e.left : e.expression;
  return e;
}

function noteEntity(ctx, identifier) {
  if (!ts.isIdentifier(identifier)) return;
  const found = ctx.checker.getSymbolAtLocation(identifier);
  if (!found) return;
  const symbol = resolve(ctx.checker, found);
  if (ctx.exported.has(symbol)) return;
  // An import renamed in the file that names it (`App as AppCore`): the last section says so.
  if (identifier.text !== symbol.name)
    ctx.aliases.set(symbol, new Set([...(ctx.aliases.get(symbol) ?? []), identifier.text]));
  if (ctx.named.has(symbol)) return;
  const decls = (symbol.declarations ?? []).filter(
    (d) => isOurs(ctx, d) && topLevel(d) && !ts.isTypeParameterDeclaration(d),
  );
  if (!decls.length) return;
  ctx.named.set(symbol, decls);
  // Reached through a type no door exports: its own names are public the same way.
  for (const d of decls) declarationText(ctx, d, '');
}

function topLevel(decl) {
  const statement = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl;
  return statement.parent !== undefined && ts.isSourceFile(statement.parent);
}

/**
 * The declarations of fw's own that the doors' declarations name and no door exports (a base class,
 * an options interface an exported alias extends): their members are public through the names that
 * use them, so they change in the report too. Each under the file that declares it.
 */
async function namedBlocks(ctx) {
  if (!ctx.named.size) return [];
  const entries = [...ctx.named.entries()]
    .map(([symbol, decls]) => ({ symbol, file: sourceOf(ctx, decls[0]), decls }))
    .sort((a, b) => byName(a.symbol.name, b.symbol.name) || byName(a.file, b.file));
  const blocks = [];
  for (const { symbol, file, decls } of entries) {
    const text = await ctx.format(decls.map((d) => declarationText(ctx, d, '')).join('\n'));
    const aliases = [...(ctx.aliases.get(symbol) ?? [])].sort(byName);
    const as = aliases.length ? `, named ${aliases.join(', ')} where imported` : '';
    blocks.push(`// ${file}${as}\n${text.trimEnd()}`);
  }
  return ['## Named by the doors, exported by none', '', '```ts', blocks.join('\n\n'), '```', ''];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `--root dir`: the package at dir instead of fw's own (the spec's fixtures). `--check [file…]`:
  // for each file (default api/report.md), say whether it is the API, naming the first differing
  // line; exit 1 when one is not. Without it: write api/report.md.
  const { values, positionals } = parseArgs({
    options: { root: { type: 'string' }, check: { type: 'boolean' } },
    allowPositionals: true,
  });
  const root = values.root ? absolute(values.root) : ROOT;
  const file = join(root, 'api', 'report.md');
  const report = await apiReport(root);
  if (!values.check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, report);
    console.log(`wrote ${relative(process.cwd(), file)}`);
  } else
    for (const against of positionals.length ? positionals : [file]) checkFile(against, report);
}

function checkFile(against, report) {
  const was = readFileSync(against, 'utf8').split('\n');
  const now = report.split('\n');
  const at = now.findIndex((line, i) => line !== was[i]);
  if (at === -1 && was.length === now.length) return console.log(`${against} is the API`);
  const line = at === -1 ? now.length : at;
  console.error(
    `${against} is not the API from line ${line + 1}:\n- ${was[line] ?? ''}\n+ ${now[line] ?? ''}\nrun npm run api:report and review the diff`,
  );
  process.exitCode = 1;
}
