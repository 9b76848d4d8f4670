// What a kept record holds, seen from outside: a replay is the first answer whatever its body (none,
// non-ASCII text, more than the decoded-entry bound) and whatever headers middleware set before
// the handler and the handler added. The mutation run found these record shapes
// untested.
import { App, Controller, Ctx, Idempotent, NoContent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { KeptAnswers } from '../../lib/http/features/idempotency/kept-answers';

const Records = Space('kept-records', { ttlSeconds: 60, maxBytes: 64 * 1024 });
const BIG = KeptAnswers.MAX_ENTRY_BYTES + 100;

let runs = 0;
let visits = 0;
@Controller()
class Shapes {
  @Post('/none') @Idempotent(Records) @Returns(NoContent) none(c: Ctx): void {
    runs++;
    c.setHeader('x-done', 'yes');
  }

  @Post('/accents') @Idempotent(Records) @Returns(Status(201, Object)) accents() {
    runs++;
    return { name: 'Zoë Ångström — 東京' };
  }

  @Post('/big') @Idempotent(Records) @Returns(Status(201, Object)) big() {
    runs++;
    return { pad: 'x'.repeat(BIG) };
  }

  @Post('/cookies') @Idempotent(Records) @Returns(Status(201, Object)) cookies(c: Ctx) {
    runs++;
    c.setCookie('cart', '3');
    return { ok: true };
  }
}

const store = new MemoryStore({ bytes: 1 << 22 });
const app = new App({ log: () => {} })
  .controllers(Shapes)
  // Middleware's cookie is set before the handler on every request, the replay included, with
  // a new value each time: it is not part of the handler's answer and must not be kept.
  .use(async (c, next) => {
    c.setCookie('visit', String(++visits));
    await next();
  })
  .provide(Records.open(store));

const twice = async (url: string, key: string) => {
  const send = () => app.inject({ method: 'POST', url, headers: { 'idempotency-key': key } });
  const first = await send();
  const replay = await send();
  return { first, replay };
};

const without = (h: Readonly<Record<string, string | string[]>>, ...names: string[]) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => !names.includes(k)));

beforeEach(() => {
  runs = 0;
});

describe('IDEM-07 a replay is the first answer, whatever the record holds', () => {
  it('IDEM-07 no body and no content type: 204 again, the handler header kept, no type invented', async () => {
    const { first, replay } = await twice('/none', 'n1');
    expect([first.status, replay.status]).toEqual([204, 204]);
    expect([replay.body, replay.headers['content-type']]).toEqual(['', undefined]);
    expect(replay.headers['x-done']).toBe('yes');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(runs).toBe(1);
  });

  it('IDEM-07 a body outside ASCII comes back byte for byte, with its length', async () => {
    const { first, replay } = await twice('/accents', 'a1');
    expect(replay.body).toBe(first.body);
    expect(JSON.parse(replay.body)).toEqual({ name: 'Zoë Ångström — 東京' });
    expect(replay.headers['content-length']).toBe(String(Buffer.byteLength(first.body)));
    expect(runs).toBe(1);
  });

  it('IDEM-07 a body past the decoded-entry bound is replayed from the record, again and again', async () => {
    const { first, replay } = await twice('/big', 'b1');
    expect(first.body.length).toBeGreaterThan(BIG);
    expect(replay.body).toBe(first.body);
    const third = await app.inject({
      method: 'POST',
      url: '/big',
      headers: { 'idempotency-key': 'b1' },
    });
    expect(third.body).toBe(first.body);
    expect(runs).toBe(1);
  });

  it("IDEM-04 a cookie the handler set is kept; middleware's, set before the handler, is set again, not kept twice", async () => {
    const { first, replay } = await twice('/cookies', 'c1');
    const cookies = (n: number) => [
      `visit=${n}; Path=/; HttpOnly; SameSite=Lax`,
      'cart=3; Path=/; HttpOnly; SameSite=Lax',
    ];
    expect(first.headers['set-cookie']).toEqual(cookies(visits - 1));
    expect(replay.headers['set-cookie']).toEqual(cookies(visits));
    expect(without(replay.headers, 'date', 'idempotent-replayed', 'set-cookie')).toEqual(
      without(first.headers, 'date', 'set-cookie'),
    );
    expect(runs).toBe(1);
  });
});

describe('IDEM-07 another instance replays from the record alone', () => {
  // Each route remembers the answers it decoded; a second app over the same store has seen none,
  // so it decodes the record: what the mutation run found no test doing.
  const other = new App({ log: () => {} }).controllers(Shapes).provide(Records.open(store));
  const post = (on: App, url: string, key: string) =>
    on.inject({ method: 'POST', url, headers: { 'idempotency-key': key } });

  it('IDEM-07 a body kept by one instance comes back byte for byte from another', async () => {
    const first = await post(app, '/accents', 'o1');
    const replay = await post(other, '/accents', 'o1');
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(runs).toBe(1);
  });

  it('IDEM-07 an answer with no body and no type comes back as one from another instance', async () => {
    await post(app, '/none', 'o2');
    const replay = await post(other, '/none', 'o2');
    expect([replay.status, replay.body, replay.headers['content-type']]).toEqual([
      204,
      '',
      undefined,
    ]);
    expect(replay.headers['x-done']).toBe('yes');
    expect(runs).toBe(1);
  });
});
