import { transformSync } from '@swc/core';
import * as fw from 'fw-http';
import { App, Controller, Ctx, Get, NoContent, Post, RefusalError, Returns } from 'fw-http';

// an async handler without @Returns could resolve to anything, and before this it
// passed build() and answered 500 at request time. It is a Refusal unless it declares it answers
// nothing (NoContent) or answers through the Ctx; under tsc (ts-jest) and SWC alike.

class Order {
  constructor(readonly id: string = '') {}
}

function refusals(controllers: Function[]): readonly string[] {
  try {
    new App({ log: () => {} }).controllers(...controllers).build();
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(RefusalError);
    return (e as RefusalError).problems;
  }
}

const REFUSED = (label: string) =>
  `${label}: is async but declares no @Returns, so what it resolves to has no answer: declare @Returns(...) for its value, or @Returns(NoContent) if it answers nothing (204)`;

@Controller('/o')
class Orders {
  @Get('/inferred') async inferred() {
    return new Order('o1');
  }
  @Post('/typed') async typed(): Promise<Order> {
    return new Order('o2');
  }
  @Post('/nothing') async nothing(): Promise<void> {}
}

@Controller('/fine')
class Fine {
  @Post('/ping') @Returns(NoContent) async ping(): Promise<void> {}
  @Get('/one') @Returns(Order) async one() {
    return new Order('o3');
  }
  @Get('/ctx') async ctx(c: Ctx): Promise<void> {
    c.sendText(200, 'through the Ctx');
  }
  @Post('/sync') sync(): void {}
}

/** The same controllers, compiled by SWC (legacy decorators with metadata), evaluated here. */
const SWC_SOURCE = `
import { Controller, Get, Post, Returns, NoContent } from 'fw-http';
class Order { constructor(readonly id: string = '') {} }
@Controller('/s')
export class SwcOrders {
  @Get('/inferred') async inferred() { return new Order('o1'); }
  @Post('/nothing') async nothing(): Promise<void> {}
  @Post('/ping') @Returns(NoContent) async ping(): Promise<void> {}
  @Post('/sync') sync(): void {}
}
`;

function compiledBySwc(): Function {
  const { code } = transformSync(SWC_SOURCE, {
    filename: 'swc-orders.ts',
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  });
  const exports: Record<string, unknown> = {};
  const load = (name: string): unknown => {
    if (name === 'fw-http') return fw;
    return require(name) as unknown; // the helpers SWC imports (@swc/helpers), reflect-metadata
  };
  new Function('require', 'exports', 'module', code)(load, exports, { exports });
  return exports.SwcOrders as Function;
}

describe('a forgotten @Returns on an async handler is a Refusal', () => {
  it('under tsc: inferred, typed and Promise<void> async handlers without @Returns are refused', () => {
    expect(refusals([Orders])).toEqual([
      REFUSED('GET /o/inferred (Orders.inferred)'),
      REFUSED('POST /o/typed (Orders.typed)'),
      REFUSED('POST /o/nothing (Orders.nothing)'),
    ]);
  });

  it('@Returns(NoContent), a declared answer, a Ctx answer and a sync void handler pass', async () => {
    expect(refusals([Fine])).toEqual([]);
    const app = new App({ log: () => {} }).controllers(Fine);
    const ping = await app.inject({ method: 'POST', url: '/fine/ping' });
    expect([ping.status, ping.body]).toEqual([204, '']);
    expect((await app.inject({ url: '/fine/one' })).body).toBe('{"id":"o3"}');
    expect((await app.inject({ url: '/fine/ctx' })).body).toBe('through the Ctx');
    const doc = app.document() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(doc.paths['/fine/ping']!.post!.responses)).toContain('204');
  });

  it('under SWC the same handlers are refused, and NoContent passes', () => {
    const SwcOrders = compiledBySwc();
    expect(refusals([SwcOrders])).toEqual([
      REFUSED('GET /s/inferred (SwcOrders.inferred)'),
      REFUSED('POST /s/nothing (SwcOrders.nothing)'),
    ]);
  });
});
