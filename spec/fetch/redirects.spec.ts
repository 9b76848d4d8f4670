import { Readable } from 'node:stream';
import { Client, Exchange, FetchError, MAX_REDIRECTS, Target } from 'fw-http/fetch';
import { httpPeer, linesNamed, rejection, run, type HttpPeer } from './loopback';

let home: HttpPeer;
let away: HttpPeer;
let client: Client;

const secrets = [
  { name: 'Authorization', value: 'Bearer secret' },
  { name: 'Cookie', value: 'session=1' },
  { name: 'Proxy-Authorization', value: 'Basic eA==' },
  { name: 'X-Keep', value: 'kept' },
];

beforeAll(async () => {
  away = await httpPeer((_req, res, seen) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ where: 'away', method: seen.method, url: seen.url, body: seen.body }));
  });
  home = await httpPeer((req, res, seen) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const hop = (status: number, location: string) => {
      res.writeHead(status, { location, 'content-type': 'text/plain' });
      res.end('moved');
    };
    const chain = /^\/chain\/(\d+)$/.exec(u.pathname);
    if (chain) {
      const left = Number(chain[1]);
      return left > 0 ? hop(302, `/chain/${left - 1}`) : res.end('end of chain');
    }
    switch (u.pathname) {
      case '/loop':
        return hop(302, '/loop');
      case '/status':
        return hop(Number(u.searchParams.get('s')), '/echo');
      case '/to-away':
        return hop(302, `${away.origin}/landed`);
      case '/same-origin':
        return hop(301, '/echo');
      case '/ftp':
        return hop(302, 'ftp://files.example/x');
      case '/no-location':
        res.statusCode = 302;
        return res.end('no location');
      case '/not-modified':
        res.writeHead(304, { location: '/echo' });
        return res.end();
      case '/echo':
        res.setHeader('content-type', 'application/json');
        return res.end(
          JSON.stringify({ where: 'home', method: seen.method, url: seen.url, body: seen.body }),
        );
      default:
        res.end('ok');
    }
  });
  client = new Client();
  client.start();
});

afterAll(async () => {
  await client.close();
  await home.close();
  await away.close();
});

const lastAt = (p: HttpPeer) => p.seen[p.seen.length - 1];

describe('client.get and siblings', () => {
  it('FETCH-44 get follows redirects, up to three hops; the Response says where it ended', async () => {
    expect(MAX_REDIRECTS).toBe(3);
    const res = await client.get(run, home.url + 'chain/3', {});
    expect(res.status).toBe(200);
    expect(res.body).toBe('end of chain');
    expect(res.redirected?.pathname).toBe('/chain/0');
    const direct = await client.get(run, home.url + 'chain/0', {});
    expect(direct.redirected).toBeNull();
  });

  it('OPEN-37 a fourth hop, or a loop, fails TooManyRedirects', async () => {
    const four = await rejection(client.get(run, home.url + 'chain/4', {}));
    expect(four).toBeInstanceOf(FetchError);
    expect(four.code).toBe('TooManyRedirects');
    expect((await rejection(client.get(run, home.url + 'loop', {}))).code).toBe('TooManyRedirects');
  });

  it('OPEN-37 303 becomes a GET without body; so do 301 and 302 after a POST', async () => {
    for (const s of [303, 301, 302]) {
      const res = await client.post(run, home.url + `status?s=${s}`, 'payload', {
        headers: [{ name: 'Content-Type', value: 'text/plain' }],
      });
      expect(res.json()).toEqual({ where: 'home', method: 'GET', url: '/echo', body: '' });
      expect(linesNamed(lastAt(home), 'content-type')).toEqual([]);
      expect(linesNamed(lastAt(home), 'content-length')).toEqual([]);
    }
  });

  it('OPEN-37 307 and 308 resend the method and the body', async () => {
    for (const s of [307, 308]) {
      const res = await client.put(run, home.url + `status?s=${s}`, 'payload', {});
      expect(res.json()).toEqual({ where: 'home', method: 'PUT', url: '/echo', body: 'payload' });
    }
  });

  it('OPEN-37 a hop to another origin drops Authorization, Cookie and Proxy-Authorization', async () => {
    const res = await client.get(run, home.url + 'to-away', { headers: secrets });
    expect(res.json()).toMatchObject({ where: 'away', url: '/landed' });
    const s = lastAt(away);
    expect(linesNamed(s, 'authorization')).toEqual([]);
    expect(linesNamed(s, 'cookie')).toEqual([]);
    expect(linesNamed(s, 'proxy-authorization')).toEqual([]);
    expect(linesNamed(s, 'x-keep')).toEqual(['kept']);
  });

  it('OPEN-37 a hop within the origin keeps them', async () => {
    await client.get(run, home.url + 'same-origin', { headers: secrets });
    const s = lastAt(home);
    expect(s.url).toBe('/echo');
    expect(linesNamed(s, 'authorization')).toEqual(['Bearer secret']);
    expect(linesNamed(s, 'cookie')).toEqual(['session=1']);
  });

  it("OPEN-37 a target's standing authorization is dropped too when a redirect leaves its origin", async () => {
    const api = Target('api').open(client, { base: home.origin, authorization: 'Bearer standing' });
    const res = await api.get(run, '/to-away');
    expect(res.json()).toMatchObject({ where: 'away' });
    expect(linesNamed(lastAt(away), 'authorization')).toEqual([]);
  });

  it("a target's standing headers (where API keys live) are dropped when a followed redirect leaves its origin, and kept within it", async () => {
    const api = Target('keyed').open(client, {
      base: home.origin,
      authorization: 'Bearer standing',
      userAgent: 'fw-test',
      headers: [
        { name: 'X-Api-Key', value: 'k-123' },
        { name: 'X-Tenant', value: 't-9' },
      ],
    });
    const away_ = await api.get(run, '/to-away');
    expect(away_.json()).toMatchObject({ where: 'away', url: '/landed' });
    const atAway = lastAt(away);
    expect(linesNamed(atAway, 'x-api-key')).toEqual([]);
    expect(linesNamed(atAway, 'x-tenant')).toEqual([]);
    expect(linesNamed(atAway, 'authorization')).toEqual([]);
    expect(linesNamed(atAway, 'user-agent')).toEqual(['fw-test']); // not a credential
    // A call line that shadows a standing header names the same credential: dropped too.
    await api.get(
      run,
      '/to-away',
      {},
      {
        headers: [
          { name: 'x-api-key', value: 'k-call' },
          { name: 'X-Trace', value: 'tr' },
        ],
      },
    );
    expect(linesNamed(lastAt(away), 'x-api-key')).toEqual([]);
    expect(linesNamed(lastAt(away), 'x-trace')).toEqual(['tr']);
    // Within the origin every standing header still goes.
    await api.get(run, '/same-origin');
    const atHome = lastAt(home);
    expect(atHome.url).toBe('/echo');
    expect(linesNamed(atHome, 'x-api-key')).toEqual(['k-123']);
    expect(linesNamed(atHome, 'x-tenant')).toEqual(['t-9']);
    expect(linesNamed(atHome, 'authorization')).toEqual(['Bearer standing']);
  });

  it('a redirect to a scheme other than http(s) fails RedirectRefused', async () => {
    expect((await rejection(client.get(run, home.url + 'ftp', {}))).code).toBe('RedirectRefused');
  });

  it('a 3xx without Location, and a 304, come back as Responses', async () => {
    expect((await client.get(run, home.url + 'no-location', {})).status).toBe(302);
    expect((await client.get(run, home.url + 'not-modified', {})).status).toBe(304);
  });
});

describe('Exchange redirects', () => {
  it("FETCH-79 FETCH-45 redirects default to 'refuse': a 3xx with Location fails RedirectRefused", async () => {
    const before = home.seen.length;
    const ex = new Exchange();
    const err = await rejection(ex.begin(client, { url: home.url + 'chain/1' }));
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('RedirectRefused');
    await ex.end();
    expect(home.seen.length - before).toBe(1); // not followed, while client.get does follow:
    expect((await client.get(run, home.url + 'chain/1', {})).body).toBe('end of chain');
  });

  it("FETCH-80 FETCH-81 FETCH-77 'follow' follows at most 3 hops and says where the chain ended", async () => {
    const ex = new Exchange();
    const head = await ex.begin(client, { url: home.url + 'chain/3', redirects: 'follow' });
    expect(head.status).toBe(200);
    expect(head.redirected).toBeInstanceOf(URL);
    expect(head.redirected?.href).toBe(home.url + 'chain/0');
    expect(head.location()).toBe(home.url + 'chain/0');
    expect(await ex.take(run, 100)).toBe('end of chain');
    await ex.end();
    const four = new Exchange();
    expect(
      (await rejection(four.begin(client, { url: home.url + 'chain/4', redirects: 'follow' })))
        .code,
    ).toBe('TooManyRedirects');
    await four.end();
  });

  it('FETCH-81 OPEN-68 redirected and location() are null when nothing was followed', async () => {
    const ex = new Exchange();
    const head = await ex.begin(client, { url: home.url + 'chain/0', redirects: 'follow' });
    expect(head.redirected).toBeNull();
    expect(head.location()).toBeNull();
    await ex.end();
  });

  it("FETCH-82 'expose' returns the 3xx itself, and the authorization never reaches the other host", async () => {
    const before = away.seen.length;
    const ex = new Exchange();
    const head = await ex.begin(client, {
      url: home.url + 'to-away',
      redirects: 'expose',
      authorization: 'Bearer signed',
    });
    expect(head.status).toBe(302);
    expect(head.header('location')).toBe(`${away.origin}/landed`);
    expect(head.redirected).toBeNull();
    expect(head.location()).toBeNull(); // OPEN-68: not the Location header
    expect(await ex.take(run, 100)).toBe('moved');
    await ex.end();
    expect(away.seen.length).toBe(before);
  });

  it("'follow' refuses a 307 that would resend a stream body", async () => {
    const ex = new Exchange();
    const err = await rejection(
      ex.begin(client, {
        method: 'POST',
        url: home.url + 'status?s=307',
        redirects: 'follow',
        body: { kind: 'stream', stream: Readable.from(['abc']), length: 3 },
      }),
    );
    expect(err.code).toBe('RedirectRefused');
    await ex.end();
  });
});
