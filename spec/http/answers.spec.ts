import { request } from 'undici';
import {
  App,
  Bytes,
  Controller,
  Get,
  Optional,
  Param,
  Post,
  Redirect,
  Reply,
  Returns,
  Status,
  Versioned,
  headers,
  reply,
} from 'fw-http';

class Order {
  constructor(
    readonly id: string,
    readonly qty: number,
  ) {}
}

class Csv {
  static contentType = 'text/csv';
  constructor(readonly rows: string[][]) {}
  write(out: { write(chunk: string): void }) {
    for (const r of this.rows) out.write(r.join(',') + '\n');
  }
}

/** Every byte value, `times` times over. */
const ALL_BYTES = (times: number): Buffer =>
  Buffer.concat(
    Array.from({ length: times }, () => Buffer.from(Array.from({ length: 256 }, (_, i) => i))),
  );

@Controller()
class AnswersController {
  @Get('/json')
  @Returns(Order)
  json() {
    return new Order('o1', 2);
  }
  @Post('/created')
  @Returns(Status(201, Order))
  created() {
    return new Order('o2', 1);
  }
  @Get('/maybe/{id}')
  @Returns(Optional(Order))
  maybe(@Param('id') id: string) {
    return id === 'yes' ? new Order('yes', 1) : id === 'undef' ? undefined : null;
  }
  @Get('/reply')
  @Returns(Reply(Order, { statuses: [200, 202] }))
  reply() {
    return reply(202, new Order('r', 1), headers.of([{ name: 'X-Queue', value: '3' }]));
  }
  @Post('/reply-object')
  @Returns(Reply({ 201: Order, 409: String }))
  replyObject() {
    return reply(201, new Order('p', 1), { Location: '/orders/p', 'Cache-Control': 'no-store' });
  }
  @Post('/reply-literal')
  @Returns(Reply({ 201: Order }))
  replyLiteral() {
    return { status: 201 as const, value: new Order('l', 1), headers: { Location: '/orders/l' } };
  }
  @Get('/reply-smuggled/{how}')
  @Returns(Reply(Order))
  replySmuggled(@Param('how') how: string) {
    const smuggled: Record<string, unknown> = {
      array: [{ name: 'Location', value: '/x' }],
      number: { 'X-Count': 3 },
      nine: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`x-h${i}`, 'v'])),
    };
    return { status: 200 as const, value: new Order('s', 1), headers: smuggled[how] as never };
  }
  @Post('/nothing')
  nothing(): void {}
  @Get('/text')
  @Returns(String)
  text() {
    return 'hello';
  }
  @Get('/bytes')
  @Returns(Bytes)
  bytes() {
    return new Bytes(
      Buffer.from([0xff, 0x00, 0xfe]),
      'image/x-test',
      headers.of([{ name: 'Content-Disposition', value: 'attachment; filename="x.bin"' }]),
    );
  }
  @Get('/all-bytes/{times}')
  @Returns(Bytes)
  allBytes(@Param('times') times: number) {
    return new Bytes(ALL_BYTES(times), 'application/octet-stream');
  }
  @Post('/bytes201')
  @Returns(Status(201, Bytes))
  bytes201() {
    return new Bytes('made', 'text/plain');
  }
  @Get('/maybe-bytes')
  @Returns(Optional(Bytes))
  maybeBytes() {
    return null;
  }
  @Get('/csv')
  @Returns(Csv)
  csv() {
    return new Csv([
      ['id', 'qty'],
      ['o1', '2'],
    ]);
  }
  @Get('/old')
  @Returns(Redirect(301))
  old() {
    return Redirect.to('/new');
  }
  @Post('/form')
  @Returns(Redirect(303))
  form() {
    return Redirect.with('/done', headers.of([{ name: 'Cache-Control', value: 'no-store' }]));
  }
  @Post('/form-object')
  @Returns(Redirect(303))
  formObject() {
    return Redirect.with('/done', { 'Cache-Control': 'no-store' });
  }
  @Get('/bytes-object')
  @Returns(Bytes)
  bytesObject() {
    return new Bytes('b', 'text/plain', { 'Content-Disposition': 'attachment; filename="b.txt"' });
  }
  @Get('/versioned-object')
  @Returns(Versioned(Order))
  versionedObject() {
    return Versioned.of(3, new Order('v', 1), { 'Cache-Control': 'no-cache' });
  }
}
const logged: string[] = [];
const app = new App({ log: (line) => logged.push(line) }).controllers(AnswersController);

describe('status and content type by return contract', () => {
  it('CORE-07 CORE-11 CORE-20 @Returns(T) of a plain class answers 200 application/json', async () => {
    const res = await app.inject({ url: '/json' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({ id: 'o1', qty: 2 });
  });

  it('CORE-12 ANS-01 Status(code, T) answers that code and keeps T as JSON', async () => {
    const res = await app.inject({ method: 'POST', url: '/created' });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({ id: 'o2', qty: 1 });
  });

  it('CORE-13 Optional(T) answers 404 in the failure shape for null (and undefined, OPEN-63)', async () => {
    const res = await app.inject({ url: '/maybe/no' });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ error: 'Not Found', status: 404 });
    expect((await app.inject({ url: '/maybe/undef' })).status).toBe(404);
    expect((await app.inject({ url: '/maybe/yes' })).json()).toEqual({ id: 'yes', qty: 1 });
  });

  it('CORE-14 ANS-03 Reply(T) takes its status from the runtime field and sends its headers', async () => {
    const res = await app.inject({ url: '/reply' });
    expect(res.status).toBe(202);
    expect(res.headers['x-queue']).toBe('3');
    expect(res.json()).toEqual({ id: 'r', qty: 1 });
  });

  it('CORE-15 a void result sends no body and no Content-Type (204, OPEN-09)', async () => {
    const res = await app.inject({ method: 'POST', url: '/nothing' });
    expect(res.status).toBe(204);
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.body).toBe('');
  });

  it('CORE-16 a string result is text/plain', async () => {
    const res = await app.inject({ url: '/text' });
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('hello');
  });

  it('CORE-18 ANS-25 a Bytes result is sent as it is under its own content type with its headers', async () => {
    const res = await app.inject({ url: '/bytes' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/x-test');
    expect([...res.bytes]).toEqual([0xff, 0x00, 0xfe]);
    expect(res.headers['content-disposition']).toBe('attachment; filename="x.bin"');
  });

  it('CORE-18 every byte value reaches a real socket unchanged, in a small body (sent with the head) and a large one', async () => {
    const live = new App({ log: () => {} }).controllers(AnswersController);
    const server = await live.listen({ port: 0 });
    try {
      for (const times of [1, 100]) {
        const res = await request(`http://127.0.0.1:${server.port}/all-bytes/${times}`);
        const got = Buffer.from(await res.body.arrayBuffer());
        expect(res.headers['content-type']).toBe('application/octet-stream');
        expect(res.headers['content-length']).toBe(String(256 * times));
        expect(got.equals(ALL_BYTES(times))).toBe(true);
      }
    } finally {
      await live.close();
    }
  });

  it('ANS-02 Status(201, Bytes) sends the bytes under the wrapper status', async () => {
    const res = await app.inject({ method: 'POST', url: '/bytes201' });
    expect(res.status).toBe(201);
    expect(res.body).toBe('made');
  });

  it('ANS-26 Optional(Bytes) answers 404 for null', async () => {
    expect((await app.inject({ url: '/maybe-bytes' })).status).toBe(404);
  });

  it('CORE-19 a self-writing class is sent under its contentType with the bytes write() produced', async () => {
    const res = await app.inject({ url: '/csv' });
    expect(res.headers['content-type']).toBe('text/csv');
    expect(res.body).toBe('id,qty\no1,2\n');
  });

  it('ANS-04 ANS-07 Redirect(status) with Redirect.to answers the status with Location and no body', async () => {
    const res = await app.inject({ url: '/old' });
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/new');
    expect(res.body).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
  });

  it('ANS-05 ANS-36 Redirect.with sends the given headers too', async () => {
    const res = await app.inject({ method: 'POST', url: '/form' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/done');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('ANS-52 returned headers as a plain object { Name: value }', () => {
  it('ANS-51 ANS-52 reply(status, value, { Location }) answers that status with those headers', async () => {
    const res = await app.inject({ method: 'POST', url: '/reply-object' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('/orders/p');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ id: 'p', qty: 1 });
  });

  it('ANS-52 a returned { status, value, headers: { Location } } literal sends its headers', async () => {
    const res = await app.inject({ method: 'POST', url: '/reply-literal' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('/orders/l');
    expect(res.json()).toEqual({ id: 'l', qty: 1 });
  });

  it('ANS-52 Redirect.with, Bytes and Versioned.of take a plain object too', async () => {
    const redirect = await app.inject({ method: 'POST', url: '/form-object' });
    expect([redirect.status, redirect.headers.location]).toEqual([303, '/done']);
    expect(redirect.headers['cache-control']).toBe('no-store');
    const bytes = await app.inject({ url: '/bytes-object' });
    expect(bytes.headers['content-disposition']).toBe('attachment; filename="b.txt"');
    expect(bytes.body).toBe('b');
    const versioned = await app.inject({ url: '/versioned-object' });
    expect(versioned.headers['cache-control']).toBe('no-cache');
    expect(versioned.headers.etag).toBe('W/"3"');
    const unchanged = await app.inject({
      url: '/versioned-object',
      headers: { 'if-none-match': 'W/"3"' },
    });
    expect([unchanged.status, unchanged.headers['cache-control']]).toEqual([304, 'no-cache']);
  });

  it.each([
    [
      'array',
      "returned headers must be an object { Name: 'value' } or headers.of([...]), got an array",
    ],
    ['number', 'returned header "X-Count" must be a string, got number'],
    ['nine', 'a returned value carries at most 8 headers, got 9'],
  ])(
    'ANS-52 REF-20 headers that cannot be sent as given (%s) answer 500 and are logged, never dropped',
    async (how, message) => {
      logged.length = 0;
      const res = await app.inject({ url: `/reply-smuggled/${how}` });
      expect(res.status).toBe(500);
      expect(res.headers.location).toBeUndefined();
      await new Promise((r) => setImmediate(r));
      const lines = logged.map((l) => JSON.parse(l));
      expect(lines.map((l) => l.err.message).join('\n')).toContain(message);
      expect(lines.map((l) => l.msg).join('\n')).toContain(message);
      expect(lines.map((l) => l.route).join('\n')).toContain('GET /reply-smuggled/{how}');
    },
  );
});
