// What the types cannot see, the app refuses at startup: one test per
// Refusal, each line naming the route and reading as a sentence that names the fix.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsInt, IsString, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import {
  App,
  Body,
  Controller,
  Ctx,
  Get,
  Head,
  Idempotent,
  Options,
  Param,
  Post,
  RefusalError,
  Reply,
  Returns,
  Status,
} from 'fw-http';
import { Dir } from 'fw-http/files';
import type { Ctx as CtxType } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

class Booking {
  @IsInt() id!: number;
}

/** The Refusal lines of building an app of `controllers` (and whatever `more` adds). */
function refusals(controllers: Function[], more: (app: App) => App = (a) => a): readonly string[] {
  try {
    more(new App({ log: () => {} }).controllers(...controllers)).build();
  } catch (e) {
    expect(e).toBeInstanceOf(RefusalError);
    return (e as RefusalError).problems;
  }
  throw new Error('the app was built');
}

describe('Refusals: statuses a contract may declare', () => {
  it('REF-35 Status(n, T) with n outside 100–599, or a 1xx, is refused naming the route and the fix', () => {
    @Controller('/s')
    class C {
      @Get('/a') @Returns(Status(999, Booking)) a() {
        return { id: 1 };
      }
      @Get('/b') @Returns(Status(42, Booking)) b() {
        return { id: 1 };
      }
      @Get('/c') @Returns(Status(101, Booking)) c() {
        return { id: 1 };
      }
    }
    expect(refusals([C])).toEqual([
      'GET /s/a (C.a): Status(999, …): 999 is not an HTTP status: use a whole number from 100 to 599',
      'GET /s/b (C.b): Status(42, …): 42 is not an HTTP status: use a whole number from 100 to 599',
      "GET /s/c (C.c): Status(101, …): a 1xx status is an interim answer, never a handler's: use a status from 200 to 599",
    ]);
  });

  it('REF-36 a body type with 204 or 304, in Status or in Reply, is refused: such an answer has no body', () => {
    @Controller('/n')
    class C {
      @Post('/a') @Returns(Status(204, Booking)) a() {
        return { id: 1 };
      }
      @Post('/b') @Returns(Reply({ 200: Booking, 304: Booking })) b() {
        return { status: 200 as const, value: { id: 1 } };
      }
    }
    expect(refusals([C])).toEqual([
      'POST /n/a (C.a): Status(204, …): a 204 answer has no body: leave @Returns out and return nothing',
      "POST /n/b (C.b): Reply status 304: a 304 answer has no body: leave @Returns out and return nothing (304 is Versioned's to send)",
    ]);
  });

  it('REF-37 a 3xx other than through Redirect (no Location) is refused, in Status or in Reply', () => {
    @Controller('/r')
    class C {
      @Post('/a') @Returns(Status(302, Booking)) a() {
        return { id: 1 };
      }
      @Post('/b') @Returns(Reply(Booking, { statuses: [200, 301, 300] })) b() {
        return { status: 200 as const, value: { id: 1 } };
      }
    }
    expect(refusals([C])).toEqual([
      'POST /r/a (C.a): Status(302, …): a 302 answer needs a Location: declare @Returns(Redirect(302)) and return Redirect.to(url)',
      'POST /r/b (C.b): Reply status 301: a 301 answer needs a Location: declare @Returns(Redirect(301)) and return Redirect.to(url)',
      'POST /r/b (C.b): Reply status 300: a 300 answer needs a Location: declare @Returns(Redirect(303)) and return Redirect.to(url)',
    ]);
  });
});

describe('Refusals: what a route declares', () => {
  it('REF-38 a handler with no @Returns whose return type is not void is refused: declare @Returns or return nothing', () => {
    @Controller('/u')
    class C {
      @Get('/text') text(): string {
        return 'ok';
      }
      @Get('/one') one(): Booking {
        return { id: 1 };
      }
      @Post('/none') none(): void {}
      @Post('/later') async later(): Promise<void> {}
    }
    expect(refusals([C])).toEqual([
      'GET /u/text (C.text): returns String but declares no @Returns, so it would answer 204: declare @Returns(...) or return nothing',
      'GET /u/one (C.one): returns Booking but declares no @Returns, so it would answer 204: declare @Returns(...) or return nothing',
      // an async handler declares what it resolves to, or NoContent.
      'POST /u/later (C.later): is async but declares no @Returns, so what it resolves to has no answer: declare @Returns(...) for its value, or @Returns(NoContent) if it answers nothing (204)',
    ]);
  });

  it('REF-45 an array @Body is refused with a sentence that says to wrap it in a class', () => {
    class NewBooking {
      @IsString() name!: string;
    }
    @Controller('/b')
    class C {
      @Post() @Returns(Status(201, Booking)) many(@Body() items: NewBooking[]) {
        return { id: items.length };
      }
    }
    expect(refusals([C])).toEqual([
      'POST /b (C.many): parameter 0: @Body() cannot read an array: wrap it in a class (class NewBookings { @ValidateNested({ each: true }) @Type(() => NewBooking) items!: NewBooking[] }) and take @Body() b: NewBookings',
    ]);
  });

  it('REF-40 a @ValidateNested property whose class fw cannot see (no @Type, no class type) is refused, nested classes too', () => {
    class Line {
      @IsString() sku!: string;
    }
    class Inner {
      @ValidateNested({ each: true }) lines!: Line[];
    }
    class Order {
      @ValidateNested() @Type(() => Inner) inner!: Inner;
      @ValidateNested() meta!: Record<string, string>;
      @ValidateNested({ each: true }) @Type(() => Line) fine!: Line[];
    }
    @Controller('/v')
    class C {
      @Post() @Returns(Status(201, Booking)) place(@Body() o: Order) {
        return { id: o.fine.length };
      }
    }
    expect(refusals([C])).toEqual([
      'POST /v (C.place): @ValidateNested on Order.meta cannot see the class it holds, so it would only check "is an object": add @Type(() => TheClass) from class-transformer',
      'POST /v (C.place): @ValidateNested on Inner.lines cannot see the class it holds, so it would only check "is an object": add @Type(() => TheClass) from class-transformer',
    ]);
  });
});

describe('Refusals: @Idempotent', () => {
  const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });
  const provided = (app: App) => app.provide(Orders.open(new MemoryStore({ bytes: 1 << 16 })));

  it('REF-43 @Idempotent on GET, HEAD or OPTIONS is refused: those methods are idempotent already', () => {
    @Controller('/i')
    class C {
      @Get() @Idempotent(Orders) @Returns(Booking) get() {
        return { id: 1 };
      }
      @Head('/h') @Idempotent(Orders) head(): void {}
      @Options('/o') @Idempotent(Orders) options(): void {}
    }
    const lines = refusals([C], provided);
    expect(lines).toContain(
      'GET /i (C.get): @Idempotent on GET: a GET is idempotent already (a retry cannot do anything twice): take @Idempotent off',
    );
    expect(lines.filter((l) => l.includes('idempotent already'))).toHaveLength(3);
  });

  it('REF-44 @Idempotent given something other than a Space declaration says what was passed and what it takes', () => {
    const opened = Orders.open(new MemoryStore({ bytes: 1 << 16 }));
    @Controller('/k')
    class C {
      @Post('/a') @Idempotent(opened) @Returns(Booking) a() {
        return { id: 1 };
      }
      @Post('/b') @Idempotent(Booking) @Returns(Booking) b() {
        return { id: 1 };
      }
    }
    expect(refusals([C], (app) => app.provide(opened))).toEqual([
      `POST /k/a (C.a): @Idempotent was given the opened space "orders" (Space.open(store) gives what app.provide takes); it takes the Space declaration (const Orders = Space('orders', { … }); @Idempotent(Orders)) and the opened space is provided (app.provide(Orders.open(store)))`,
      `POST /k/b (C.b): @Idempotent was given the class Booking; it takes the Space declaration (const Orders = Space('orders', { … }); @Idempotent(Orders)) and the opened space is provided (app.provide(Orders.open(store)))`,
    ]);
  });
});

describe('Refusals: path parameters', () => {
  it('a path naming its parameter as :id (Express style) is refused saying fw writes {id}, with the corrected path', () => {
    @Controller('/orders')
    class C {
      @Get(':id') @Returns(Booking) one(@Param('id') id: number) {
        return { id };
      }
      @Get('/:shop/items/:sku') @Returns(Booking) item(@Param('sku') sku: string) {
        return { id: sku.length };
      }
    }
    expect(refusals([C])).toEqual([
      "GET /orders/:id (C.one): @Param('id') names no {id} segment of the path: fw writes path parameters as {id}, not :id (the route's path is then /orders/{id})",
      "GET /orders/:shop/items/:sku (C.item): @Param('sku') names no {sku} segment of the path: fw writes path parameters as {sku}, not :sku (the route's path is then /orders/{shop}/items/{sku})",
    ]);
  });
});

describe('Refusals: what a controller is built from', () => {
  it('REF-33 a controller constructor parameter that is not provided is refused even when every handler is fine', () => {
    class Db {}
    @Controller('/c')
    class C {
      constructor(readonly db: Db) {}
      @Get() @Returns(Booking) one() {
        return { id: 1 };
      }
    }
    expect(refusals([C])).toEqual([
      'C: constructor parameter 0 (Db) is not provided: pass an instance to app.provide(), or take it out of the constructor',
    ]);
  });

  it('REF-41 missing decorator metadata (esbuild, tsx, swc) is refused once, saying so and how to fix it', () => {
    class Db {}
    @Controller('/m')
    class C {
      constructor(readonly db: Db) {}
      @Get('/{id}') @Returns(Booking) one(@Param('id') id: number) {
        return { id };
      }
      @Post() @Returns(Booking) two(c: Ctx) {
        return { id: c.path.length };
      }
    }
    @Controller('/m2')
    class D {
      @Get() @Returns(Booking) three(c: Ctx) {
        return { id: c.path.length };
      }
    }
    // What a compiler that does not write TypeScript's design metadata leaves behind.
    for (const [target, key] of [
      [C.prototype, 'one'],
      [C.prototype, 'two'],
      [D.prototype, 'three'],
    ] as const)
      Reflect.deleteMetadata('design:paramtypes', target, key);
    Reflect.deleteMetadata('design:paramtypes', C);
    expect(refusals([C, D])).toEqual([
      `decorator metadata is missing (no design:paramtypes on C's constructor, C.one, C.two and 1 more): fw reads parameter types from it. Compile with tsc or ts-jest and "experimentalDecorators": true, "emitDecoratorMetadata": true in tsconfig.json; esbuild and tsx do not write it, nor does vitest on Vite 7 or older (esbuild: add unplugin-swc) or swc without its decoratorMetadata option; vitest on Vite 8 (Oxc) writes it from tsconfig.json`,
    ]);
  });

  it('REF-42 a parameter whose type was erased (import type { Ctx }) is refused saying so, not "(Function) is not provided"', () => {
    @Controller('/e')
    class C {
      @Get() @Returns(Booking) one(c: CtxType) {
        return { id: c.path.length };
      }
    }
    const [line] = refusals([C]);
    expect(line).toMatch(
      /^GET \/e \(C\.one\): parameter 0 has no type at run time \(TypeScript wrote (Object|Function)\): a type imported with `import type` \(or an interface or a union\) leaves nothing to look up: import the class itself \(`import \{ Ctx \} from 'fw-http'`, not `import type`\), or decorate the parameter/,
    );
  });
});

describe('Refusals: static and embedded trees join the route Refusals (REF-01)', () => {
  it('REF-01 REF-29 REF-30 REF-31 a missing directory, a path listed twice, a spaFallback naming no entry and a route problem: one RefusalError', () => {
    @Controller('/t')
    class C {
      @Get() @Returns(Status(42, Booking)) one() {
        return { id: 1 };
      }
    }
    const missing = join(mkdtempSync(join(tmpdir(), 'fw-ref-')), 'gone');
    const lines = refusals([C], (app) =>
      app
        .static('/files', missing)
        .embedded('/a', [
          { path: 'index.html', bytes: 'a' },
          { path: 'index.html', bytes: 'b' },
        ])
        .embedded('/b', [{ path: 'index.html', bytes: 'b' }], { spaFallback: 'app.html' })
        .provide(Dir.open(missing)),
    );
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^GET \/t \(C\.one\): Status\(42, …\)/);
    expect(lines).toContain('embedded /a: path "index.html" is listed twice: list each path once');
    expect(lines).toContain(
      'embedded /b: spaFallback "app.html" names no file of the tree: name one of its files (index.html, say) or leave spaFallback out',
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^static \/files: directory ".*gone" .* cannot be opened: ENOENT/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^Dir\.open: directory ".*gone" .* cannot be opened: ENOENT/),
    );
  });
});

describe('Refusals: configuration after the first build', () => {
  @Controller('/late')
  class C {
    @Get() @Returns(Booking) one() {
      return { id: 1 };
    }
  }
  const calls: [string, (app: App) => unknown][] = [
    ['use', (app) => app.use(async (_c, next) => next())],
    ['failures', (app) => app.failures({ failure: (status) => ({ status }) })],
    ['provide', (app) => app.provide({})],
    ['controllers', (app) => app.controllers(C)],
    ['static', (app) => app.static('/s', 'public')],
    ['static', (app) => app.staticWith('/s', 'public', {})],
    ['embedded', (app) => app.embedded('/e', [])],
    ['health', (app) => app.health()],
    ['openapi', (app) => app.openapi()],
    ['docs', (app) => app.docs()],
    ['compress', (app) => app.compress()],
    ['sessions', (app) => app.sessions({ sessionSecret: 'x'.repeat(32) })],
  ];
  const builders: [string, (app: App) => unknown][] = [
    ['build()', (app) => app.build()],
    ['inject()', (app) => app.inject({ url: '/late' })],
    ['document()', (app) => app.document()],
    ['server', (app) => app.server],
  ];
  it.each(builders)(
    'REF-39 after %s every configuring call throws, naming the call',
    async (_, builds) => {
      const app = new App({ log: () => {} }).controllers(C);
      await builds(app);
      for (const [name, call] of calls)
        expect(() => call(app)).toThrow(
          `app.${name}() called after the app was built (by build(), inject(), document(), listen() or server): configure the app before any of those`,
        );
      await app.close();
    },
  );

  it('REF-39 a failed build does not seal the app: it can be mended and built again', () => {
    class Db {}
    @Controller('/m')
    class M {
      constructor(readonly db: Db) {}
      @Get() @Returns(Booking) one() {
        return { id: 1 };
      }
    }
    const app = new App({ log: () => {} }).controllers(M);
    expect(() => app.build()).toThrow(RefusalError);
    expect(() => app.provide(new Db()).build()).not.toThrow();
  });
});

describe('provided clients start with the app', () => {
  let upstream: Server;
  let base: string;
  beforeAll(async () => {
    upstream = createServer((_req, res) => res.end('{"n":7}'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

  it('a route calling out through a provided Target works under build() + inject, and close() stops its client', async () => {
    @Controller('/out')
    class C {
      constructor(readonly target: OpenTarget) {}
      @Get() @Returns(Object) async call(c: Ctx) {
        const res = await this.target.get(c, '/n');
        return { upstream: res.status };
      }
    }
    const client = new Client();
    const app = new App({ log: () => {} })
      .controllers(C)
      .provide(Target('up').open(client, { base }))
      .build();
    const res = await app.inject({ url: '/out' });
    expect([res.status, res.json()]).toEqual([200, { upstream: 200 }]);
    expect(client.started).toBe(true);
    await app.close();
    expect(client.started).toBe(false);
  });
});

describe('an app with no routes', () => {
  it('builds (middleware alone may answer) but says so in the log; an app with a route or a built-in route does not', async () => {
    const lines: string[] = [];
    const empty = new App({ log: (l) => lines.push(l) }).build();
    expect((await empty.inject({ url: '/anything' })).status).toBe(404);
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.includes('the app has no routes'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('the app has no routes'))).toContain('"level":40');

    const quiet: string[] = [];
    @Controller()
    class One {
      @Get('/one') one() {}
    }
    new App({ log: (l) => quiet.push(l) }).controllers(One).build();
    new App({ log: (l) => quiet.push(l) }).health().build();
    await new Promise((r) => setImmediate(r));
    expect(quiet.some((l) => l.includes('no routes'))).toBe(false);
  });
});
