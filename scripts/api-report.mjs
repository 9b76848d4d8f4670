// The public surface of fw-http's three doors, as text: every export of lib/http, lib/cache and
// lib/fetch with its kind and type, and each exported class's public members. `npm run api:report`
// writes it to api/report.md; spec/package/api-report.spec.ts fails while the committed file differs,
// so a change to the public surface shows as a diff in review.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DOORS = [
  ['fw-http', 'lib/http/index.ts'],
  ['fw-http/cache', 'lib/cache/index.ts'],
  ['fw-http/fetch', 'lib/fetch/index.ts'],
];
const FLAGS =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseFullyQualifiedType |
  ts.TypeFormatFlags.WriteArrowStyleSignature;

export function apiReport() {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  const files = DOORS.map(([, file]) => join(ROOT, file));
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const out = [
    '# The public API of fw-http',
    '',
    'Made by `npm run api:report`; checked by `spec/package/api-report.spec.ts`.',
    '',
  ];
  const modules = DOORS.map(([, file]) =>
    checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, file))),
  );
  const exportedNames = new Set(
    modules.flatMap((m) => checker.getExportsOfModule(m).map((e) => e.name)),
  );
  DOORS.forEach(([name], i) => {
    out.push(`## ${name}`, '', '```ts');
    const exports = checker
      .getExportsOfModule(modules[i])
      .sort((a, b) => a.name.localeCompare(b.name));
    for (const symbol of exports) out.push(...describe(checker, symbol, exportedNames));
    out.push('```', '');
  });
  return out.join('\n');
}

/** `exportedNames`: every name the three doors export. */
function describe(checker, exported, exportedNames) {
  const symbol =
    exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const decl = symbol.declarations?.[0];
  if (symbol.flags & ts.SymbolFlags.Class) return classLines(checker, name, symbol, decl);
  if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    const kind = symbol.flags & ts.SymbolFlags.Interface ? 'interface' : 'type';
    const text =
      kind === 'type' && decl?.type
        ? decl.type.getText()
        : checker.typeToString(type, decl, FLAGS | ts.TypeFormatFlags.InTypeAlias);
    return [
      `${kind} ${name} = ${oneLine(text)}`,
      ...(kind === 'interface'
        ? memberLines(checker, type, decl)
        : unexportedLines(checker, decl, exportedNames)),
    ];
  }
  const kind = symbol.flags & ts.SymbolFlags.Function ? 'function' : 'const';
  const type = checker.getTypeOfSymbolAtLocation(symbol, decl ?? symbol.valueDeclaration);
  return [`${kind} ${name}: ${oneLine(checker.typeToString(type, decl, FLAGS))}`];
}

/** The properties of an interface, one line each. */
function memberLines(checker, type, decl) {
  return checker
    .getPropertiesOfType(type)
    .map(
      (p) =>
        `  ${oneLine(p.name)}${p.flags & ts.SymbolFlags.Optional ? '?' : ''}: ${oneLine(checker.typeToString(checker.getTypeOfSymbolAtLocation(p, decl), decl, FLAGS))}`,
    );
}

/**
 * The members of the interfaces of fw's own that a type alias names but no door exports (such as
 * `RedisStoreOptions`'s `CommonOptions`): their properties are public through the alias, and would
 * otherwise change unseen.
 */
function unexportedLines(checker, decl, exported) {
  const lines = [];
  const seen = new Set();
  const visit = (node) => {
    if (ts.isTypeReferenceNode(node)) {
      const symbol = checker.getSymbolAtLocation(node.typeName);
      const own = symbol?.declarations?.[0];
      if (
        symbol &&
        symbol.flags & ts.SymbolFlags.Interface &&
        !exported.has(symbol.name) &&
        !seen.has(symbol.name) &&
        own.getSourceFile().fileName.startsWith(join(ROOT, 'lib'))
      ) {
        seen.add(symbol.name);
        lines.push(`  (${symbol.name}, not exported)`);
        lines.push(...memberLines(checker, checker.getDeclaredTypeOfSymbol(symbol), own));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(decl.type);
  return lines;
}

function classLines(checker, name, symbol, decl) {
  const lines = [`class ${name}`];
  const instance = checker.getDeclaredTypeOfSymbol(symbol);
  const statics = checker.getTypeOfSymbolAtLocation(symbol, decl);
  for (const sig of statics.getConstructSignatures())
    // An `@internal` constructor is stripped like an internal member: a program cannot call it.
    if (!(
      sig.declaration && ts.getJSDocTags(sig.declaration).some((t) => t.tagName.text === 'internal')
    ))
      lines.push(`  constructor${oneLine(checker.signatureToString(sig, decl, FLAGS))}`);
  const members = (type, prefix) =>
    checker
      .getPropertiesOfType(type)
      .filter((p) => p.name !== 'prototype' && !p.name.startsWith('#') && !p.name.startsWith('__'))
      .filter(
        (p) =>
          !(
            ts.getCombinedModifierFlags(p.valueDeclaration ?? p.declarations?.[0] ?? decl) &
            (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)
          ),
      )
      .filter((p) => !isInternal(p))
      .map(
        (p) =>
          `  ${prefix}${p.name}: ${oneLine(checker.typeToString(checker.getTypeOfSymbolAtLocation(p, decl), decl, FLAGS))}`,
      );
  lines.push(...members(statics, 'static '), ...members(instance, ''));
  return lines;
}

/** Members marked `@internal` are stripped from the published types, so they are not API. */
function isInternal(p) {
  return (p.declarations ?? []).some((d) =>
    ts.getJSDocTags(d).some((t) => t.tagName.text === 'internal'),
  );
}

// Unique-symbol keys print with the checker's running id (`__@HEADER_LIST@920`), which moves
// with any edit elsewhere: they are written by name alone (`[HEADER_LIST]`). A type not in scope
// where it is printed (an inherited member's, seen from the subclass's file) is qualified with an
// absolute import path, which differs per checkout: it is written by name alone too.
const oneLine = (text) =>
  text
    .replace(/\s+/g, ' ')
    .replace(/__@(\w+)@\d+/g, '[$1]')
    .replace(/import\("[^"]*"\)\./g, '');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `--check [file]`: exit 1 naming the first differing line when file (default api/report.md) is stale.
  const check = process.argv.indexOf('--check');
  const file = join(ROOT, 'api', 'report.md');
  const report = apiReport();
  if (check === -1) {
    writeFileSync(file, report);
    console.log('wrote api/report.md');
  } else {
    const against = process.argv[check + 1] ?? file;
    const was = readFileSync(against, 'utf8').split('\n');
    const now = report.split('\n');
    const at = now.findIndex((line, i) => line !== was[i]);
    if (at === -1 && was.length === now.length) console.log(`${against} is the API`);
    else {
      const line = at === -1 ? now.length : at;
      console.error(
        `${against} is not the API from line ${line + 1}:\n- ${was[line] ?? ''}\n+ ${now[line] ?? ''}\nrun npm run api:report and review the diff`,
      );
      process.exitCode = 1;
    }
  }
}
