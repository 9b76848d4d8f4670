import { App, Controller, Ctx, Get, Idempotent, Post, Returns, Status } from 'fw-http';
import { MarkKey, markRoute, type Capability } from 'fw-http/capabilities';
import { MemoryStore, Space } from 'fw-http/cache';

// The Ctx a handler gets is a public face: the engine's state of the request (the node objects,
// the answer being written or captured, routing results) sits behind it, out of a program's
// reach, and what fw's own features needed of it is public API any program may use.

const AUDIT = new MarkKey<string>('audit');
const Audit = (action: string) => markRoute(AUDIT, action);

/** An app-level value a resolver reads with `c.provided`. */
class Greeting {
  constructor(readonly word: string) {}
}

const Kept = Space('ctx-face', { ttlSeconds: 60, maxBytes: 4096 });

@Controller()
class FaceController {
  @Get('/own')
  @Returns(Object)
  own(c: Ctx) {
    return { own: Object.keys(c).sort() };
  }

  @Get('/assign')
  @Returns(Object)
  assign(c: Ctx) {
    const tried = (name: string): string => {
      try {
        (c as unknown as Record<string, unknown>)[name] = null;
        return 'assigned';
      } catch (e) {
        return (e as Error).name;
      }
    };
    return { idempotency: tried('idempotency'), route: tried('route') };
  }

  @Get('/engine')
  @Returns(String)
  engine(c: Ctx) {
    // What a handler could once reach: none of it is on the Ctx now.
    const loose = c as unknown as Record<string, unknown>;
    return ['req', 'res', 'core', 'capture', 'captured', 'write', 'writeFailure', 'head']
      .filter((name) => loose[name] !== undefined)
      .join(',');
  }

  @Get('/cookie')
  cookie(c: Ctx) {
    c.setCookie('theme', 'light');
    c.setCookie('lang', 'en');
    c.setCookie('theme', 'dark');
    c.empty(204);
  }

  @Get('/greet')
  @Returns(String)
  greet(c: Ctx) {
    return `${c.provided(Greeting)?.word ?? 'none'}, ${String(c.provided(Map))}`;
  }

  @Get('/audited')
  @Audit('read-orders')
  @Returns(String)
  audited() {
    return 'ok';
  }

  @Get('/resolving')
  @Returns(Object)
  resolving(c: Ctx) {
    const sync = c.resolving(Now);
    const async = c.resolving(Later);
    return {
      sync: sync instanceof Promise ? 'promise' : sync,
      async: async instanceof Promise ? 'promise' : async,
    };
  }

  @Post('/orders')
  @Idempotent(Kept, { by: () => 'one' })
  @Returns(Status(201, Object))
  order(c: Ctx) {
    return { key: c.idempotency!.key, token: c.idempotency!.token > 0n };
  }
}

class Now {
  static resolve(): string {
    return 'now';
  }
}
class Later {
  static async resolve(): Promise<string> {
    return 'later';
  }
}

/** A program's capability: what its register provides, a resolver reads; what its marks say, middleware reads. */
const greetings: Capability = {
  name: 'greetings',
  register: (host) => host.provide(new Greeting('hello')),
};

describe('the Ctx is a public face over private engine state', () => {
  const seen: string[] = [];
  const app = new App({ log: () => {} })
    .controllers(FaceController)
    .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
    .use(greetings)
    .use(async (c, next) => {
      const action = c.route?.marks.get(AUDIT);
      if (action !== undefined) seen.push(action);
      await next();
    });
  afterAll(() => app.close());

  it("a Ctx's own properties are only its public fields: no engine state is a property a handler can change", async () => {
    const res = await app.inject({ url: '/own' });
    expect(res.json()).toEqual({ own: ['method', 'path', 'rawQuery', 'startedAt'] });
    expect((await app.inject({ url: '/engine' })).body).toBe('');
  });

  it('c.idempotency and c.route are read-only: assigning either throws', async () => {
    const res = await app.inject({ url: '/assign' });
    expect(res.json()).toEqual({ idempotency: 'TypeError', route: 'TypeError' });
  });

  it('c.idempotency is the run of an idempotent route: its key and the token of the claim won', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': 'k-1' },
      body: {},
    });
    expect([res.status, res.json()]).toEqual([201, { key: 'k-1', token: true }]);
  });

  it('RFC 6265 §4.1.1: c.setCookie of a name set before on the answer replaces it (one Set-Cookie per name)', async () => {
    const res = await app.inject({ url: '/cookie' });
    expect(res.headers['set-cookie']).toEqual([
      'lang=en; Path=/; HttpOnly; SameSite=Lax',
      'theme=dark; Path=/; HttpOnly; SameSite=Lax',
    ]);
  });

  it("c.provided(type) is the app's one instance of type (a capability's host.provide included), else undefined", async () => {
    expect((await app.inject({ url: '/greet' })).body).toBe('hello, undefined');
  });

  it("c.route.marks are the route's marks: middleware reads a program's own decorator", async () => {
    seen.length = 0;
    await app.inject({ url: '/audited' });
    await app.inject({ url: '/own' });
    expect(seen).toEqual(['read-orders']);
  });

  it('c.resolving(T) is the value at once when its resolver is synchronous, else its promise', async () => {
    expect((await app.inject({ url: '/resolving' })).json()).toEqual({
      sync: 'now',
      async: 'promise',
    });
  });

  it("App carries none of its capabilities' host hooks: they are on the host a capability's register gets", () => {
    const loose = app as unknown as Record<string, unknown>;
    const hooks = [
      'addBuiltIn',
      'atBuild',
      'afterBuild',
      'addFallback',
      'compressAnswers',
      'useSessions',
      'capabilities',
    ];
    expect(hooks.filter((h) => loose[h] !== undefined)).toEqual([]);
  });
});

@Controller()
class LogController {
  @Get('/log')
  @Returns(Object)
  log(c: Ctx) {
    if (c.log.enabled('debug')) c.log.debug('costly line');
    c.log.text(`plain ${c.path}`);
    return { debug: c.log.enabled('debug'), info: c.log.enabled('info') };
  }
}

describe("the request's logger, as fw's own request log uses it", () => {
  it("c.log.enabled(level) says whether the app's level writes such a line; c.log.text(line) writes it as it is (at info)", async () => {
    const lines: string[] = [];
    const app = new App({ level: 'info', log: (l) => lines.push(l) }).controllers(LogController);
    const res = await app.inject({ url: '/log' });
    expect(res.json()).toEqual({ debug: false, info: true });
    await app.close();
    expect(lines).toContain('plain /log');
    expect(lines.some((l) => l.includes('costly line'))).toBe(false);
  });
});
