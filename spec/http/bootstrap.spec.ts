import {
  App,
  Body,
  Controller,
  Ctx,
  Get,
  Param,
  Post,
  Redirect,
  RefusalError,
  Returns,
  headers,
} from 'fw-http';
import { IsString } from 'class-validator';
import { marks } from '../../lib/http/route/metadata';

/** True once a log line holds `text` (as it is escaped inside the JSON line). 500 bodies say only `internal server error`, the detail goes to the log. */
async function logged(lines: readonly string[], text: string): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  const escaped = JSON.stringify(text).slice(1, -1);
  return lines.some((l) => l.includes(escaped));
}

class Db {
  readonly orders = ['a', 'b'];
}

class Note {
  @IsString() text!: string;
}

@Controller('/orders')
class OrdersController {
  built = 0;
  constructor(readonly db: Db) {
    this.built++;
  }
  @Returns(Object)
  @Get()
  list(db: Db) {
    return db.orders;
  }
  @Returns(Object)
  @Post()
  create(@Body() note: Note) {
    return note;
  }
}

class Unprovided {}

describe('bootstrap', () => {
  it('CORE-01 CORE-08 a program declares routes in controllers and provides services by type', async () => {
    const app = new App({ log: () => {} }).controllers(OrdersController).provide(new Db());
    const res = await app.inject({ url: '/orders' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual(['a', 'b']);
  });

  it('CORE-02 CORE-03 build() scans once and compiles without opening a socket', () => {
    const app = new App({ log: () => {} }).controllers(OrdersController).provide(new Db());
    app.build();
    app.build();
    expect(app.routes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /orders', 'POST /orders']);
    expect(Object.isFrozen(app.routes[0])).toBe(true);
    expect(app.server.listening).toBe(false);
  });

  it('CORE-04 handling a request never reads reflection metadata', async () => {
    const app = new App({ log: () => {} }).controllers(OrdersController).provide(new Db());
    app.build();
    const spies = [
      jest.spyOn(Reflect, 'getMetadata'),
      jest.spyOn(Reflect, 'getOwnMetadata'),
      ...Object.keys(marks).map((k) => jest.spyOn(marks, k as keyof typeof marks)),
    ];
    try {
      await app.inject({ url: '/orders' });
      await app.inject({ method: 'POST', url: '/orders', body: { text: 'x' } });
      for (const s of spies) expect(s).not.toHaveBeenCalled();
    } finally {
      spies.forEach((s) => s.mockRestore());
    }
  });

  it('controllers are constructed once with their constructor parameters filled by type', async () => {
    let built = 0;
    @Controller()
    class Counted {
      constructor(readonly db: Db) {
        built++;
      }
      @Returns(Object)
      @Get('/count')
      count() {
        return { built, orders: this.db.orders.length };
      }
    }
    const app = new App({ log: () => {} }).controllers(Counted).provide(new Db());
    await app.inject({ url: '/count' });
    expect((await app.inject({ url: '/count' })).json()).toEqual({ built: 1, orders: 2 });
  });
});

describe('Refusals', () => {
  @Controller('/bad')
  class BadController {
    constructor(readonly u: Unprovided) {}
    @Returns(Object)
    @Get('/{id}')
    one(@Param('id') id: number, missing: Unprovided) {
      return { id, missing };
    }
    @Get('/x/{a}')
    noParam() {
      return null;
    }
    @Returns(String)
    @Get('/y')
    extraParam(@Param('b') b: string) {
      return b;
    }
    @Get('/moved')
    @Returns(Redirect(305 as 301))
    moved() {
      return Redirect.to('/');
    }
  }

  @Controller('/bad')
  class TwinController {
    @Returns(String)
    @Get('/{other}')
    twin(@Param('other') other: string) {
      return other;
    }
  }

  const refusal = (): RefusalError => {
    try {
      new App({ log: () => {} }).controllers(BadController, TwinController).build();
    } catch (e) {
      return e as RefusalError;
    }
    throw new Error('not refused');
  };

  it('REF-01 every Refusal of the app is collected and thrown together as one RefusalError', () => {
    const e = refusal();
    expect(e).toBeInstanceOf(RefusalError);
    expect(e.code).toBe('Refusal');
    expect(e.problems.length).toBeGreaterThanOrEqual(6);
  });

  it('REF-02 each line names the route as METHOD /path (Controller.method) and the rule broken', () => {
    const lines = refusal().message.split('\n').slice(1);
    expect(lines.length).toBe(refusal().problems.length);
    expect(
      lines.some(
        (l) =>
          l.includes('GET /bad/{id} (BadController.one)') &&
          l.includes('parameter 1 (Unprovided) is not provided'),
      ),
    ).toBe(true);
  });

  it('REF-33 an unprovided constructor or handler parameter type is refused naming the route and the parameter', () => {
    const p = refusal().problems;
    expect(p).toContain(
      'BadController: constructor parameter 0 (Unprovided) is not provided: pass an instance to app.provide(), or take it out of the constructor',
    );
    expect(
      p.some((l) =>
        l.startsWith('GET /bad/{id} (BadController.one): parameter 1 (Unprovided) is not provided'),
      ),
    ).toBe(true);
  });

  it('a {name} without its @Param, and a @Param without its {name}, are refused', () => {
    const p = refusal().problems;
    expect(p).toContain(
      "GET /bad/x/{a} (BadController.noParam): path segment {a} has no @Param('a') parameter",
    );
    expect(p).toContain(
      "GET /bad/y (BadController.extraParam): @Param('b') names no {b} segment of the path",
    );
  });

  it('a duplicate route (same method and path) is refused naming both', () => {
    expect(refusal().problems).toContain(
      'GET /bad/{other} (TwinController.twin): duplicate route: GET /bad/{other} is also declared by GET /bad/{id} (BadController.one)',
    );
  });

  it('REF-18 ANS-06 a redirect status outside 301, 302, 303, 307, 308 is refused naming the route', () => {
    expect(refusal().problems).toContain(
      'GET /bad/moved (BadController.moved): redirect status 305 is not one of 301, 302, 303, 307, 308',
    );
  });

  it('REF-03 listen() opens no socket when there is a Refusal', async () => {
    const app = new App({ log: () => {} }).controllers(BadController);
    await expect(app.listen({ port: 0 })).rejects.toBeInstanceOf(RefusalError);
    await app.close();
  });

  it('REF-20 ANS-37 a returned value with more than 8 headers is refused (at run time: 500 naming the route)', async () => {
    @Controller()
    class Many {
      @Get('/many')
      @Returns(Redirect(302))
      many() {
        const list = Array.from({ length: 9 }, (_, i) => ({ name: `x-h${i}`, value: 'v' }));
        return Redirect.with('/', headers.of(list));
      }
    }
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(l) }).controllers(Many);
    const res = await app.inject({ url: '/many' });
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    expect(await logged(lines, 'a returned value carries at most 8 headers, got 9')).toBe(true);
    expect(lines.join('\n')).toContain('GET /many (Many.many)');
  });

  it('LIMITS-07 a returned value with exactly 8 headers is accepted', async () => {
    @Controller()
    class Eight {
      @Get('/eight')
      @Returns(Redirect(302))
      eight() {
        return Redirect.with(
          '/',
          headers.of(Array.from({ length: 8 }, (_, i) => ({ name: `x-h${i}`, value: String(i) }))),
        );
      }
    }
    const res = await new App({ log: () => {} }).controllers(Eight).inject({ url: '/eight' });
    expect(res.status).toBe(302);
    expect(res.headers['x-h7']).toBe('7');
  });

  it('a class without @Controller is refused', () => {
    class Plain {}
    expect(() => new App().controllers(Plain).build()).toThrow('Plain: is not a @Controller');
  });

  it('Ctx is given by type', async () => {
    @Controller()
    class WithCtx {
      @Returns(String)
      @Get('/ctx')
      get(c: Ctx) {
        return c.path;
      }
    }
    expect((await new App().controllers(WithCtx).inject({ url: '/ctx' })).body).toBe('/ctx');
  });
});
