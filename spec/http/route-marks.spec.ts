import { App, Controller, Ctx, Get, Idempotent, Post, RateLimit, Returns } from 'fw-http';
import { IDEMPOTENT, RATE, type RouteRecord } from 'fw-http/capabilities';
import { UPGRADE, WebSocketRoute } from 'fw-http/ws';
import { MemoryStore, Space } from 'fw-http/cache';
import { markRoute } from '../../lib/http/route/decorators';
import { MarkKey, RouteMarks } from '../../lib/http/route/mark-key';
import { scan } from '../../lib/http/pipeline/scanner';
import type { Services } from '../../lib/http/route/extensions';

// Each capability owns its mark: its decorator leaves it under the capability's key, the scanner
// carries every mark into the route record without knowing any, and the capability reads its own
// back with record.marks.get(KEY). Built-in routes carry none.

const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });
const byCaller = (c: Ctx) => c.header('x-caller');

@Controller('/orders')
class MarkedController {
  @Returns(String)
  @Post()
  @Idempotent(Orders, { by: byCaller })
  @RateLimit({ max: 5, perSeconds: 10 })
  create() {
    return 'made';
  }

  @Returns(String)
  @Get()
  list() {
    return 'all';
  }

  @WebSocketRoute('/feed', { origins: ['https://shop.example'], maxMessageBytes: 1024 })
  feed(c: Ctx) {
    c.upgrade(async () => {}, null);
  }
}

const store = new MemoryStore({ bytes: 1 << 20 });
const records = (app: App): Map<string, RouteRecord> =>
  new Map(app.build().routes.map((r) => [`${r.method} ${r.path}`, r]));

describe('route marks', () => {
  it('a capability reads its mark through its own key', () => {
    const app = new App({ log: () => {} })
      .controllers(MarkedController)
      .provide(Orders.open(store));
    const routes = records(app);

    const create = routes.get('POST /orders')!;
    expect(create.marks.get(IDEMPOTENT)).toEqual({ space: Orders, by: byCaller });
    expect(create.marks.get(RATE)).toEqual({ max: 5, perSeconds: 10 });
    expect(create.marks.get(UPGRADE)).toBeUndefined();
    expect(new Set(create.marks.keys())).toEqual(new Set([IDEMPOTENT, RATE]));

    const feed = routes.get('GET /orders/feed')!;
    expect(feed.marks.get(UPGRADE)).toEqual({
      origins: ['https://shop.example'],
      maxMessageBytes: 1024,
      pingIntervalMs: undefined,
      idleTimeoutMs: undefined,
    });
    expect(feed.marks.has(IDEMPOTENT)).toBe(false);

    const list = routes.get('GET /orders')!;
    expect(list.marks.size).toBe(0);
    expect(list.marks).toBe(RouteMarks.NONE);
  });

  it('the marks are read once, at build, into a frozen record', () => {
    const app = new App({ log: () => {} })
      .controllers(MarkedController)
      .provide(Orders.open(store));
    const create = records(app).get('POST /orders')!;
    expect(Object.isFrozen(create)).toBe(true);
    expect(Object.isFrozen(create.marks)).toBe(true);
    for (const field of ['idempotent', 'upgrade', 'rate']) expect(create).not.toHaveProperty(field);
  });

  it("a new capability's mark reaches the record through its key, with nothing in the scanner to change", () => {
    interface AuditMark {
      readonly topic: string;
    }
    const AUDIT = new MarkKey<AuditMark>('audit');
    const Audited = (topic: string): MethodDecorator => markRoute(AUDIT, { topic });

    @Controller()
    class AuditedController {
      @Returns(String)
      @Post('/pay')
      @Audited('payments')
      pay() {
        return 'paid';
      }
    }
    const none: Services = { get: () => undefined, has: () => false, of: () => [], all: () => [] };
    const problems: string[] = [];
    const {
      records: [pay],
    } = scan([AuditedController], none, [], problems);
    expect(problems).toEqual([]);
    expect(pay.marks.get(AUDIT)).toEqual({ topic: 'payments' });
    expect(pay.marks.get(IDEMPOTENT)).toBeUndefined();
    // Keys compare by identity, never by name.
    expect(pay.marks.get(new MarkKey<AuditMark>('audit'))).toBeUndefined();
    expect(String(AUDIT)).toBe('MarkKey(audit)');
  });

  it('a second mark under the same key replaces the first: the outermost decorator wins', () => {
    @Controller()
    class Twice {
      @Returns(String)
      @Post('/twice')
      @RateLimit({ max: 1, perSeconds: 1 })
      @RateLimit({ max: 2, perSeconds: 2 })
      twice() {
        return 'ok';
      }
    }
    const route = new App({ log: () => {} }).controllers(Twice).build().routes[0];
    expect(route.marks.get(RATE)).toEqual({ max: 1, perSeconds: 1 });
  });

  it('built-in routes (health, openapi.json, the docs page) come from one factory and carry no capability marks', () => {
    const app = new App({ log: () => {} })
      .controllers(MarkedController)
      .provide(Orders.open(store))
      .health()
      .openapi()
      .docs();
    const builtIns = app.build().routes.filter((r) => r.builtIn);
    expect(builtIns.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/openapi.json',
        '/docs',
        '/docs/init.js',
        '/docs/swagger-ui.css',
      ]),
    );
    for (const r of builtIns) {
      expect(r.marks.size).toBe(0);
      expect(r.marks.get(IDEMPOTENT)).toBeUndefined();
      expect(r.marks.get(RATE)).toBeUndefined();
      expect(r.marks.get(UPGRADE)).toBeUndefined();
      expect(r.method).toBe('GET');
      expect(r.label).toBe(`GET ${r.path} (${r.operationId})`);
      expect(Object.isFrozen(r)).toBe(true);
      expect(Object.isFrozen(r.args)).toBe(true);
    }
    const health = builtIns.find((r) => r.path === '/healthz')!;
    expect(health).toMatchObject({
      operationId: 'health',
      tag: 'health',
      key: 'check',
      failures: [503],
      args: [{ kind: 'ctx' }],
    });
    expect(builtIns.find((r) => r.path === '/openapi.json')).toMatchObject({
      operationId: 'openapi',
      tag: 'openapi',
      key: 'answer',
      summary: undefined,
    });
  });
});
