import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import pino from 'pino';
import {
  App,
  Controller,
  Ctx,
  Get,
  Param,
  Returns,
  fail,
  type Finished,
  type Middleware,
} from 'fw-http';

// Around the handler: hooks before the head and after the answer, c.route, c.log.

/** The guide's Server-Timing middleware: the time spent until the head goes out, on every answer. */
const serverTiming: Middleware = async (c, next) => {
  c.beforeHead(() => {
    c.setHeader('server-timing', `app;dur=${(performance.now() - c.startedAt).toFixed(1)}`);
  });
  await next();
};

@Controller('/items')
class ItemsController {
  @Get('/{id}')
  @Returns(Object)
  one(@Param('id') id: string, c: Ctx) {
    c.log.info({ id }, 'looking up');
    if (id === 'missing') throw fail.notFound('no item %s', id);
    return { id };
  }

  @Get('/stream/it')
  stream(c: Ctx): void {
    const out = c.stream(200, 'text/plain');
    void out.write('a').then(() => out.end());
  }
}

describe('around the handler', () => {
  it('a Server-Timing middleware sets its header on answers, failures, 404s and streams, and reads the status', async () => {
    const seen: number[] = [];
    const app = new App({ log: () => {} })
      .use(serverTiming)
      .use(async (c, next) => {
        c.beforeHead((status) => seen.push(status));
        await next();
      })
      .controllers(ItemsController);
    const { url } = await app.listen({ port: 0 });
    try {
      for (const [path, status] of [
        ['/items/1', 200],
        ['/items/missing', 404],
        ['/nowhere', 404],
        ['/items/stream/it', 200],
      ] as const) {
        const res = await fetch(url + path);
        expect([path, res.status]).toEqual([path, status]);
        expect(res.headers.get('server-timing')).toMatch(/^app;dur=\d+\.\d$/);
        await res.text();
      }
      expect(seen).toEqual([200, 404, 404, 200]);
    } finally {
      await app.close();
    }
  });

  it('a beforeHead hook that throws is logged and the answer still goes out', async () => {
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(l) })
      .use(async (c, next) => {
        c.beforeHead(() => c.setHeader('content-length', '1'));
        await next();
      })
      .controllers(ItemsController);
    const res = await app.inject({ url: '/items/2' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ id: '2' });
    await app.close(); // flushes the batched log lines
    expect(lines.some((l) => l.includes('a beforeHead hook failed'))).toBe(true);
  });

  it('a finished hook gets the final status and the duration once the answer is over', async () => {
    const done: Finished[] = [];
    const app = new App({ log: () => {} })
      .use(async (c, next) => {
        c.onFinished((f) => done.push(f));
        await next();
      })
      .controllers(ItemsController);
    const { url } = await app.listen({ port: 0 });
    try {
      await (await fetch(`${url}/items/3`)).text();
      await (await fetch(`${url}/items/missing`)).text();
      for (let i = 0; i < 100 && done.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(done.map((f) => [f.status, f.completed])).toEqual([
        [200, true],
        [404, true],
      ]);
      for (const f of done) expect(f.durationMs).toBeGreaterThanOrEqual(0);
    } finally {
      await app.close();
    }
  });

  it('middleware sees c.route (template, controller, method) before next(), null where no route answers', async () => {
    const routes: unknown[] = [];
    const app = new App({ log: () => {} })
      .use(async (c, next) => {
        routes.push(
          c.route && {
            template: c.route.template,
            controller: c.route.controller,
            method: c.route.method,
          },
        );
        await next();
      })
      .controllers(ItemsController);
    await app.inject({ url: '/items/7' });
    await app.inject({ url: '/elsewhere' });
    expect(routes).toEqual([
      { template: '/items/{id}', controller: 'ItemsController', method: 'one' },
      null,
    ]);
  });

  it('c.log writes through the app logger (pino) with the request id', async () => {
    const out: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk.toString());
        cb();
      },
    });
    const app = new App({ logger: pino({ level: 'info' }, sink) }).controllers(ItemsController);
    await app.inject({ url: '/items/9', headers: { 'x-request-id': 'req-abc-123' } });
    const line = out
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'looking up');
    expect(line).toMatchObject({ level: 30, reqId: 'req-abc-123', id: '9', msg: 'looking up' });
  });
});
