// The typed client's type-check cost (issue 27 §1): writes a server of `ROUTES` routes (20 per
// controller: JSON bodies, path and query arguments, Reply maps with a typed 422, server-filled
// Ctx and resolved caller), a client package using every route through `clientOf` with the
// controllers imported as types only, and runs `tsc --extendedDiagnostics` over it, then over the
// same program without the client, so the difference is what the client's types cost.
//
//   node bench/client-types.mjs [routes=200] [--installed]
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUTES = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 200);
const PER = 20;
const DIR = join(ROOT, 'tmp', `client-types-${ROUTES}`);

function controller(k) {
  const lines = [];
  for (let i = 0; i < PER && k * PER + i < ROUTES; i++) {
    const n = k * PER + i;
    switch (i % 4) {
      case 0:
        lines.push(`  @Post('/r${n}') @Returns(Reply({ 201: Item${n % 10}, 422: Short }))
  async r${n}(@Body() b: NewItem, who: Caller, c: Ctx) {
    void c; if (b.qty > 9) return reply(422, Object.assign(new Short(), { missing: b.qty }));
    return reply(201, Object.assign(new Item${n % 10}(), { id: who.id, qty: b.qty }));
  }`);
        break;
      case 1:
        lines.push(`  @Get('/r${n}/{id}') @Returns(Item${n % 10})
  async r${n}(@Param('id') id: string, who: Caller): Promise<Item${n % 10}> {
    return Object.assign(new Item${n % 10}(), { id: id + who.id, qty: 1 });
  }`);
        break;
      case 2:
        lines.push(`  @Get('/r${n}') @Returns([Item${n % 10}])
  async r${n}(@Query() q: Page, @Header('x-trace') trace?: string): Promise<Item${n % 10}[]> {
    return Array.from({ length: q.limit }, () => Object.assign(new Item${n % 10}(), { id: trace ?? '', qty: 1 }));
  }`);
        break;
      default:
        lines.push(`  @Post('/r${n}/{id}/done') @Returns(Reply({ 200: Item${n % 10}, 409: Short }))
  async r${n}(@Param('id') id: string, c: Ctx) {
    void c; return id === '' ? reply(409, new Short()) : reply(200, Object.assign(new Item${n % 10}(), { id, qty: 1 }));
  }`);
    }
  }
  return `@Controller('/c${k}')\nexport class C${k}Controller {\n${lines.join('\n\n')}\n}\n`;
}

function serverFile(controllers) {
  const items = Array.from(
    { length: 10 },
    (_, i) => `export class Item${i} { @IsString() id!: string; @IsInt() qty!: number; tag${i}?: string }`,
  );
  return `import { IsInt, IsString } from 'class-validator';
import { Body, Controller, Ctx, Get, Header, Param, Post, Query, Reply, Returns, SERVER_SIDE, reply } from 'fw-http';
export class NewItem { @IsInt() qty!: number }
export class Short { @IsInt() missing!: number }
export class Page { @IsInt() limit!: number }
export class Caller { declare readonly [SERVER_SIDE]?: true; constructor(readonly id: string) {} static resolve(c: Ctx) { return new Caller(c.header('x-who') ?? ''); } }
${items.join('\n')}
${Array.from({ length: controllers }, (_, k) => controller(k)).join('\n')}`;
}

function clientFile(controllers) {
  const uses = [];
  for (let k = 0; k < controllers; k++) {
    uses.push(`  const c${k} = clientOf<S.C${k}Controller>(target, { document, controller: 'C${k}Controller' });`);
    for (let i = 0; i < PER && k * PER + i < ROUTES; i++) {
      const n = k * PER + i;
      const call = [
        `c${k}.r${n}(run, { qty: 1 })`,
        `c${k}.r${n}(run, 'id')`,
        `c${k}.r${n}(run, { limit: 2 }, 'trace')`,
        `c${k}.r${n}(run, 'id', { timeoutMs: 1000 })`,
      ][i % 4];
      uses.push(`  { const r = await ${call}; if (r.status >= 400 && r.failure !== null) out.push(r.failure.error); else if (r.status === 422 || r.status === 409) out.push(String(r.value)); else out.push(JSON.stringify(r.value)); }`);
    }
  }
  return `import { clientOf, type ClientDocument, type OpenTarget, type Scope } from 'fw-http/fetch';
import type * as S from './server';
declare const target: OpenTarget;
declare const document: ClientDocument;
declare const run: Scope;
export async function all(): Promise<string[]> {
  const out: string[] = [];
${uses.join('\n')}
  return out;
}
`;
}

/**
 * With `--installed`, fw's doors are the declarations the package ships (dist/lib, from
 * `npm run build`), as in a project that installed fw-http: `skipLibCheck` then skips them, and
 * what is left is the program's own code. Without it they are lib/'s sources, checked too.
 */
const INSTALLED = process.argv.includes('--installed');
const DOORS = {
  'fw-http': ['dist/lib/http/index.d.ts'],
  'fw-http/cache': ['dist/lib/cache/index.d.ts'],
  'fw-http/fetch': ['dist/lib/fetch/index.d.ts'],
};

function tsconfig(files) {
  return JSON.stringify({
    extends: '../../tsconfig.json',
    compilerOptions: {
      noEmit: true,
      baseUrl: '../..',
      incremental: false,
      ...(INSTALLED ? { paths: DOORS } : {}),
    },
    include: [],
    files,
  });
}

/** tsc's own figures, and its CPU time (user + system): wall times mean little on a loaded machine. */
function measure(project) {
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const run = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', tsc, '-p', project, '--extendedDiagnostics'], {
    encoding: 'utf8',
  });
  const out = run.stdout;
  if (run.status !== 0) throw new Error(`tsc failed:\n${out}\n${run.stderr}`);
  const pick = (name) => (out.match(new RegExp(`^${name}:\\s+(.+)$`, 'm')) ?? [])[1]?.trim();
  const [, user, sys] = run.stderr.match(/cpu ([\d.]+) ([\d.]+)/) ?? [];
  return {
    checkTime: pick('Check time'),
    totalTime: pick('Total time'),
    cpuSeconds: (Number(user) + Number(sys)).toFixed(2),
    instantiations: pick('Instantiations'),
    types: pick('Types'),
    memory: pick('Memory used'),
  };
}

/**
 * In one process: the server (and fw's doors) checked first, then the client file alone, each
 * with its CPU time and the checker's instantiations, so the client's own cost stands apart.
 */
function inProcess(project) {
  const ts = createRequire(import.meta.url)('typescript');
  const read = ts.readConfigFile(project, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, DIR);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const step = (file) => {
    const cpu = process.cpuUsage();
    const before = checker.getInstantiationCount?.() ?? NaN;
    const errors = program.getSemanticDiagnostics(program.getSourceFile(join(DIR, file))).length;
    const used = process.cpuUsage(cpu);
    return {
      cpuSeconds: ((used.user + used.system) / 1e6).toFixed(2),
      instantiations: (checker.getInstantiationCount?.() ?? NaN) - before,
      errors,
    };
  };
  return { server: step('server.ts'), client: step('client.ts') };
}

rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
const controllers = Math.ceil(ROUTES / PER);
writeFileSync(join(DIR, 'server.ts'), serverFile(controllers));
writeFileSync(join(DIR, 'client.ts'), clientFile(controllers));
writeFileSync(join(DIR, 'tsconfig.json'), tsconfig(['server.ts', 'client.ts']));
writeFileSync(join(DIR, 'tsconfig.server.json'), tsconfig(['server.ts']));
const withClient = measure(join(DIR, 'tsconfig.json'));
const serverOnly = measure(join(DIR, 'tsconfig.server.json'));
console.log(`${ROUTES} routes in ${controllers} controllers (${DIR})`);
console.log('server + client:', withClient);
console.log('server only:    ', serverOnly);
console.log('in one process: ', inProcess(join(DIR, 'tsconfig.json')));
