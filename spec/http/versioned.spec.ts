import {
  App,
  Controller,
  Ctx,
  Get,
  Idempotent,
  Optional,
  Param,
  Reply,
  Returns,
  Status,
  Versioned,
  fail,
  headers,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

/** True once a log line holds `text` (as it is escaped inside the JSON line). 500 bodies say only `internal server error`, the detail goes to the log. */
async function logged(lines: readonly string[], text: string): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  const escaped = JSON.stringify(text).slice(1, -1);
  return lines.some((l) => l.includes(escaped));
}

class Doc {
  constructor(
    readonly id: string,
    readonly v: number,
  ) {}
}

let work = 0;
@Controller()
class DocsController {
  @Get('/docs/{id}')
  @Returns(Versioned(Doc))
  one(@Param('id') id: string) {
    work++;
    if (id === 'missing') throw fail.notFound('no doc %s', id);
    return Versioned.of(
      7,
      new Doc(id, 7),
      headers.of([{ name: 'Cache-Control', value: 'private' }]),
    );
  }
  @Get('/big')
  @Returns(Versioned(Doc))
  big() {
    return Versioned.of(2n ** 64n - 1n, new Doc('big', 0));
  }
  @Get('/cheap/{v}')
  @Returns(Versioned(Doc))
  cheap(@Param('v') v: number, c: Ctx) {
    if (c.clientHas(v))
      return Versioned.unchangedWith(v, headers.of([{ name: 'X-Cheap', value: 'yes' }]));
    work++;
    return Versioned.of(v, new Doc('cheap', v));
  }
  @Get('/one-verb/{v}')
  @Returns(Versioned(Doc))
  oneVerb(@Param('v') v: number, c: Ctx) {
    if (c.clientHas(v))
      return v === 1
        ? Versioned.unchanged(v)
        : Versioned.unchanged(v, headers.of([{ name: 'X-Cheap', value: 'one verb' }]));
    work++;
    return Versioned.of(v, new Doc('one-verb', v));
  }
  @Get('/lying')
  @Returns(Versioned(Doc))
  lying() {
    return Versioned.unchanged(9);
  }
}

const appLines: string[] = [];
const app = new App({ log: (l) => appLines.push(l) }).controllers(DocsController);

describe('Versioned answers', () => {
  it('ANS-27 Versioned.of answers 200 with the value and a weak ETag from the version (OPEN-22)', async () => {
    const res = await app.inject({ url: '/docs/a' });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('W/"7"');
    expect(res.json()).toEqual({ id: 'a', v: 7 });
  });

  it('ANS-28 VERS-06 the same version gives the same tag; versions up to 2^64-1 as bigint', async () => {
    expect((await app.inject({ url: '/docs/b' })).headers.etag).toBe(
      (await app.inject({ url: '/docs/c' })).headers.etag,
    );
    expect((await app.inject({ url: '/cheap/8' })).headers.etag).toBe('W/"8"');
    expect((await app.inject({ url: '/big' })).headers.etag).toBe('W/"18446744073709551615"');
  });

  it('ANS-29 ANS-30 a matching If-None-Match gets 304 with no body, even when the handler did the work', async () => {
    work = 0;
    const res = await app.inject({ url: '/docs/a', headers: { 'if-none-match': 'W/"7"' } });
    expect(res.status).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(work).toBe(1);
  });

  it('OPEN-23 If-None-Match matches weakly, in a list, and * matches', async () => {
    for (const inm of ['"7"', '"1", W/"7"', '*'])
      expect((await app.inject({ url: '/docs/a', headers: { 'if-none-match': inm } })).status).toBe(
        304,
      );
    expect(
      (await app.inject({ url: '/docs/a', headers: { 'if-none-match': 'W/"6"' } })).status,
    ).toBe(200);
  });

  it('CORE-51 ANS-31 ANS-32 c.clientHas tells; unchanged/unchangedWith answer 304 with their headers', async () => {
    work = 0;
    const res = await app.inject({ url: '/cheap/5', headers: { 'if-none-match': 'W/"5"' } });
    expect(res.status).toBe(304);
    expect(res.headers['x-cheap']).toBe('yes');
    expect(res.headers.etag).toBe('W/"5"');
    expect(work).toBe(0);
  });

  it('ANS-31 ANS-32 Versioned.unchanged takes the headers too: the same 304 as unchangedWith', async () => {
    work = 0;
    const withHeaders = await app.inject({
      url: '/one-verb/5',
      headers: { 'if-none-match': 'W/"5"' },
    });
    expect([
      withHeaders.status,
      withHeaders.headers['x-cheap'],
      withHeaders.headers.etag,
      withHeaders.body,
    ]).toEqual([304, 'one verb', 'W/"5"', '']);
    const bare = await app.inject({ url: '/one-verb/1', headers: { 'if-none-match': 'W/"1"' } });
    expect([bare.status, bare.headers['x-cheap'], bare.headers.etag]).toEqual([
      304,
      undefined,
      'W/"1"',
    ]);
    expect(work).toBe(0);
    const list = headers.of([{ name: 'X-Cheap', value: 'yes' }]);
    expect(Versioned.unchangedWith(3, list)).toEqual(Versioned.unchanged(3, list));
  });

  it('ANS-33 unchanged when the client did not send that version is 500 naming the route', async () => {
    const res = await app.inject({ url: '/lying' });
    expect(res.status).toBe(500);
    expect(res.json<{ error: string }>().error).toBe('internal server error');
    expect(await logged(appLines, 'GET /lying (DocsController.lying)')).toBe(true);
  });

  it('ANS-34 OPEN-36 the headers go out on both the 200 and the 304', async () => {
    expect((await app.inject({ url: '/docs/a' })).headers['cache-control']).toBe('private');
    expect(
      (await app.inject({ url: '/docs/a', headers: { 'if-none-match': 'W/"7"' } })).headers[
        'cache-control'
      ],
    ).toBe('private');
  });

  it('ANS-35 absence is fail.notFound', async () => {
    expect((await app.inject({ url: '/docs/missing' })).status).toBe(404);
  });
});

describe('Versioned Refusals', () => {
  const Space1 = Space('v', { ttlSeconds: 60, maxBytes: 1000 });
  @Controller('/r')
  class Refused {
    @Get('/opt') @Returns(Versioned(Optional(Doc))) opt() {
      return null as never; // refused before it runs
    }
    @Get('/status') @Returns(Status(200, Versioned(Doc))) status() {
      return null as never; // refused before it runs
    }
    @Get('/reply') @Returns(Reply(Versioned(Doc))) reply() {
      return null as never; // refused before it runs
    }
    @Get('/idem') @Idempotent(Space1, { by: () => 'x' }) @Returns(Versioned(Doc)) idem() {
      return null as never; // refused before it runs
    }
  }
  const problems = (() => {
    try {
      new App()
        .controllers(Refused)
        .provide(Space1.open(new MemoryStore({ bytes: 1 << 16 })))
        .build();
    } catch (e) {
      return (e as { problems: string[] }).problems;
    }
    return [];
  })();
  it('REF-14 Versioned(Optional(T)) is refused naming the route', () => {
    expect(problems).toContain(
      'GET /r/opt (Refused.opt): Versioned(Optional(T)) is refused: report absence with fail.notFound()',
    );
  });
  it('REF-15 Versioned inside Status is refused naming the route', () => {
    expect(problems).toContain(
      'GET /r/status (Refused.status): Versioned cannot sit inside Status',
    );
  });
  it('REF-16 Versioned inside Reply is refused naming the route', () => {
    expect(problems).toContain('GET /r/reply (Refused.reply): Versioned cannot sit inside Reply');
  });
  it('REF-13 @Idempotent on a Versioned route is refused naming the route', () => {
    expect(problems).toContain(
      'GET /r/idem (Refused.idem): @Idempotent cannot keep a Versioned answer',
    );
  });
});

describe('entity tags of versions', () => {
  it('ANS-27 OPEN-22 a version that is not an unsigned 64-bit integer is refused, not sent as W/"undefined"', async () => {
    const { etagOf } = await import('../../lib/http/core/etag');
    expect(etagOf(7)).toBe('W/"7"');
    expect(etagOf(18446744073709551615n)).toBe('W/"18446744073709551615"');
    for (const bad of [undefined, null, '7', -1, 1.5, 2 ** 53, -1n, 18446744073709551616n]) {
      expect(() => etagOf(bad as never)).toThrow(/is not an unsigned 64-bit integer/);
    }
  });
});
