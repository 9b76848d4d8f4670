import { join } from 'node:path';
import ts from 'typescript';

// A client package compiles against the server's controller imported as types only,
// its JavaScript never loads the server's code, and the result of a call is told apart by status.
const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(ROOT, 'spec', 'fixtures', 'client-package');
const CLIENT = join(FIXTURE, 'client', 'pay.ts');

function options(): ts.CompilerOptions {
  const read = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  const out: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: false,
    declaration: false,
    sourceMap: false,
  };
  delete out.outDir;
  return out;
}

/** Compiles `files` (with what they import), emitting in memory; the diagnostics and the JavaScript by file. */
function compile(files: string[], extra?: { name: string; text: string }) {
  const opts = options();
  const host = ts.createCompilerHost(opts);
  if (extra !== undefined) {
    const read = host.readFile.bind(host);
    const exists = host.fileExists.bind(host);
    const source = host.getSourceFile.bind(host);
    host.readFile = (f) => (f === extra.name ? extra.text : read(f));
    host.fileExists = (f) => f === extra.name || exists(f);
    host.getSourceFile = (f, v, ...rest) =>
      f === extra.name ? ts.createSourceFile(f, extra.text, v) : source(f, v, ...rest);
  }
  const emitted = new Map<string, string>();
  host.writeFile = (name, text) => emitted.set(name, text);
  const program = ts.createProgram(files, opts, host);
  const diagnostics = (file: string) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  program.emit(program.getSourceFile(files[0]));
  return { diagnostics, emitted };
}

const WRONG = join(FIXTURE, 'client', 'wrong.ts');

const WRONG_TEXT = `
import { clientOf, type ClientDocument, type OpenTarget, type Scope } from 'fw-http/fetch';
import type { PaymentsController } from '../server/payments-controller';
declare const target: OpenTarget;
declare const document: ClientDocument;
declare const run: Scope;
export async function wrong(): Promise<number> {
  const payments = clientOf<PaymentsController>(target, { document, controller: 'PaymentsController' });
  const r = await payments.pay(run, { to: 'bob', cents: 5 });
  if (r.status === 422) return r.value.cents;
  return 0;
}
`;

const jsOf = (emitted: Map<string, string>, base: string) =>
  [...emitted].find(([name]) => name.endsWith(base))?.[1] ?? '';

describe('the typed client of a controller imported as types only', () => {
  // One program for both files: a type check of fw's doors takes a while on a loaded machine.
  let compiled: ReturnType<typeof compile>;
  beforeAll(() => {
    compiled = compile([CLIENT, WRONG], { name: WRONG, text: WRONG_TEXT });
  }, 180_000);
  const diagnostics = (file: string) => compiled.diagnostics(file);

  it('a client package compiles with the server classes imported as types only (every @ts-expect-error used)', () => {
    expect(diagnostics(CLIENT)).toEqual([]);
  });

  it('its emitted JavaScript loads fw-http/fetch and never the server code', () => {
    const js = jsOf(compiled.emitted, join('client', 'pay.js'));
    expect(js).toContain('require("fw-http/fetch")');
    expect(js).not.toMatch(/server\/payments-controller|require\("fw-http"\)/);
  });

  it('a 422 branch is typed: its value is InsufficientFunds, and a mistake there is a type error', () => {
    expect(diagnostics(WRONG)).toEqual([
      expect.stringContaining("Property 'cents' does not exist on type 'InsufficientFunds"),
    ]);
  });
});
