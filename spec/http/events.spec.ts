import { request, type IncomingMessage } from 'node:http';
import { MemoryStore, Space } from 'fw-http/cache';
import {
  App,
  Controller,
  Ctx,
  EventStream,
  Get,
  Idempotent,
  Post,
  RefusalError,
  Returns,
  Status,
  Versioned,
} from 'fw-http';
import { WebSocketRoute } from 'fw-http/ws';

let release: (() => void) | null = null;
let gone: Promise<string> | null = null;

@Controller()
class EventsController {
  @Get('/three') async three(c: Ctx) {
    const events = c.events();
    await events.send({ data: { n: 1 } });
    await events.send({ event: 'note', id: '7', data: 'line one\nline two' });
    await events.comment('keep-alive');
    await events.send({ data: 'x'.repeat(2000) });
    events.close();
  }
  @Get('/gated') async gated(c: Ctx) {
    const events = c.events();
    await events.send({ data: 'first' });
    await new Promise<void>((resolve) => (release = resolve));
    await events.send({ data: 'second' });
    events.close();
  }
  @Get('/forever') async forever(c: Ctx) {
    const events = c.events();
    gone = (async () => {
      try {
        for (;;) {
          await events.send({ data: 'tick' });
          await new Promise((r) => setTimeout(r, 10));
        }
      } catch (e) {
        return (e as Error).message;
      }
    })();
    await events.closed;
  }
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    request({ port, path, headers }, resolve).on('error', reject).end(),
  );
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

describe('events', () => {
  const app = new App({ log: () => {} }).controllers(EventsController).compress({ minBytes: 1 });
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('EVENTS-01 c.events() turns the answer into a text/event-stream with event:, id: and data: lines (OPEN-05)', async () => {
    const res = await get(port, '/three');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache');
    const body = await readAll(res);
    expect(body).toBe(
      `data: {"n":1}\n\nevent: note\nid: 7\ndata: line one\ndata: line two\n\n: keep-alive\n\ndata: ${'x'.repeat(2000)}\n\n`,
    );
  });

  it('EVENTS-02 each event reaches the client when it is sent: the first arrives before the second is written', async () => {
    release = null;
    const res = await get(port, '/gated');
    const first = await new Promise<string>((resolve) =>
      res.once('data', (chunk: Buffer) => resolve(chunk.toString())),
    );
    expect(first).toBe('data: first\n\n');
    expect(release).not.toBeNull(); // the handler is still waiting: nothing else was sent
    release!();
    expect(await readAll(res)).toBe('data: second\n\n');
  });

  it('EVENTS-03 an event stream is never compressed, even with app.compress on and Accept-Encoding: gzip', async () => {
    const res = await get(port, '/three', { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(await readAll(res)).toContain('data: {"n":1}\n\n');
  });

  it('EVENTS-01 send() rejects (Canceled) once the client has gone away', async () => {
    gone = null;
    const res = await get(port, '/forever');
    await new Promise((resolve) => res.once('data', resolve));
    res.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await gone).toMatch(/closed|went away/);
  });
});

describe('a declared event stream: @Returns(EventStream)', () => {
  @Controller()
  class Declared {
    @Get('/ticks') @Returns(EventStream) async ticks(c: Ctx): Promise<void> {
      const events = c.events();
      await events.send({ data: { n: 1 } });
      events.close();
    }
    @Get('/forgot') @Returns(EventStream) forgot(_c: Ctx): void {}
    @WebSocketRoute('/ws', { origins: '*' }) ws(c: Ctx): void {
      c.upgrade(() => undefined, null);
    }
  }
  const app = new App({ log: () => {} }).controllers(Declared);
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('EVENTS-01 streams as any c.events() route does', async () => {
    const res = await get(port, '/ticks');
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await readAll(res)).toBe('data: {"n":1}\n\n');
  });

  it('is described in the OpenAPI document as a 200 text/event-stream whose items (OpenAPI 3.2 itemSchema) carry event, data, id, retry', () => {
    const op = app.document().paths['/ticks'].get as { responses: Record<string, unknown> };
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200']));
    expect(op.responses['200']).toMatchObject({
      content: {
        'text/event-stream': {
          itemSchema: {
            type: 'object',
            required: ['data'],
            properties: {
              event: { type: 'string' },
              data: { type: 'string' },
              id: { type: 'string' },
              retry: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    });
    expect(JSON.stringify(op.responses['200'])).not.toContain('application/json');
  });

  it('a WebSocket route is described by its 101, 400 and 403 only, not by an inferred 200', () => {
    const op = app.document().paths['/ws'].get as { responses: Record<string, unknown> };
    expect(Object.keys(op.responses).sort()).toEqual(['101', '400', '403']);
  });

  it('a declared stream that never calls c.events() is a 500 naming the route (NotAnEventStream)', async () => {
    const lines: string[] = [];
    const logged = new App({ log: (l) => lines.push(l) }).controllers(Declared);
    const res = await logged.inject({ method: 'GET', url: '/forgot' });
    expect(res.status).toBe(500);
    await new Promise((r) => setImmediate(r)); // log lines leave once per turn of the event loop
    expect(lines.join('\n')).toContain(
      'GET /forgot (Declared.forgot): declared @Returns(EventStream) but finished without calling c.events()',
    );
  });

  it('is refused without a Ctx, inside Status or Versioned, and on an @Idempotent route', () => {
    const Kept = Space('kept', { ttlSeconds: 60, maxBytes: 1024 });
    @Controller()
    class Wrong {
      @Get('/a') @Returns(EventStream) noCtx(): void {}
      @Get('/b') @Returns(Status(201, EventStream)) wrapped(_c: Ctx) {
        return null as never; // refused before it runs
      }
      @Get('/c') @Returns(Versioned(EventStream)) versioned(_c: Ctx) {
        return null as never; // refused before it runs
      }
      @Post('/d') @Idempotent(Kept, { by: () => 'me' }) @Returns(EventStream) kept(_c: Ctx): void {}
    }
    let problems: readonly string[] = [];
    try {
      new App({ log: () => {} })
        .controllers(Wrong)
        .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
        .build();
    } catch (e) {
      problems = (e as RefusalError).problems;
    }
    expect(problems).toEqual(
      expect.arrayContaining([
        'GET /a (Wrong.noCtx): @Returns(EventStream) answers through c.events(): take a Ctx parameter',
        'GET /b (Wrong.wrapped): EventStream stands alone: c.events() always answers 200 (not inside Status)',
        'GET /c (Wrong.versioned): Versioned(EventStream) is refused: an event stream has no version',
        'POST /d (Wrong.kept): @Idempotent cannot keep an EventStream answer',
      ]),
    );
  });
});
