import type http from 'node:http';
import { Client, FetchError, OpenTarget, Target, TargetType } from 'fw-http/fetch';
import {
  closedPort,
  ctx,
  httpPeer,
  linesNamed,
  rejection,
  run,
  sleep,
  until,
  withClient,
  type HttpPeer,
} from './loopback';

let peer: HttpPeer;
let client: Client;
const held: http.ServerResponse[] = [];
const releaseAll = () => {
  for (const r of held.splice(0)) if (!r.writableEnded) r.end('released');
};

beforeAll(async () => {
  peer = await httpPeer((req, res, seen) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname.endsWith('/hold')) return void held.push(res);
    if (u.pathname.endsWith('/slow-head')) return void setTimeout(() => res.end('late'), 600);
    if (u.pathname.endsWith('/silent')) return void res.writeHead(200).write('x');
    if (u.pathname.endsWith('/fifty')) return void res.end('x'.repeat(50));
    if (u.pathname.endsWith('/health-ok')) return void res.end('ready');
    if (u.pathname.endsWith('/health-down')) {
      res.statusCode = 503;
      return void res.end('not yet');
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ method: seen.method, url: seen.url, body: seen.body }));
  });
  client = new Client();
  client.start();
});

afterEach(() => releaseAll());
afterAll(async () => {
  releaseAll();
  await client.close();
  await peer.close();
});

const last = () => peer.seen[peer.seen.length - 1];
const Api = Target('api');
const open = (c = client, base = peer.origin) => Api.open(c, { base });

describe('declaring and opening', () => {
  it('FETCH-46 Target(name, options) declares a service; open(client, options) gives an OpenTarget', async () => {
    const Payments = Target('payments', { maxInFlight: 2 });
    expect(Payments).toBeInstanceOf(TargetType);
    expect(Payments.name).toBe('payments');
    const payments = Payments.open(client, { base: peer.origin });
    expect(payments).toBeInstanceOf(OpenTarget); // the framework finds provided targets this way
    expect(payments.name).toBe('payments');
    expect(payments.client).toBe(client);
    expect((await payments.get(run, '/x')).status).toBe(200);
  });

  it('FETCH-53 base is scheme, host and an optional prefix; a trailing / is dropped', async () => {
    const t = Api.open(client, { base: peer.origin + '/api/v2/' });
    expect(t.base).toBe(peer.origin + '/api/v2');
    const res = await t.get(run, '/users/{id}', { id: 7 });
    expect(res.json()).toMatchObject({ url: '/api/v2/users/7' });
    expect(Api.open(client, { base: peer.origin + '/' }).base).toBe(peer.origin);
  });

  it('FETCH-54 a base that is not absolute fails BaseNotAbsolute', () => {
    for (const base of ['api.internal/v1', '/v1', 'ftp://files.example', '']) {
      expect(() => Api.open(client, { base })).toThrow(
        expect.objectContaining({ code: 'BaseNotAbsolute' }),
      );
    }
  });

  it('FETCH-55 OPEN-38 a base with a query (or a fragment) fails BaseHasQuery', () => {
    for (const base of ['http://h/v1?key=1', 'http://h/v1?', 'http://h/v1#top']) {
      let err: unknown;
      try {
        Api.open(client, { base });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FetchError);
      expect((err as FetchError).code).toBe('BaseHasQuery');
    }
  });

  it('FETCH-51 ready defaults to null, and probe() is then client.started', async () => {
    const t = Target('plain').open(client, { base: peer.origin });
    expect(t.ready).toBeNull();
    expect(await t.probe()).toBe(true);
    const idle = new Client();
    expect(await Target('plain').open(idle, { base: peer.origin }).probe()).toBe(false);
  });

  it('probe() GETs ready through the target: 2xx is ready; any other answer or any error is not', async () => {
    const before = peer.seen.length;
    expect(
      await Target('ok', { ready: '/health-ok' })
        .open(client, { base: peer.origin + '/svc' })
        .probe(),
    ).toBe(true);
    expect(peer.seen[before].url).toBe('/svc/health-ok');
    expect(peer.seen[before].method).toBe('GET');
    expect(
      await Target('down', { ready: '/health-down' }).open(client, { base: peer.origin }).probe(),
    ).toBe(false);
    expect(
      await Target('slow', { ready: '/hold', timeoutMs: 200 })
        .open(client, { base: peer.origin })
        .probe(),
    ).toBe(false);
    const dead = await closedPort();
    expect(
      await Target('dead', { ready: '/health-ok' })
        .open(client, { base: `http://127.0.0.1:${dead}` })
        .probe(),
    ).toBe(false);
    expect(
      await Target('idle', { ready: '/health-ok' })
        .open(new Client(), { base: peer.origin })
        .probe(),
    ).toBe(false);
  });

  it('LIMITS-15 HEALTH-03 probe() takes neither the target gate nor the client permit that business calls wait on', async () => {
    await withClient({ maxInFlight: 1 }, async (c) => {
      const t = Target('gated', { maxInFlight: 1, ready: '/health-ok' }).open(c, {
        base: peer.origin,
      });
      const business = t.get(run, '/hold');
      await until(() => held.length === 1);
      // The client's only permit and the target's only slot are held: a probe still goes out now.
      expect(await t.probe()).toBe(true);
      expect(held.length).toBe(1);
      const queued = t.get(run, '/fifty');
      expect(await Promise.all([t.probe(), t.probe()])).toEqual([true, true]);
      releaseAll();
      expect((await business).status).toBe(200);
      expect((await queued).body).toBe('x'.repeat(50));
    });
  });

  it('HEALTH-02 probe(timeoutMs) has its own deadline, shorter than the target timeout, and drops the hung request', async () => {
    const t = Target('hung', { ready: '/hold' }).open(client, { base: peer.origin });
    const before = held.length;
    const answer = await Promise.race([t.probe(100), sleep(5_000).then(() => 'still waiting')]);
    expect(answer).toBe(false);
    expect(held.length).toBe(before + 1);
    const res = held[held.length - 1];
    await until(() => res.destroyed || res.socket === null || res.socket.destroyed);
  });

  it('probe() does not follow a redirect: a 3xx is not ready and the standing headers stay at the target', async () => {
    const other = await httpPeer((_req, res) => void res.end('ready'));
    const mover = await httpPeer(
      (_req, res) => void res.writeHead(302, { location: other.origin + '/health' }).end(),
    );
    try {
      const t = Target('moved', { ready: '/health' }).open(client, {
        base: mover.origin,
        authorization: 'Bearer secret',
      });
      expect(await t.probe()).toBe(false);
      expect(mover.seen.length).toBe(1);
      expect(linesNamed(mover.seen[0], 'authorization')).toEqual(['Bearer secret']);
      expect(other.seen.length).toBe(0);
    } finally {
      await other.close();
      await mover.close();
    }
  });

  it('refuses bad declarations: a ready that is not a path, a negative limit', () => {
    expect(() => Target('x', { ready: 'health' })).toThrow(
      expect.objectContaining({ code: 'BadSettings' }),
    );
    expect(() => Target('x', { maxInFlight: -1 })).toThrow(/maxInFlight/);
  });
});

describe('standing headers', () => {
  it('FETCH-56 the authorization open option is sent on every call', async () => {
    const t = Api.open(client, { base: peer.origin, authorization: 'Bearer standing' });
    await t.get(run, '/a');
    expect(linesNamed(last(), 'authorization')).toEqual(['Bearer standing']);
    await t.postJson(run, '/b', null, { x: 1 });
    expect(linesNamed(last(), 'authorization')).toEqual(['Bearer standing']);
  });

  it('FETCH-57 a call naming authorization sends its own value instead, once', async () => {
    const t = Api.open(client, { base: peer.origin, authorization: 'Bearer standing' });
    await t.get(run, '/a', {}, { headers: [{ name: 'authorization', value: 'Bearer mine' }] });
    expect(linesNamed(last(), 'authorization')).toEqual(['Bearer mine']);
  });

  it('FETCH-58 FETCH-59 userAgent is sent as User-Agent, unless the call names one', async () => {
    const t = Api.open(client, { base: peer.origin, userAgent: 'shop/1.0' });
    await t.get(run, '/a');
    expect(linesNamed(last(), 'user-agent')).toEqual(['shop/1.0']);
    await t.get(run, '/a', {}, { headers: [{ name: 'User-Agent', value: 'probe/2' }] });
    expect(linesNamed(last(), 'user-agent')).toEqual(['probe/2']);
  });

  it('FETCH-60 FETCH-61 standing headers go on every call; a call line of the same name shadows one', async () => {
    const t = Api.open(client, {
      base: peer.origin,
      headers: [
        { name: 'X-Tenant', value: 'acme' },
        { name: 'X-Region', value: 'eu' },
      ],
    });
    await t.get(run, '/a');
    expect(linesNamed(last(), 'x-tenant')).toEqual(['acme']);
    expect(linesNamed(last(), 'x-region')).toEqual(['eu']);
    await t.get(run, '/a', {}, { headers: [{ name: 'x-tenant', value: 'globex' }] });
    expect(linesNamed(last(), 'x-tenant')).toEqual(['globex']);
    expect(linesNamed(last(), 'x-region')).toEqual(['eu']);
  });

  it('standing header values are checked when opening (BadHeader)', () => {
    expect(() =>
      Api.open(client, { base: peer.origin, headers: [{ name: 'X-A', value: 'a\r\nb' }] }),
    ).toThrow(expect.objectContaining({ code: 'BadHeader' }));
    expect(() => Api.open(client, { base: peer.origin, authorization: 'x\ny' })).toThrow(
      expect.objectContaining({ code: 'BadHeader' }),
    );
  });

  it('RID-10 a target call under a Ctx forwards the request id', async () => {
    await open().get(ctx('t-rid'), '/a');
    expect(linesNamed(last(), 'x-request-id')).toEqual(['t-rid']);
  });
});

describe('calls and templates', () => {
  it('FETCH-62 every call form takes a template and its arguments where a URL would go', async () => {
    const t = open();
    const calls: Array<[string, Promise<{ json(): unknown }>, string]> = [
      ['GET', t.get(run, '/items/{id}', { id: 1 }), ''],
      ['DELETE', t.delete(run, '/items/{id}', { id: 2 }), ''],
      ['POST', t.post(run, '/items/{}', [3], 'p'), 'p'],
      ['PUT', t.put(run, '/items/{}', [4], new Uint8Array([113])), 'q'],
      ['PATCH', t.patch(run, '/items/{}', [5], null), ''],
      ['OPTIONS', t.send(run, 'OPTIONS', '/items/{}', [6], null), ''],
      ['POST', t.postJson(run, '/items/{id}', { id: 7 }, { a: 1 }), '{"a":1}'],
      ['PUT', t.putJson(run, '/items/{id}', { id: 8 }, [1]), '[1]'],
      ['PATCH', t.patchJson(run, '/items/{id}', { id: 9 }, true), 'true'],
      ['POST', t.sendJson(run, 'POST', '/items/{id}', { id: 10 }, null), 'null'],
    ];
    let i = 1;
    for (const [method, p, body] of calls) {
      expect((await p).json()).toEqual({ method, url: `/items/${i++}`, body });
    }
  });

  it('FETCH-63 url(c, path, args) is the full URL the call would use', () => {
    const t = Api.open(client, { base: 'http://stock.internal/v1/' });
    expect(t.url(run, '/items/{sku}', { sku: 'a b', page: 2, all: true, none: null })).toBe(
      'http://stock.internal/v1/items/a%20b?page=2&all=true',
    );
    expect(t.url(run, '/items/{}/{}', ['x', 3])).toBe('http://stock.internal/v1/items/x/3');
    expect(t.url(run, '/items', { q: 'z' })).toBe('http://stock.internal/v1/items?q=z');
    expect(t.url(run, '/items')).toBe('http://stock.internal/v1/items');
  });

  it('FETCH-64 {} segments are filled by position from a tuple', async () => {
    expect((await open().get(run, '/a/{}/b/{}', ['one', 2])).json()).toMatchObject({
      url: '/a/one/b/2',
    });
  });

  it('FETCH-66 FETCH-67 {name} segments come from fields; other fields go to the query', async () => {
    const res = await open().get(run, '/orgs/{org}/users/{id}', {
      org: 'acme',
      id: 42,
      active: true,
      q: 'x&y',
    });
    expect(res.json()).toMatchObject({ url: '/orgs/acme/users/42?active=true&q=x%26y' });
  });

  it('FETCH-68 an optional field that is null (or undefined) is left out of the query', async () => {
    const after: string | null = null;
    const res = await open().get(run, '/users/{id}', { id: 1, after, limit: undefined, page: 3 });
    expect(res.json()).toMatchObject({ url: '/users/1?page=3' });
  });

  it('FETCH-69 a segment is an integer, a boolean or a string; anything else is refused naming the segment', async () => {
    expect(open().url(run, '/f/{a}/{b}/{c}', { a: 1, b: false, c: 's' })).toBe(
      peer.origin + '/f/1/false/s',
    );
    const before = peer.seen.length;
    for (const bad of [{ id: { x: 1 } }, { id: 1.5 }, { id: [1] }]) {
      const err = await rejection(open().get(run, '/users/{id}', bad as never));
      expect(err.code).toBe('BadTemplate');
      expect(err.message).toContain('{id}');
    }
    expect(peer.seen.length).toBe(before);
  });

  it('FETCH-70 a string segment is percent-encoded with / as data; absolute values never escape the base', async () => {
    const t = Api.open(client, { base: peer.origin + '/api' });
    expect((await t.get(run, '/files/{name}', { name: 'a/b c' })).json()).toMatchObject({
      url: '/api/files/a%2Fb%20c',
    });
    expect((await t.get(run, '/files/{}', ['//evil.com'])).json()).toMatchObject({
      url: '/api/files/%2F%2Fevil.com',
    });
    expect((await t.get(run, '/files/{}', ['http://x/y'])).json()).toMatchObject({
      url: '/api/files/http%3A%2F%2Fx%2Fy',
    });
    expect(t.url(run, '/files/{}', ['?q=1#f'])).toBe(peer.origin + '/api/files/%3Fq%3D1%23f');
    for (const bad of ['', '.', '..']) {
      expect((await rejection(t.get(run, '/files/{}', [bad]))).code).toBe('BadTemplate');
    }
  });

  it('REF-23 a leftover (query) field of another type is refused naming the field, before sending', async () => {
    const before = peer.seen.length;
    const err = await rejection(
      open().get(run, '/users/{id}', { id: 1, filter: { a: 1 } } as never),
    );
    expect(err.code).toBe('BadQueryValue');
    expect(err.message).toContain('"filter"');
    expect(peer.seen.length).toBe(before);
  });

  it('REF-24 REF-25 REF-26 REF-27 REF-28 template misfits are refused at run time, before sending', async () => {
    const t = open();
    const before = peer.seen.length;
    const cases: Array<[string, unknown, RegExp]> = [
      ['/a/{}/{id}', { id: 1 }, /mixes/], // REF-24
      ['/users/{id}', { other: 1 }, /missing field "id"/], // REF-25
      ['/users/{id}', [1], /give an object, not a tuple/], // REF-26
      ['/users/{}', { id: 1 }, /give a tuple/], // REF-27
      ['/users/{}/{}', [1], /2 \{\} segment/], // REF-28
      ['/users/{}', [1, 2], /1 \{\} segment/], // REF-28
      ['users', {}, /must start with "\/"/],
    ];
    for (const [path, args, message] of cases) {
      const err = await rejection(t.get(run, path as string, args as never));
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe('BadTemplate');
      expect(err.message).toMatch(message);
    }
    expect(peer.seen.length).toBe(before);
  });
});

describe('gates and limits', () => {
  it('FETCH-47 a target without maxInFlight has no gate of its own', async () => {
    await withClient({ maxInFlight: 4 }, async (c) => {
      const t = Target('open').open(c, { base: peer.origin });
      const calls = Array.from({ length: 4 }, () => t.get(run, '/hold'));
      await until(() => held.length === 4);
      releaseAll();
      expect((await Promise.all(calls)).every((r) => r.status === 200)).toBe(true);
    });
  });

  it('FETCH-48 LIMITS-15 a target with maxInFlight n has its (n+1)th call wait while the client has permits free', async () => {
    await withClient({ maxInFlight: 32 }, async (c) => {
      const t = Target('gated', { maxInFlight: 2 }).open(c, { base: peer.origin });
      const before = peer.seen.length;
      const calls = Array.from({ length: 3 }, (_, i) => t.get(run, '/hold', { i }));
      await until(() => held.length === 2);
      await sleep(200);
      expect(held.length).toBe(2);
      // The client still has permits: a call of its own goes straight through.
      expect((await c.get(run, peer.url + 'free', {})).status).toBe(200);
      held.shift()?.end('one');
      await until(() => held.length === 2);
      releaseAll();
      expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200, 200, 200]);
      expect(peer.seen.slice(before).filter((s) => s.url.startsWith('/hold')).length).toBe(3);
    });
  });

  it("FETCH-52 a target call takes the target's gate before the client's permit", async () => {
    // Client: 2 permits. Target: 1. A second target call waits on the target's gate; had it taken
    // a client permit first, the plain call below would find none left.
    await withClient({ maxInFlight: 2 }, async (c) => {
      const t = Target('first', { maxInFlight: 1 }).open(c, { base: peer.origin });
      const a1 = t.get(run, '/hold');
      await until(() => held.length === 1);
      const a2 = t.get(run, '/hold');
      await sleep(50);
      const plain = c.get(run, peer.url + 'plain', { timeoutMs: 5000 });
      expect((await plain).status).toBe(200);
      expect(held.length).toBe(1);
      releaseAll();
      await a1;
      await until(() => held.length === 1);
      releaseAll();
      expect((await a2).status).toBe(200);
    });
  });

  it('a target gate is given back on errors too', async () => {
    await withClient({}, async (c) => {
      const t = Target('one', { maxInFlight: 1, timeoutMs: 100 }).open(c, { base: peer.origin });
      expect((await rejection(t.get(run, '/hold'))).code).toBe('TimedOut');
      expect((await rejection(t.get(run, '/{}', [[]] as never))).code).toBe('BadTemplate');
      expect((await t.get(run, '/after', {}, { timeoutMs: 5000 })).status).toBe(200);
    });
  });

  it("FETCH-49 a target's timeoutMs, stallMs and maxBody default to the client's", async () => {
    await withClient({ maxBody: 10, timeoutMs: 200, stallMs: 0 }, async (c) => {
      const t = Target('defaults').open(c, { base: peer.origin });
      expect((await rejection(t.get(run, '/fifty'))).code).toBe('BodyTooLarge');
      expect((await rejection(t.get(run, '/hold'))).code).toBe('TimedOut');
    });
    await withClient({ stallMs: 200, timeoutMs: 0 }, async (c) => {
      expect(
        (await rejection(Target('d').open(c, { base: peer.origin }).get(run, '/silent'))).code,
      ).toBe('Stalled');
    });
  });

  it("FETCH-50 a target's own timeoutMs, stallMs and maxBody apply instead of the client's", async () => {
    await withClient({ maxBody: 10, timeoutMs: 0, stallMs: 0 }, async (c) => {
      expect(
        (await Target('big', { maxBody: 100 }).open(c, { base: peer.origin }).get(run, '/fifty'))
          .body,
      ).toHaveLength(50);
      expect(
        (
          await rejection(
            Target('quick', { timeoutMs: 150 }).open(c, { base: peer.origin }).get(run, '/hold'),
          )
        ).code,
      ).toBe('TimedOut');
      expect(
        (
          await rejection(
            Target('lively', { stallMs: 150 }).open(c, { base: peer.origin }).get(run, '/silent'),
          )
        ).code,
      ).toBe('Stalled');
    });
  });

  it("FETCH-20 the call's timeoutMs overrides the target's and the client's", async () => {
    await withClient({ timeoutMs: 150 }, async (c) => {
      const t = Target('slowish', { timeoutMs: 150 }).open(c, { base: peer.origin });
      expect((await t.get(run, '/slow-head', {}, { timeoutMs: 0 })).body).toBe('late');
      expect((await c.get(run, peer.url + 'slow-head', { timeoutMs: 5000 })).body).toBe('late');
      const tight = Target('loose', { timeoutMs: 0 }).open(c, { base: peer.origin });
      expect((await rejection(tight.get(run, '/hold', {}, { timeoutMs: 100 }))).code).toBe(
        'TimedOut',
      );
    });
  });

  it("FETCH-21 the call's stallMs overrides the target's and the client's", async () => {
    await withClient({ stallMs: 150, timeoutMs: 0 }, async (c) => {
      const t = Target('s', { stallMs: 150 }).open(c, { base: peer.origin });
      expect((await t.get(run, '/slow-head', {}, { stallMs: 0 })).body).toBe('late');
      expect((await c.get(run, peer.url + 'slow-head', { stallMs: 5000 })).body).toBe('late');
    });
    await withClient({ stallMs: 0, timeoutMs: 0 }, async (c) => {
      expect((await rejection(c.get(run, peer.url + 'silent', { stallMs: 100 }))).code).toBe(
        'Stalled',
      );
    });
  });

  it("FETCH-22 the call's maxBody overrides the target's and the client's", async () => {
    await withClient({ maxBody: 10 }, async (c) => {
      const t = Target('m', { maxBody: 10 }).open(c, { base: peer.origin });
      expect((await t.get(run, '/fifty', {}, { maxBody: 50 })).body).toHaveLength(50);
      expect((await c.get(run, peer.url + 'fifty', { maxBody: 50 })).body).toHaveLength(50);
      expect(
        (
          await rejection(
            Target('n').open(c, { base: peer.origin }).get(run, '/fifty', {}, { maxBody: 49 }),
          )
        ).code,
      ).toBe('BodyTooLarge');
    });
  });
});
