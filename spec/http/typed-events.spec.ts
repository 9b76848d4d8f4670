import { request, type IncomingMessage } from 'node:http';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { z } from 'zod';
import { App, Controller, Ctx, EventStream, Get, Query, RefusalError, Returns } from 'fw-http';

class Tick {
  @IsInt() n!: number;
  @IsOptional() @IsString() note?: string;
}

/** A row as a database gives it: more fields than the event declares. */
const row = (n: number) => Object.assign(new Tick(), { n, secret: `hidden-${n}` });

class CountQuery {
  @IsOptional() @IsInt() count?: number;
}

let finished: Promise<string> | null = null;
let markFinished: ((how: string) => void) | null = null;

@Controller()
class TicksController {
  @Get('/ticks')
  @Returns(EventStream.of(Tick))
  async *ticks(@Query() q: CountQuery): AsyncGenerator<Tick> {
    for (let n = 1; n <= (q.count ?? 3); n++) yield row(n);
  }

  @Get('/named')
  @Returns(EventStream.of(Tick, { event: 'tick', ids: true }))
  async *named(): AsyncGenerator<{ id: string; data: Tick }> {
    yield { id: '7', data: row(1) };
    yield { id: '8', data: row(2) };
  }

  @Get('/array')
  @Returns(EventStream.of(Tick))
  array(): Tick[] {
    return [row(1), row(2)];
  }

  @Get('/zod')
  @Returns(EventStream.of(z.object({ n: z.number().int() })))
  async *zod(): AsyncGenerator<{ n: number }> {
    yield { n: 1, extra: true } as { n: number };
  }

  @Get('/mismatch')
  @Returns(EventStream.of(Tick))
  async *mismatch(): AsyncGenerator<Tick> {
    yield row(1);
    yield { n: 'two' } as unknown as Tick;
  }

  @Get('/endless')
  @Returns(EventStream.of(Tick))
  async *endless(c: Ctx): AsyncGenerator<Tick> {
    let n = 0;
    try {
      for (;;) {
        yield row(++n);
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      markFinished?.(c.sent ? 'finally ran' : 'never started');
    }
  }

  @Get('/not-iterable')
  @Returns(EventStream.of(Tick))
  notIterable(): AsyncGenerator<Tick> {
    return 42 as unknown as AsyncGenerator<Tick>;
  }
}

function get(port: number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    request({ port, path }, resolve).on('error', reject).end(),
  );
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

describe('EventStream.of(T): typed event streams', () => {
  const errors: string[] = [];
  const app = new App({ log: () => {} })
    .controllers(TicksController)
    .onError((e) => void errors.push((e as { code?: string }).code ?? String(e)));
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('sends each yielded value as one data: line written by its declared writer (only declared fields)', async () => {
    const res = await get(port, '/ticks');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await readAll(res)).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n');
  });

  it('sends the declared event type on every event and, under ids, each item’s id', async () => {
    const res = await get(port, '/named');
    expect(await readAll(res)).toBe(
      'event: tick\nid: 7\ndata: {"n":1}\n\nevent: tick\nid: 8\ndata: {"n":2}\n\n',
    );
  });

  it('takes a plain iterable (an array) as the events too', async () => {
    expect(await readAll(await get(port, '/array'))).toBe('data: {"n":1}\n\ndata: {"n":2}\n\n');
  });

  it("writes a Standard Schema's output (keys it does not declare are left out)", async () => {
    expect(await readAll(await get(port, '/zod'))).toBe('data: {"n":1}\n\n');
  });

  it('an event that does not fit its declaration cuts the stream after the events sent, and is logged', async () => {
    const res = await get(port, '/mismatch');
    let text = '';
    const cut = await new Promise<boolean>((resolve) => {
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(false));
      res.on('error', () => resolve(true));
      res.on('aborted', () => resolve(true));
    });
    expect(cut).toBe(true);
    expect(text).toBe('data: {"n":1}\n\n');
    expect(errors).toContain('AnswerMismatch');
  });

  it('a client that leaves ends the iteration: the generator’s finally runs', async () => {
    finished = new Promise((resolve) => (markFinished = resolve));
    const res = await get(port, '/endless');
    await new Promise<void>((resolve) => res.once('data', () => resolve()));
    res.destroy();
    expect(await finished).toBe('finally ran');
  });

  it('a handler that returns no iterable answers 500 UndeclaredAnswer', async () => {
    const res = await app.inject({ url: '/not-iterable' });
    expect(res.status).toBe(500);
    expect(errors).toContain('UndeclaredAnswer');
  });

  it('describes each event with an OpenAPI 3.2 itemSchema: data is JSON text whose contentSchema is the type', () => {
    const doc = app.document();
    expect(doc.openapi).toBe('3.2.0');
    const content = (path: string) =>
      (doc.paths[path]!.get as { responses: Record<string, { content: Record<string, unknown> }> })
        .responses['200']!.content;
    const tickSchema = {
      type: 'object',
      properties: { n: { type: 'integer' }, note: { type: ['string', 'null'] } },
      required: ['n'],
    };
    expect(content('/ticks')).toEqual({
      'text/event-stream': {
        itemSchema: {
          type: 'object',
          required: ['data'],
          properties: {
            data: {
              type: 'string',
              contentMediaType: 'application/json',
              contentSchema: tickSchema,
            },
          },
        },
      },
    });
    expect(content('/named')).toEqual({
      'text/event-stream': {
        itemSchema: {
          type: 'object',
          required: ['event', 'data', 'id'],
          properties: {
            event: { type: 'string', const: 'tick' },
            data: {
              type: 'string',
              contentMediaType: 'application/json',
              contentSchema: tickSchema,
            },
            id: { type: 'string' },
          },
        },
      },
    });
    const zod = content('/zod')['text/event-stream'] as {
      itemSchema: { properties: { data: { contentSchema: unknown } } };
    };
    expect(zod.itemSchema.properties.data.contentSchema).toEqual({
      $ref: '#/components/schemas/TicksController.zod.Event',
    });
  });
});

describe('EventStream refusals', () => {
  it('refuses data that is not a class or a Standard Schema, and an event type that is not one line', () => {
    @Controller()
    class Bad {
      @Get('/text') @Returns(EventStream.of(String)) *text(): Generator<string> {
        yield 'x';
      }
      @Get('/two-lines') @Returns(EventStream.of(Tick, { event: 'a\nb' })) *two(): Generator<Tick> {
        yield row(1);
      }
    }
    const build = () => new App({ log: () => {} }).controllers(Bad).build();
    expect(build).toThrow(RefusalError);
    expect(build).toThrow(
      "GET /text (Bad.text): EventStream.of takes a class or a Standard Schema for each event's data (JSON), not a text contract",
    );
    expect(build).toThrow(
      'GET /two-lines (Bad.two): EventStream.of({ event: "a\\nb" }): an event type is a non-empty line',
    );
  });

  it('a typed stream needs no Ctx parameter; an untyped one still does', () => {
    @Controller()
    class Untyped {
      @Get('/u') @Returns(EventStream) u(): void {}
    }
    expect(() => new App({ log: () => {} }).controllers(Untyped).build()).toThrow(
      'GET /u (Untyped.u): @Returns(EventStream) answers through c.events(): take a Ctx parameter',
    );
  });
});
