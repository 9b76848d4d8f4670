import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from '@swc/core';
import ts from 'typescript';
import * as fw from 'fw-http';
import { App, RefusalError } from 'fw-http';
import * as validator from 'class-validator';
import { Transfers } from './type-only-body.fixture';
import { SWC_OPTIONS } from '../package/scratch';

// A @Body() or @Query() class imported with `import type` is gone at run time. Full tsc
// writes `Function` into design:paramtypes, SWC and typescript file by file `Object`; read into
// either, the body would be `{}` with nothing validated. Each compiler's output is refused at build.

const FIXTURE = join(__dirname, 'type-only-body.fixture.ts');
const DTO = join(__dirname, 'type-only-body.dto.fixture.ts');

/** Runs CommonJS `code` with fw-http and class-validator as this spec has them. */
function evaluate(code: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  const need = (name: string): unknown => {
    if (name === 'fw-http') return fw;
    if (name === 'class-validator') return validator;
    throw new Error(`the fixture asked for ${name}`);
  };
  new Function('require', 'module', 'exports', code)(need, module, module.exports);
  return module.exports;
}

/** The fixture compiled by tsc as a whole program (type information, not file by file). */
function withTsc(): Function {
  const out = new Map<string, string>();
  const program = ts.createProgram([FIXTURE, DTO], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    noEmitOnError: false,
    // Only the two files: the dto is resolved among them; fw-http and the libraries are not read (fast).
    noResolve: true,
    noLib: true,
    types: [],
  });
  program.emit(undefined, (name, text) => out.set(name, text));
  const code = [...out].find(([name]) => name.endsWith('type-only-body.fixture.js'))![1];
  expect(code).toContain('__metadata("design:paramtypes", [Function, Function])');
  return evaluate(code).Transfers as Function;
}

function withSwc(): Function {
  const { code } = transformSync(readFileSync(FIXTURE, 'utf8'), {
    ...SWC_OPTIONS,
    sourceMaps: false,
    filename: FIXTURE,
  });
  return evaluate(code).Transfers as Function;
}

/** The fixture compiled file by file by typescript (`isolatedModules`, as ts-jest does). */
function withTranspileModule(): Function {
  const { outputText } = ts.transpileModule(readFileSync(FIXTURE, 'utf8'), {
    fileName: FIXTURE,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      isolatedModules: true,
    },
  });
  return evaluate(outputText).Transfers as Function;
}

function refusal(controller: Function): string {
  try {
    new App({ log: () => {} }).controllers(controller).build();
  } catch (e) {
    expect(e).toBeInstanceOf(RefusalError);
    return (e as Error).message;
  }
  throw new Error('built');
}

describe('a @Body() or @Query() class imported with `import type`', () => {
  for (const [compiler, compile] of [
    ['tsc (a whole program)', withTsc],
    ['SWC (decoratorMetadata)', withSwc],
    ['typescript file by file (ts-jest, isolated modules)', withTranspileModule],
    ["this suite's own transform", () => Transfers],
  ] as const) {
    it(`is refused at startup under ${compiler}, naming the parameter and the fix`, () => {
      const message = refusal(compile());
      expect(message).toContain(
        'POST /transfers (Transfers.create): parameter 0: @Body() has no class at run time',
      );
      expect(message).toContain(
        'POST /transfers (Transfers.create): parameter 1: @Query() has no class at run time',
      );
      expect(message).toContain('import the class itself');
    });
  }
});
