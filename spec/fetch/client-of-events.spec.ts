import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { App, Controller, EventStream, Get, Query, Returns, Run } from 'fw-http';
import {
  Client,
  FetchError,
  Target,
  clientOf,
  type ClientDocument,
  type OpenTarget,
} from 'fw-http/fetch';
import type { LiveController } from '../../sample/shop/live-controller';
import { shop } from '../../sample/shop/shop';

// The typed client reads a typed event stream (`EventStream.of(T)`) as an async iterable of T,
// over real sockets: against the sample's GET /events, a small app of its own, and a raw server
// that frames events as other servers do.

const run = new Run();

class Note {
  @IsInt() n!: number;
}

class Count {
  @IsOptional() @IsInt() @Min(0) @Max(1000) count?: number;
}

let closedEarly: (() => void) | null = null;

@Controller('/notes')
class NotesController {
  @Get('/ids')
  @Returns(EventStream.of(Note, { ids: true, event: 'note' }))
  async *ids(): AsyncGenerator<{ id: string; data: Note }> {
    yield { id: 'a', data: Object.assign(new Note(), { n: 1 }) };
    yield { id: 'b', data: Object.assign(new Note(), { n: 2 }) };
  }

  @Get('/many')
  @Returns(EventStream.of(Note))
  async *many(@Query() q: Count): AsyncGenerator<Note> {
    // Endless unless asked for a count: only a client that leaves ends it.
    try {
      for (let n = 1; n <= (q.count ?? Infinity); n++) {
        yield Object.assign(new Note(), { n });
        await new Promise((r) => setTimeout(r, 2));
      }
    } finally {
      closedEarly?.();
    }
  }
}

describe('the typed client reads a typed event stream', () => {
  let app: App;
  let notes: App;
  let client: Client;
  let shopTarget: OpenTarget;
  let notesTarget: OpenTarget;

  beforeAll(async () => {
    app = shop({ log: () => {}, openapiOut: null });
    notes = new App({ log: () => {} }).controllers(NotesController);
    client = new Client();
    client.start();
    shopTarget = Target('shop').open(client, { base: (await app.listen({ port: 0 })).url });
    notesTarget = Target('notes').open(client, { base: (await notes.listen({ port: 0 })).url });
  });
  afterAll(async () => {
    await client.close();
    await app.close();
    await notes.close();
  });

  it("GET /events of the sample: an async iterable of Tick ({ n }), typed from the handler's own declaration", async () => {
    const live = clientOf<LiveController>(shopTarget, {
      document: app.document(),
      controller: 'LiveController',
    });
    const r = await live.events(run, { count: 4 });
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    expect(r.response.header('content-type')).toBe('text/event-stream');
    const got: number[] = [];
    for await (const tick of r.value) {
      // @ts-expect-error a Tick declares n only
      void tick.m;
      got.push(tick.n);
    }
    expect(got).toEqual([1, 2, 3, 4]);
  });

  it('a refused request is a failure read whole, as for any call', async () => {
    const live = clientOf<LiveController>(shopTarget, {
      document: app.document(),
      controller: 'LiveController',
    });
    const r = await live.events(run, { count: 0 });
    expect(r.status).toBe(400);
    expect(r.failure?.error).toContain('count');
  });

  it('under ids, each item is { id, data }', async () => {
    const c = clientOf<NotesController>(notesTarget, {
      document: notes.document(),
      controller: 'NotesController',
    });
    const r = await c.ids(run);
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    const got: { id: string; data: Note }[] = [];
    for await (const item of r.value) got.push(item);
    expect(got).toEqual([
      { id: 'a', data: { n: 1 } },
      { id: 'b', data: { n: 2 } },
    ]);
  });

  it('leaving the loop early closes the connection: the server’s generator ends', async () => {
    const c = clientOf<NotesController>(notesTarget, {
      document: notes.document(),
      controller: 'NotesController',
    });
    const ended = new Promise<void>((resolve) => (closedEarly = resolve));
    const r = await c.many(run, {});
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    for await (const note of r.value) if (note.n === 2) break;
    await ended;
  });

  it('return() before the first event also closes it', async () => {
    const c = clientOf<NotesController>(notesTarget, {
      document: notes.document(),
      controller: 'NotesController',
    });
    const ended = new Promise<void>((resolve) => (closedEarly = resolve));
    const r = await c.many(run, {});
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    await r.value.return!();
    await ended;
  });
});

describe('the typed client reads event streams as the HTML standard frames them', () => {
  let server: Server;
  let client: Client;
  let target: OpenTarget;
  let body: string[] = [];
  const document: ClientDocument = {
    paths: {
      '/raw': {
        get: {
          'x-fw-handler': {
            controller: 'Raw',
            method: 'raw',
            args: [],
            idempotent: false,
            answers: [200],
          },
          responses: {
            200: {
              content: {
                'text/event-stream': {
                  itemSchema: {
                    properties: { data: { type: 'string', contentMediaType: 'application/json' } },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
  interface Raw {
    raw(): AsyncGenerator<unknown>;
  }

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Each piece in its own write, after the last one left: split wherever the test says.
      const pieces = [...body];
      const next = () => {
        const piece = pieces.shift();
        if (piece === undefined) res.end();
        else res.write(piece, () => setTimeout(next, 5));
      };
      next();
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    client = new Client({ maxBody: 16 });
    client.start();
    target = Target('raw').open(client, {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
  });
  afterAll(async () => {
    await client.close();
    await new Promise((r) => server.close(r));
  });

  const read = async (): Promise<unknown[]> => {
    const r = await clientOf<Raw>(target, { document, controller: 'Raw' }).raw(run);
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    const got: unknown[] = [];
    for await (const x of r.value as AsyncIterable<unknown>) got.push(x);
    return got;
  };

  it('joins data lines, skips comments and events without data, takes CRLF split across writes, and a JSON null', async () => {
    body = [
      ': hello\n\n',
      'data: [1,\ndata: 2]\n\n',
      'event: x\n\n',
      'data: 3\r',
      '\n\r\n',
      'data:null\n\n',
    ];
    expect(await read()).toEqual([[1, 2], 3, null]);
  });

  it('an event of maxBody bytes is read; one byte more is BodyTooLarge', async () => {
    // "[1111111111111]" is 15 bytes, and the line's end counts: 16.
    body = ['data: [1111111111111]\n\n'];
    expect(await read()).toEqual([[1111111111111]]);
    body = ['data: [11111111111111]\n\n'];
    const err = await read().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).code).toBe('BodyTooLarge');
  });

  it('a line that never ends is bounded too', async () => {
    body = ['data: "', 'x'.repeat(10), 'x'.repeat(10)];
    const err = await read().then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as FetchError).code).toBe('BodyTooLarge');
  });
});
