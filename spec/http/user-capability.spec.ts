import { App, Controller, fail, Get, Param, Post, RateLimit, RefusalError, Returns } from 'fw-http';
import { IsString } from 'class-validator';
import { Audit, AuditTrail } from '../../sample/audit/audit';

// The guide's user capability (sample/audit/audit.ts), run exactly as written, through the public
// `fw-http` door only: a mark, a step around the route, an OpenAPI extension, a Refusal and an
// app-level route, all added with `app.use(capability)`.

class Order {
  @IsString() readonly id: string;
  constructor(id: string) {
    this.id = id;
  }
}

@Controller('/orders')
class OrdersController {
  @Get('/{id}')
  @Returns(Order)
  one(@Param('id') id: string): Order {
    return new Order(id);
  }

  @Post('/{id}/cancel')
  @Audit('orders.cancel')
  @Returns(Order)
  async cancel(@Param('id') id: string): Promise<Order> {
    if (id === 'gone') throw fail.notFound('order %s', id);
    return new Order(id);
  }

  @Post('/{id}/refund')
  @Audit('orders.refund')
  @RateLimit({ max: 1, perSeconds: 3600 })
  refund(@Param('id') _id: string): void {}
}

const quiet = { log: () => {} };

describe('a capability of the program’s own (sample/audit/audit.ts), added with app.use', () => {
  const trail = new AuditTrail({ maxEntries: 2 });
  const app = new App(quiet).controllers(OrdersController).use(trail).openapi();
  let url = '';
  beforeAll(async () => {
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  /** Waits for the trail to hold `n` entries: an entry is written once its answer is over. */
  const entries = async (n: number) => {
    for (let i = 0; i < 200 && trail.entries.length < n; i++)
      await new Promise((r) => setTimeout(r, 10));
    return trail.entries;
  };

  it('records each answer of a marked route over a real socket, failures too, and not an unmarked one', async () => {
    const ok = await fetch(`${url}/orders/7/cancel`, { method: 'POST' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: '7' });
    expect((await fetch(`${url}/orders/7`)).status).toBe(200);
    const gone = await fetch(`${url}/orders/gone/cancel`, { method: 'POST' });
    expect(gone.status).toBe(404);
    const seen = await entries(2);
    expect(seen.map((e) => [e.action, e.status, e.route])).toEqual([
      ['orders.cancel', 200, 'POST /orders/{id}/cancel (OrdersController.cancel)'],
      ['orders.cancel', 404, 'POST /orders/{id}/cancel (OrdersController.cancel)'],
    ]);
    expect(seen[0]!.requestId).not.toBe(seen[1]!.requestId);
  });

  it('wraps inside fw’s own steps: a request the rate limit refuses never reaches it', async () => {
    expect((await fetch(`${url}/orders/1/refund`, { method: 'POST' })).status).toBe(204);
    for (let i = 0; i < 200 && trail.entries.at(-1)?.action !== 'orders.refund'; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await fetch(`${url}/orders/1/refund`, { method: 'POST' })).status).toBe(429);
    // The 429 was answered before the step; an entry would have been written with its answer.
    await new Promise((r) => setTimeout(r, 200));
    // maxEntries 2: the oldest (the 200 cancel) went first.
    expect(trail.entries.map((e) => [e.action, e.status])).toEqual([
      ['orders.cancel', 404],
      ['orders.refund', 204],
    ]);
  });

  it('registers an app-level route (GET /audit) listing the trail', async () => {
    const res = await fetch(`${url}/audit`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.at(-1)).toMatch(
      /^orders\.refund 204 \S+ POST \/orders\/\{id\}\/refund \(OrdersController\.refund\)$/,
    );
  });

  it('adds to the OpenAPI operation of marked routes only (x-audit, the audited tag)', () => {
    const paths = app.document().paths as Record<string, Record<string, Record<string, unknown>>>;
    const cancel = paths['/orders/{id}/cancel']!.post!;
    expect(cancel['x-audit']).toBe('orders.cancel');
    expect(cancel.tags).toEqual(['Orders', 'audited']);
    const one = paths['/orders/{id}']!.get!;
    expect(one['x-audit']).toBeUndefined();
    expect(one.tags).toEqual(['Orders']);
    expect(paths['/audit']!.get!.operationId).toBe('audit');
  });
});

describe('app.use(capability): its checks, its options and the app’s rules', () => {
  it('a bad @Audit action is a Refusal naming the route, with the app’s other problems', () => {
    @Controller('/x')
    class Bad {
      @Post() @Audit('Orders Cancel') cancel(): void {}
    }
    const app = new App(quiet).controllers(Bad).use(new AuditTrail());
    expect(() => app.build()).toThrow(RefusalError);
    expect(() => app.build()).toThrow(
      'POST /x (Bad.cancel): @Audit("Orders Cancel"): an action is lower-case words joined by dots (orders.cancel)',
    );
  });

  it('the same capability added twice is refused at the call, naming it', () => {
    const trail = new AuditTrail();
    const app = new App(quiet).use(trail);
    expect(() => app.use(trail)).toThrow(
      'app.use(): capability audit was already added to this app',
    );
  });

  it('a capability after build is refused like every configuring call (REF-39)', () => {
    const app = new App(quiet).controllers(OrdersController);
    app.build();
    expect(() => app.use(new AuditTrail())).toThrow(/app\.use\(\) called after the app was built/);
  });

  it('a capability class given for its instance is refused at the call, not at every request', () => {
    expect(() => new App(quiet).use(AuditTrail as never)).toThrow(
      'app.use(AuditTrail): a class, not middleware or a capability: give an instance (app.use(new AuditTrail()))',
    );
  });

  it('what is neither a function nor a capability object is refused at the call', () => {
    expect(() => new App(quiet).use(null as never)).toThrow(
      'app.use() takes a middleware function or a capability object, got null',
    );
  });
});
