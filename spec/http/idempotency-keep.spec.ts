import { IsInt } from 'class-validator';
import { App, Body, Controller, Idempotent, Post, Reply, Returns, reply } from 'fw-http';
import {
  CacheError,
  DEFAULT_KEY_DOCS,
  MemoryStore,
  Space,
  type KeepMode,
  type SpaceOptions,
} from 'fw-http/cache';

// which answers a space keeps (`keep`), and the missing key's 400 with a link.

class Pay {
  @IsInt() n!: number;
}

/** An app whose routes answer as asked; `runs` counts handler runs. */
function keepApp(options: Partial<SpaceOptions>) {
  const Pays = Space('pays', { ttlSeconds: 60, maxBytes: 4096, ...options });
  const runs = { n: 0 };
  @Controller()
  class Pays_ {
    @Post('/pay')
    @Idempotent(Pays)
    @Returns(Reply({ 201: Object, 409: Object, 503: Object }))
    pay(@Body() body: Pay) {
      runs.n++;
      const as = body.n;
      if (as === 500) throw new Error('the bank hung up');
      if (as === 409) return reply(409, { taken: runs.n });
      if (as === 503) return reply(503, { later: runs.n });
      return reply(201, { paid: runs.n });
    }
  }
  const app = new App({ log: () => {} })
    .controllers(Pays_)
    .provide(Pays.open(new MemoryStore({ bytes: 1 << 20 })));
  const post = (key: string | null, n: unknown) =>
    app.inject({
      method: 'POST',
      url: '/pay',
      headers: {
        'content-type': 'application/json',
        ...(key === null ? {} : { 'idempotency-key': key }),
      },
      body: JSON.stringify({ n }),
    });
  return { app, runs, post };
}

/** Two requests with one key: whether the second was a replay (and the handler ran once). */
async function twice(mode: KeepMode | undefined, n: number) {
  const { runs, post } = keepApp(mode === undefined ? {} : { keep: mode });
  const first = await post(`k${n}`, n);
  const again = await post(`k${n}`, n);
  return {
    statuses: [first.status, again.status],
    replayed: again.headers['idempotent-replayed'] === 'true',
    same: first.body === again.body,
    runs: runs.n,
  };
}

describe('keep: which answers a space keeps', () => {
  it("the default is 'declared': successes and declared 4xx are kept; a declared 5xx and a thrown failure give the key back", async () => {
    expect(Space('d', { ttlSeconds: 1, maxBytes: 1 }).keep).toBe('declared');
    expect(await twice(undefined, 201)).toEqual({
      statuses: [201, 201],
      replayed: true,
      same: true,
      runs: 1,
    });
    expect(await twice(undefined, 409)).toEqual({
      statuses: [409, 409],
      replayed: true,
      same: true,
      runs: 1,
    });
    expect(await twice(undefined, 503)).toMatchObject({
      statuses: [503, 503],
      replayed: false,
      runs: 2,
    });
    expect(await twice(undefined, 500)).toMatchObject({
      statuses: [500, 500],
      replayed: false,
      runs: 2,
    });
  });

  it("keep: 'success' keeps only successes: a declared 409 gives the key back and a retry runs again", async () => {
    expect(await twice('success', 201)).toEqual({
      statuses: [201, 201],
      replayed: true,
      same: true,
      runs: 1,
    });
    expect(await twice('success', 409)).toMatchObject({
      statuses: [409, 409],
      replayed: false,
      same: false,
      runs: 2,
    });
    expect(await twice('success', 503)).toMatchObject({ replayed: false, runs: 2 });
    expect(await twice('success', 500)).toMatchObject({ replayed: false, runs: 2 });
  });

  it("keep: 'all' keeps every answer of a handler that ran, a thrown failure and a 5xx included, and replays the same bytes", async () => {
    expect(await twice('all', 201)).toEqual({
      statuses: [201, 201],
      replayed: true,
      same: true,
      runs: 1,
    });
    expect(await twice('all', 409)).toEqual({
      statuses: [409, 409],
      replayed: true,
      same: true,
      runs: 1,
    });
    expect(await twice('all', 503)).toEqual({
      statuses: [503, 503],
      replayed: true,
      same: true,
      runs: 1,
    });
    const thrown = await twice('all', 500);
    expect(thrown).toMatchObject({ statuses: [500, 500], replayed: true, runs: 1 });
  });

  it("keep: 'all' never keeps a request refused before its handler ran: a 400 for its body gives the key back", async () => {
    const { runs, post } = keepApp({ keep: 'all' });
    expect((await post('v1', 'not a number')).status).toBe(400);
    expect(runs.n).toBe(0);
    const ok = await post('v1', 201);
    expect([ok.status, ok.headers['idempotent-replayed'], runs.n]).toEqual([201, undefined, 1]);
  });

  it('Space refuses a keep it does not know, naming the space', () => {
    expect(() => Space('s', { ttlSeconds: 1, maxBytes: 1, keep: 'failures' as KeepMode })).toThrow(
      new CacheError(
        'InvalidArgument',
        `Space "s": keep must be one of 'success', 'declared', 'all', got "failures"`,
      ),
    );
  });
});

describe('a missing Idempotency-Key', () => {
  it('is 400 with Link: <docs>; rel="describedby" pointing to the IETF draft by default', async () => {
    const { runs, post } = keepApp({});
    const res = await post(null, 201);
    expect(res.status).toBe(400);
    expect(res.headers.link).toBe(`<${DEFAULT_KEY_DOCS}>; rel="describedby"; type="text/html"`);
    expect(res.json()).toMatchObject({ status: 400, error: 'Idempotency-Key missing' });
    expect(runs.n).toBe(0);
    // A key present but empty is another 400, with no link.
    expect((await post('', 201)).headers.link).toBeUndefined();
  });

  it("points to the space's keyDocs (a URL or a path), and a value that cannot sit in the header is refused", async () => {
    for (const docs of ['https://api.example.com/docs/idempotency', '/docs#idempotency']) {
      const res = await keepApp({ keyDocs: docs }).post(null, 201);
      expect([res.status, res.headers.link]).toEqual([
        400,
        `<${docs}>; rel="describedby"; type="text/html"`,
      ]);
    }
    for (const bad of [
      'docs',
      'https://x.example/a b',
      'https://x.example/>; rel=x',
      'javascript:alert(1)',
      '',
    ]) {
      expect(() => Space('s', { ttlSeconds: 1, maxBytes: 1, keyDocs: bad })).toThrow(
        /Space "s": keyDocs must be an http\(s\) URL or a path/,
      );
    }
  });
});
