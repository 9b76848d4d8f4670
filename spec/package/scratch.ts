import { join } from 'node:path';
import { ROOT } from './stage';

/**
 * The scratch projects of the consumer check: what a user's project holds, one per way of
 * compiling and resolving modules people use. Each installs only the packed tarball and what a
 * user installs beside it; the compilers (tsc, SWC, ts-jest) are this repository's, by path.
 */
export interface Scratch {
  readonly name: string;
  /** package.json's "type". */
  readonly type: 'commonjs' | 'module';
  readonly compiler: 'tsc' | 'swc';
  /** The tsconfig.json compilerOptions that make this project what it is. */
  readonly modules: Readonly<Record<string, string>>;
  /** Runs one jest test through ts-jest too. */
  readonly jest: boolean;
}

export const SCRATCHES: readonly Scratch[] = [
  {
    name: 'cjs-node',
    type: 'commonjs',
    compiler: 'tsc',
    modules: { module: 'commonjs', moduleResolution: 'node' },
    jest: true,
  },
  {
    name: 'cjs-node16',
    type: 'commonjs',
    compiler: 'tsc',
    modules: { module: 'node16', moduleResolution: 'node16' },
    jest: false,
  },
  {
    name: 'esm-nodenext',
    type: 'module',
    compiler: 'tsc',
    modules: { module: 'nodenext', moduleResolution: 'nodenext' },
    jest: false,
  },
  {
    // what a bundler's project says; node then runs tsc's ES modules as a bundler would resolve them
    name: 'bundler',
    type: 'module',
    compiler: 'tsc',
    modules: { module: 'esnext', moduleResolution: 'bundler' },
    jest: false,
  },
  {
    name: 'swc',
    type: 'commonjs',
    compiler: 'swc',
    modules: { module: 'commonjs', moduleResolution: 'node' },
    jest: false,
  },
];

/** What a user installs beside fw-http (at the versions this repository was tested with). */
export function companions(): string[] {
  const version = (name: string): string =>
    (require(join(ROOT, 'node_modules', name, 'package.json')) as { version: string }).version;
  return ['reflect-metadata', 'class-validator', '@types/node'].map((n) => `${n}@${version(n)}`);
}

/** The options the README gives SWC users (`.swcrc`): decorators with their metadata. */
export const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: true,
} as const;

export function tsconfigOf(s: Scratch): object {
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      ...s.modules,
      types: ['node'],
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      // broken or unresolvable .d.ts in the package fail the compile
      skipLibCheck: false,
      rootDir: 'src',
      outDir: 'dist',
    },
    include: ['src'],
  };
}

/**
 * The app every scratch project compiles and runs: a validated body, an idempotent POST kept in a
 * MemoryStore, an outbound call through fw-http/fetch's Client, the OpenAPI document written to
 * out/openapi.json. Run with WAREHOUSE_URL set, it listens on a free port and prints one JSON line.
 */
export const MAIN_TS = `import 'reflect-metadata';
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { App, Body, Controller, Ctx, Get, Idempotent, Param, Post, Reply, Returns, reply } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

export class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

export class Order {
  @IsString() id!: string;
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

export class StockLevel {
  @IsString() sku!: string;
  @IsInt() available!: number;
}

const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 64 * 1024 });
const Warehouse = Target('warehouse', { timeoutMs: 5_000, maxInFlight: 4 });

export class OrderBook {
  placed = 0;
}

@Controller('/orders')
export class OrdersController {
  constructor(readonly book: OrderBook) {}

  @Post()
  @Idempotent(Orders)
  @Returns(Reply({ 201: Order }))
  create(@Body() order: NewOrder) {
    const id = String(++this.book.placed);
    return reply(201, { id, sku: order.sku, qty: order.qty }, { Location: '/orders/' + id });
  }
}

@Controller('/stock')
export class StockController {
  constructor(readonly warehouse: OpenTarget) {}

  @Get('/{sku}')
  @Returns(StockLevel)
  async one(@Param('sku') sku: string, c: Ctx) {
    const res = await this.warehouse.get(c, '/stock/{sku}', { sku });
    return res.json(StockLevel);
  }
}

export function makeApp(warehouseUrl: string, openapiPath: string): App {
  const store = new MemoryStore({ bytes: 1 << 20 });
  const client = new Client();
  return new App({ title: 'consumer', version: '1.0.0' })
    .provide(new OrderBook())
    .provide(Orders.open(store))
    .provide(client)
    .provide(Warehouse.open(client, { base: warehouseUrl }))
    .controllers(OrdersController, StockController)
    .openapi({ path: openapiPath })
    .onClose(() => store.close())
    .onClose(() => client.close());
}

/** Never called: compiles only while Ctx's internals stay out of the published .d.ts. */
export function internalsAreHidden(c: Ctx): unknown {
  // @ts-expect-error markSent is @internal, stripped from the published declarations
  return c.markSent;
}

/** What app.docs() says without swagger-ui-dist, which a user installs only to have the page. */
function docsWithoutSwaggerUi(): unknown {
  try {
    new App().openapi().docs();
    return null;
  } catch (e) {
    const { name, message, code } = e as { name: string; message: string; code: string };
    return { name, message, code };
  }
}

async function main(warehouseUrl: string): Promise<void> {
  const docs = docsWithoutSwaggerUi();
  const app = makeApp(warehouseUrl, 'out/openapi.json');
  const { url } = await app.listen({ port: 0 });
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  console.log(JSON.stringify({ url, docs }));
}

if (process.env.WAREHOUSE_URL !== undefined) void main(process.env.WAREHOUSE_URL);
`;

/**
 * The jest test of the cjs-node project (compiled by ts-jest with type checking on) and of the
 * README's toolchains.
 */
export const APP_SPEC_TS = `import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeApp } from '../src/main';

describe('the app, under jest', () => {
  it('validates, replays an idempotent POST and calls the warehouse', async () => {
    const warehouse = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sku: decodeURIComponent(req.url!.slice('/stock/'.length)), available: 3 }));
    });
    await new Promise<void>((r) => warehouse.listen(0, '127.0.0.1', r));
    const app = makeApp('http://127.0.0.1:' + (warehouse.address() as AddressInfo).port, 'out/jest-openapi.json');
    try {
      const post = { method: 'POST', url: '/orders', headers: { 'idempotency-key': 'j1' }, body: { sku: 'a', qty: 1 } };
      const first = await app.inject(post);
      expect(first.status).toBe(201);
      const again = await app.inject(post);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const bad = await app.inject({ ...post, headers: { 'idempotency-key': 'j2' }, body: { sku: 'a', qty: 0 } });
      expect(bad.status).toBe(400);
      const stock = await app.inject({ url: '/stock/x' });
      expect(JSON.parse(stock.body)).toEqual({ sku: 'x', available: 3 });
    } finally {
      await app.close();
      warehouse.close();
    }
  });
});
`;

/** The jest config of the cjs-node project: this repository's ts-jest, the project's tsconfig. */
export function jestConfigOf(): string {
  const tsJest = require.resolve('ts-jest', { paths: [ROOT] });
  return `module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\\\.ts$': [${JSON.stringify(tsJest)}, { tsconfig: 'tsconfig.jest.json' }] },
};
`;
}

/** ts-jest's tsconfig: the project's, with jest's globals typed from this repository's @types. */
export function tsconfigJestOf(projectDir: string): object {
  return {
    extends: './tsconfig.json',
    compilerOptions: {
      types: ['node', 'jest'],
      typeRoots: [join(projectDir, 'node_modules', '@types'), join(ROOT, 'node_modules', '@types')],
      rootDir: '.',
    },
    include: ['src', 'test'],
  };
}

/**
 * Run in the ES module project: every name each door of the package's `exports` gives require() is
 * a named ESM export too (Node's cjs-module-lexer finds them in the CommonJS build), printed as
 * what is missing.
 */
export const EXPORTS_CHECK_MJS = `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const missing = {};
const doors = Object.keys(require('fw-http/package.json').exports)
  .filter((key) => key !== './package.json')
  .map((key) => 'fw-http' + key.slice(1));
for (const door of doors) {
  const esm = await import(door);
  const cjs = require(door);
  const names = Object.keys(cjs);
  missing[door] = {
    count: names.length,
    missing: names.filter((k) => !(k in esm)),
    // one instance of the library: the ES module view hands out the very same classes
    sameInstance: names.every((k) => esm[k] === cjs[k]),
  };
}
console.log(JSON.stringify(missing));
`;
