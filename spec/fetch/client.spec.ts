import zlib from 'node:zlib';
import {
  Client,
  FetchError,
  FETCH_ERRORS,
  FetchResponse,
  withQuery,
  type Scope,
} from 'fw-http/fetch';
import { ctx, httpPeer, linesNamed, rejection, run, until, type HttpPeer } from './loopback';

let peer: HttpPeer;
let client: Client;

beforeAll(async () => {
  peer = await httpPeer((req, res, seen) => {
    const u = new URL(req.url ?? '/', 'http://x');
    switch (u.pathname) {
      case '/echo':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: seen.method, url: seen.url, body: seen.body }));
        return;
      case '/status':
        res.statusCode = Number(u.searchParams.get('s'));
        res.end(`status ${res.statusCode}`);
        return;
      case '/headers':
        res.writeHead(200, [
          'X-One',
          'a',
          'x-multi',
          '1',
          'X-Multi',
          '2',
          'Content-Type',
          'text/plain',
        ]);
        res.end('hi');
        return;
      case '/user':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ first: 'Ada', last: 'Lovelace', unknown: 1 }));
        return;
      case '/gzip': {
        const body = zlib.gzipSync(Buffer.from('compressed'));
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': body.length });
        res.end(body);
        return;
      }
      case '/identity':
        res.writeHead(200, { 'content-encoding': 'identity' });
        res.end('plain');
        return;
      default:
        res.end('ok');
    }
  });
  client = new Client();
  client.start();
});

afterAll(async () => {
  await client.close();
  await peer.close();
});

const last = () => peer.seen[peer.seen.length - 1];

describe('settings and lifecycle', () => {
  it('FETCH-01 new Client(settings) makes a client with the given settings over the defaults', () => {
    const c = new Client({ maxInFlight: 4, timeoutMs: 100 });
    expect(c).toBeInstanceOf(Client);
    expect(c.settings.maxInFlight).toBe(4);
    expect(c.settings.timeoutMs).toBe(100);
    expect(c.settings.stallMs).toBe(0);
  });

  it('FETCH-02 FETCH-04 FETCH-06 FETCH-08 FETCH-10 FETCH-12 FETCH-13 the defaults are the spec values', () => {
    const s = new Client().settings;
    expect(s.maxInFlight).toBe(32); // FETCH-02
    expect(s.timeoutMs).toBe(30_000); // FETCH-04
    expect(s.stallMs).toBe(0); // FETCH-06
    expect(s.maxBody).toBe(8 * 1024 * 1024); // FETCH-08
    expect(s.maxDrain).toBe(64 * 1024); // FETCH-10
    expect(s.readBufferSize).toBe(8 * 1024); // FETCH-12
    expect(s.forwardRequestId).toBe(true); // FETCH-13
  });

  it('refuses settings that are not non-negative integers, naming the field', () => {
    expect(() => new Client({ maxInFlight: 0 })).toThrow(/maxInFlight/);
    expect(() => new Client({ timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => new Client({ maxBody: 1.5 })).toThrow(/maxBody/);
    expect(() => new Client({ readBufferSize: 0 })).toThrow(
      expect.objectContaining({ code: 'BadSettings' }),
    );
  });

  it('FETCH-14 a call before start fails with NotStarted, and nothing is sent', async () => {
    const fresh = new Client();
    const before = peer.seen.length;
    const err = await rejection(fresh.get(run, peer.url + 'x', {}));
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('NotStarted');
    expect(fresh.started).toBe(false);
    expect(peer.seen.length).toBe(before);
  });

  it('FETCH-16 client.start() starts a client without a server', async () => {
    const fresh = new Client();
    fresh.start();
    expect(fresh.started).toBe(true);
    const res = await fresh.get(run, peer.url, {});
    expect(res.body).toBe('ok');
    fresh.start(); // safe twice
    expect(fresh.started).toBe(true);
    await fresh.close();
  });

  it("VERS-05 start accepts 'off' as the older name of 'none'", async () => {
    const a = new Client();
    a.start('off');
    expect(a.started).toBe(true);
    expect((await a.get(run, peer.url, {})).status).toBe(200);
    const b = new Client();
    b.start('none');
    expect(b.started).toBe(true);
    expect(() => new Client().start('sometimes' as 'none')).toThrow(FetchError);
    await a.close();
    await b.close();
  });

  it('FETCH-95 close() stops the client: its pooled connections close, started is false, later calls fail Canceled; start() opens it again', async () => {
    const c = new Client();
    c.start();
    await c.get(run, peer.url, {});
    const socket = last().socket;
    expect(socket.destroyed).toBe(false); // kept alive in the pool
    await c.close();
    await until(() => socket.destroyed); // the dispatcher let it go
    expect(c.started).toBe(false);
    expect((await rejection(c.get(run, peer.url, {}))).code).toBe('Canceled');
    c.start();
    expect((await c.get(run, peer.url, {})).status).toBe(200);
    await c.close();
  });
});

describe('operations', () => {
  it('FETCH-31 get and delete return a Response', async () => {
    const g = await client.get(run, peer.url + 'echo?a=1', {});
    expect(g).toBeInstanceOf(FetchResponse);
    expect(g.json()).toEqual({ method: 'GET', url: '/echo?a=1', body: '' });
    const d = await client.delete(run, new URL(peer.url + 'echo'), {});
    expect(d.json()).toEqual({ method: 'DELETE', url: '/echo', body: '' });
  });

  it('FETCH-32 post and put send their body and return a Response', async () => {
    const p = await client.post(run, peer.url + 'echo', 'hello', {});
    expect(p.json()).toEqual({ method: 'POST', url: '/echo', body: 'hello' });
    const u = await client.put(run, peer.url + 'echo', new Uint8Array([104, 105]), {});
    expect(u.json()).toEqual({ method: 'PUT', url: '/echo', body: 'hi' });
    expect(linesNamed(last(), 'content-length')).toEqual(['2']);
  });

  it('FETCH-33 patch takes a body or null', async () => {
    expect((await client.patch(run, peer.url + 'echo', 'x', {})).json()).toEqual({
      method: 'PATCH',
      url: '/echo',
      body: 'x',
    });
    expect((await client.patch(run, peer.url + 'echo', null, {})).json()).toEqual({
      method: 'PATCH',
      url: '/echo',
      body: '',
    });
  });

  it('FETCH-34 send works for any method', async () => {
    expect((await client.send(run, 'OPTIONS', peer.url + 'echo', null, {})).json()).toMatchObject({
      method: 'OPTIONS',
    });
    expect((await client.send(run, 'PROPFIND', peer.url + 'echo', 'b', {})).json()).toMatchObject({
      method: 'PROPFIND',
      body: 'b',
    });
    const head = await client.send(run, 'HEAD', peer.url + 'echo', null, {});
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('FETCH-35 postJson, putJson, patchJson and sendJson write JSON under application/json', async () => {
    const value = { sku: 'a-1', qty: 2 };
    for (const [method, res] of [
      ['POST', await client.postJson(run, peer.url + 'echo', value, {})],
      ['PUT', await client.putJson(run, peer.url + 'echo', value, {})],
      ['PATCH', await client.patchJson(run, peer.url + 'echo', [1, 2], {})],
      ['DELETE', await client.sendJson(run, 'DELETE', peer.url + 'echo', value, {})],
    ] as const) {
      expect(res.json()).toMatchObject({ method });
      expect(linesNamed(last(), 'content-type')).toEqual(['application/json']);
    }
    expect(JSON.parse(last().body)).toEqual(value);
  });

  it('FETCH-36 a JSON call whose headers name a content type sends that one, once', async () => {
    await client.postJson(
      run,
      peer.url + 'echo',
      { a: 1 },
      { headers: [{ name: 'Content-Type', value: 'application/merge-patch+json' }] },
    );
    expect(linesNamed(last(), 'content-type')).toEqual(['application/merge-patch+json']);
  });

  it('REF-34 a JSON call given text is refused at run time before sending (and is a type error)', async () => {
    const before = peer.seen.length;
    // @ts-expect-error text goes through post
    const err = await rejection(client.postJson(run, peer.url + 'echo', 'already text', {}));
    expect(err.code).toBe('BadBody');
    expect(peer.seen.length).toBe(before);
  });

  it('FETCH-17 every field of the call options is optional: {} and no call at all are ordinary calls', async () => {
    expect((await client.get(run, peer.url, {})).status).toBe(200);
    expect((await client.get(run, peer.url)).status).toBe(200);
  });

  it('FETCH-37 the scope of a call is a Ctx or a Run: both shapes work', async () => {
    const asCtx: Scope = { requestId: () => 'req-1', signal: new AbortController().signal };
    expect((await client.get(asCtx, peer.url, {})).status).toBe(200);
    expect((await client.get(run, peer.url, {})).status).toBe(200);
  });

  it('FETCH-42 a 4xx or 5xx comes back as a Response, not an error', async () => {
    const a = await client.get(run, peer.url + 'status?s=404', {});
    expect(a.status).toBe(404);
    expect(a.ok).toBe(false);
    expect(a.body).toBe('status 404');
    const b = await client.get(run, peer.url + 'status?s=503', {});
    expect(b.status).toBe(503);
  });
});

describe('Response', () => {
  it('FETCH-25 FETCH-26 status is numeric and ok is true exactly for 200..299', async () => {
    for (const [s, ok] of [
      [200, true],
      [204, true],
      [299, true],
      [199 + 101, false],
      [302, false],
      [404, false],
      [500, false],
    ] as const) {
      const res = await client.get(run, peer.url + `status?s=${s}`, {});
      expect(res.status).toBe(s);
      expect(res.ok).toBe(ok);
    }
  });

  it('ok is a read-only property, as in fetch: `if (!res.ok) throw` throws for a 503, and ok cannot be set', async () => {
    const res = await client.get(run, peer.url + 'status?s=503', {});
    const guard = (): void => {
      if (!res.ok) throw new Error(`upstream answered ${res.status}`);
    };
    expect(guard).toThrow('upstream answered 503');
    expect(typeof res.ok).toBe('boolean');
    expect(() => {
      (res as { ok: boolean }).ok = true;
    }).toThrow(TypeError);
    expect(res.ok).toBe(false);
  });

  it('FETCH-27 body is the whole body as text (and bytes the same as a Buffer)', async () => {
    const res = await client.get(run, peer.url + 'headers', {});
    expect(res.body).toBe('hi');
    expect(res.bytes.equals(Buffer.from('hi'))).toBe(true);
  });

  it('FETCH-28 header(name) is case-insensitive and null when absent', async () => {
    const res = await client.get(run, peer.url + 'headers', {});
    expect(res.header('x-one')).toBe('a');
    expect(res.header('X-ONE')).toBe('a');
    expect(res.header('x-multi')).toBe('1, 2');
    expect(res.header('x-absent')).toBeNull();
    expect(res.header('constructor')).toBeNull();
  });

  it('FETCH-29 headers is the whole header block in order', async () => {
    const res = await client.get(run, peer.url + 'headers', {});
    const names = res.headers.map((h) => h.name);
    expect(names.slice(0, 4)).toEqual(['X-One', 'x-multi', 'X-Multi', 'Content-Type']);
    expect(res.headers.find((h) => h.name === 'X-Multi')?.value).toBe('2');
    expect(names).toContain('Date');
  });

  it('FETCH-30 json(T) parses into an instance of T and ignores unknown fields', async () => {
    class User {
      first = '';
      last = '';
      full(): string {
        return `${this.first} ${this.last}`;
      }
    }
    const res = await client.get(run, peer.url + 'user', {});
    const u = res.json(User);
    expect(u).toBeInstanceOf(User);
    expect(u.full()).toBe('Ada Lovelace');
    expect(res.json()).toEqual({ first: 'Ada', last: 'Lovelace', unknown: 1 });
  });
});

describe('headers', () => {
  it('FETCH-18 call headers are written in the order given', async () => {
    await client.get(run, peer.url, {
      headers: [
        { name: 'X-B', value: '1' },
        { name: 'X-A', value: '2' },
        { name: 'X-B', value: '3' },
      ],
    });
    const names = last()
      .rawHeaders.filter((_, i) => i % 2 === 0)
      .filter((n) => n.startsWith('X-'));
    expect(names).toEqual(['X-B', 'X-A', 'X-B']);
    expect(linesNamed(last(), 'x-b')).toEqual(['1', '3']);
  });

  it('FETCH-19 a call header with a client slot is sent exactly once, with the call value', async () => {
    await client.post(run, peer.url + 'echo', 'x', {
      headers: [
        { name: 'Host', value: 'example.test' },
        { name: 'Authorization', value: 'Bearer t' },
        { name: 'User-Agent', value: 'ua/1' },
        { name: 'Content-Type', value: 'text/plain' },
        { name: 'Connection', value: 'keep-alive' },
        { name: 'Accept-Encoding', value: 'br' },
      ],
    });
    const s = last();
    expect(linesNamed(s, 'host')).toEqual(['example.test']);
    expect(linesNamed(s, 'authorization')).toEqual(['Bearer t']);
    expect(linesNamed(s, 'user-agent')).toEqual(['ua/1']);
    expect(linesNamed(s, 'content-type')).toEqual(['text/plain']);
    expect(linesNamed(s, 'connection')).toHaveLength(1);
    expect(linesNamed(s, 'accept-encoding')).toEqual(['br']);
  });

  it('FETCH-19 a slot header named twice in a call is sent once, the last value', async () => {
    await client.get(run, peer.url, {
      headers: [
        { name: 'authorization', value: 'first' },
        { name: 'Authorization', value: 'second' },
      ],
    });
    expect(linesNamed(last(), 'authorization')).toEqual(['second']);
  });

  it('FETCH-43 every call sends Accept-Encoding: identity unless its headers name another', async () => {
    await client.get(run, peer.url, {});
    expect(linesNamed(last(), 'accept-encoding')).toEqual(['identity']);
    await client.postJson(run, peer.url, { a: 1 }, {});
    expect(linesNamed(last(), 'accept-encoding')).toEqual(['identity']);
  });

  it('FETCH-23 an accept-encoding call header is sent as written', async () => {
    await client.get(run, peer.url, {
      headers: [{ name: 'accept-encoding', value: 'gzip;q=1.0, br' }],
    });
    expect(linesNamed(last(), 'accept-encoding')).toEqual(['gzip;q=1.0, br']);
  });

  it('FETCH-24 a compressed answer fails HttpContentEncodingUnsupported, even when the call asked for it', async () => {
    const a = await rejection(client.get(run, peer.url + 'gzip', {}));
    expect(a).toBeInstanceOf(FetchError);
    expect(a.code).toBe('HttpContentEncodingUnsupported');
    const b = await rejection(
      client.get(run, peer.url + 'gzip', { headers: [{ name: 'Accept-Encoding', value: 'gzip' }] }),
    );
    expect(b.code).toBe('HttpContentEncodingUnsupported');
    // identity is no encoding
    expect((await client.get(run, peer.url + 'identity', {})).body).toBe('plain');
  });

  it('refuses header values with CR, LF or NUL and bad names before sending (BadHeader)', async () => {
    const before = peer.seen.length;
    for (const h of [
      { name: 'X-A', value: 'a\r\nInjected: 1' },
      { name: 'X-A', value: 'a\nb' },
      { name: 'X-A', value: 'a\0b' },
      { name: 'Bad Name', value: 'v' },
    ]) {
      const err = await rejection(client.get(run, peer.url, { headers: [h] }));
      expect(err.code).toBe('BadHeader');
    }
    expect(peer.seen.length).toBe(before);
  });
});

describe('request ids', () => {
  it('RID-10 a call under a Ctx sends its request id as X-Request-Id', async () => {
    await client.get(ctx('rid-42'), peer.url, {});
    expect(linesNamed(last(), 'x-request-id')).toEqual(['rid-42']);
  });

  it('RID-11 with forwardRequestId false no X-Request-Id is sent', async () => {
    const c = new Client({ forwardRequestId: false });
    c.start();
    await c.get(ctx('rid-43'), peer.url, {});
    expect(linesNamed(last(), 'x-request-id')).toEqual([]);
    await c.close();
  });

  it('RID-12 a call under a Run sends no X-Request-Id', async () => {
    await client.get(run, peer.url, {});
    expect(linesNamed(last(), 'x-request-id')).toEqual([]);
  });

  it('RID-13 a call naming its own X-Request-Id keeps it, sent once', async () => {
    await client.get(ctx('from-ctx'), peer.url, {
      headers: [{ name: 'X-Request-Id', value: 'mine' }],
    });
    expect(linesNamed(last(), 'x-request-id')).toEqual(['mine']);
  });
});

describe('withQuery', () => {
  it('FETCH-38 appends the params percent-encoded', () => {
    expect(
      withQuery(run, 'http://h/p', { q: 'a b&c', n: 7, yes: true, big: 9007199254740993n }),
    ).toBe('http://h/p?q=a%20b%26c&n=7&yes=true&big=9007199254740993');
  });

  it('FETCH-39 a null (or undefined) param is left out', () => {
    expect(withQuery(run, 'http://h/p', { a: null, b: 1, c: undefined })).toBe('http://h/p?b=1');
    expect(withQuery(run, 'http://h/p', { a: null })).toBe('http://h/p');
  });

  it('FETCH-40 joins with & when the base already has ?, else with ?', () => {
    expect(withQuery(run, 'http://h/p?x=1', { y: 2 })).toBe('http://h/p?x=1&y=2');
    expect(withQuery(run, 'http://h/p', { y: 2 })).toBe('http://h/p?y=2');
    expect(withQuery(run, 'http://h/p#frag', { y: 2 })).toBe('http://h/p?y=2#frag');
  });

  it('FETCH-41 REF-22 params are int, bool or text; anything else is refused naming the field', () => {
    const bad: Array<[string, unknown]> = [
      ['obj', { a: 1 }],
      ['list', [1]],
      ['when', new Date()],
      ['price', 9.5],
      ['fn', () => 1],
    ];
    for (const [name, value] of bad) {
      let err: unknown;
      try {
        withQuery(run, 'http://h/', { [name]: value } as never);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FetchError);
      expect((err as FetchError).code).toBe('BadQueryValue');
      expect((err as FetchError).message).toContain(`"${name}"`);
    }
  });

  it('FETCH-38 the URL it builds is the one a call uses', async () => {
    const res = await client.get(run, withQuery(run, peer.url + 'echo', { sku: 'a/b', n: 1 }), {});
    expect((res.json() as { url: string }).url).toBe('/echo?sku=a%2Fb&n=1');
  });
});

describe('errors', () => {
  it('FETCH-93 the codes table holds the spec codes, each a FetchError code', () => {
    for (const code of [
      'TimedOut',
      'Stalled',
      'Canceled',
      'RedirectRefused',
      'BodyTooLarge',
      'BodyTooShort',
      'NotStarted',
      'BaseNotAbsolute',
      'BaseHasQuery',
      'HttpContentEncodingUnsupported',
    ] as const) {
      expect(FETCH_ERRORS[code].doc.length).toBeGreaterThan(0);
      const e = new FetchError(code);
      expect(e).toBeInstanceOf(Error);
      expect(e.code).toBe(code);
      expect(e.name).toBe('FetchError');
    }
    expect(new FetchError('TimedOut').status).toBe(503);
    expect(new FetchError('BodyTooLarge').status).toBe(413);
  });
});
