import { App, Controller, Ctx, Get, RateLimit, Returns, type AppOptions } from 'fw-http';

// Behind a proxy: c.ip, c.protocol and c.host through trusted hops only; rate limits
// keyed by that client; the IETF RateLimit headers. Over real sockets from 127.0.0.1.

@Controller()
class WhoController {
  @Get('/who')
  @Returns(Object)
  who(c: Ctx) {
    return { ip: c.ip, protocol: c.protocol, host: c.host };
  }

  @Get('/limited')
  @RateLimit({ max: 2, perSeconds: 60 })
  @Returns(Object)
  limited() {
    return { ok: true };
  }
}

async function withApp<T>(options: AppOptions, run: (url: string) => Promise<T>): Promise<T> {
  const app = new App({ log: () => {}, ...options }).controllers(WhoController);
  const { url } = await app.listen({ port: 0 });
  try {
    return await run(url);
  } finally {
    await app.close();
  }
}

const who = async (url: string, headers: Record<string, string>) =>
  (await (await fetch(`${url}/who`, { headers })).json()) as {
    ip: string;
    protocol: string;
    host: string;
  };

describe('trustProxy', () => {
  it('without trustProxy, X-Forwarded-* and Forwarded from the peer are ignored', async () => {
    await withApp({}, async (url) => {
      const r = await who(url, {
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        forwarded: 'for=198.51.100.1;proto=https;host=evil.example',
      });
      expect(r).toEqual({ ip: '127.0.0.1', protocol: 'http', host: new URL(url).host });
    });
  });

  it('a hop count trusts that many proxies from the peer outwards', async () => {
    await withApp({ trustProxy: 1 }, async (url) => {
      const r = await who(url, {
        'x-forwarded-for': '198.51.100.7, 203.0.113.9',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'shop.example',
      });
      expect(r).toEqual({ ip: '203.0.113.9', protocol: 'https', host: 'shop.example' });
    });
    await withApp({ trustProxy: 2 }, async (url) => {
      expect((await who(url, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' })).ip).toBe(
        '198.51.100.7',
      );
    });
  });

  it('a CIDR list trusts only the hops inside it; Forwarded (RFC 7239) wins over X-Forwarded-For', async () => {
    await withApp({ trustProxy: ['loopback', '10.0.0.0/8'] }, async (url) => {
      expect((await who(url, { 'x-forwarded-for': '198.51.100.7, 10.1.2.3' })).ip).toBe(
        '198.51.100.7',
      );
      const r = await who(url, {
        forwarded: 'for=192.0.2.60;proto=https;host=a.example, for="[2001:db8::1]:4711"',
        'x-forwarded-for': '203.0.113.200',
      });
      expect(r.ip).toBe('2001:db8::1');
    });
    // A list that does not hold the peer: nothing forwarded is read.
    await withApp({ trustProxy: '10.0.0.0/8' }, async (url) => {
      expect((await who(url, { 'x-forwarded-for': '203.0.113.9' })).ip).toBe('127.0.0.1');
    });
  });

  it('a function decides per address and hop', async () => {
    const asked: [string, number][] = [];
    const trustProxy = (address: string, hop: number) => {
      asked.push([address, hop]);
      return hop === 0;
    };
    await withApp({ trustProxy }, async (url) => {
      expect((await who(url, { 'x-forwarded-for': '203.0.113.9' })).ip).toBe('203.0.113.9');
    });
    expect(asked).toEqual([
      ['127.0.0.1', 0],
      ['203.0.113.9', 1],
    ]);
  });

  it('a bad trustProxy entry throws naming it', () => {
    expect(() => new App({ trustProxy: ['10.0.0.0/33'] })).toThrow(
      /"10\.0\.0\.0\/33" is not an address or CIDR range/,
    );
    expect(() => new App({ trustProxy: -1 })).toThrow(/hop count/);
  });
});

describe('rate limits key on the trusted client, with the IETF RateLimit headers', () => {
  const hit = (url: string, xff: string) =>
    fetch(`${url}/limited`, { headers: { 'x-forwarded-for': xff } });

  it('a spoofed X-Forwarded-For from an untrusted peer cannot change its allowance', async () => {
    await withApp({}, async (url) => {
      const statuses = [];
      for (const xff of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'])
        statuses.push((await hit(url, xff)).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
    });
  });

  it('behind a trusted proxy each client has its own allowance', async () => {
    await withApp({ trustProxy: 'loopback' }, async (url) => {
      const statuses = [];
      for (const xff of ['203.0.113.1', '203.0.113.2', '203.0.113.1', '203.0.113.1'])
        statuses.push((await hit(url, xff)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });
  });

  it('RateLimit-Policy and RateLimit count down; the 429 carries Retry-After and r=0', async () => {
    await withApp({}, async (url) => {
      const a = await fetch(`${url}/limited`);
      expect(a.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
      expect(a.headers.get('ratelimit')).toMatch(/^"default";r=1;t=(60|59)$/);
      const b = await fetch(`${url}/limited`);
      expect(b.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
      const c = await fetch(`${url}/limited`);
      expect(c.status).toBe(429);
      expect(c.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
      expect(Number(c.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(c.headers.get('ratelimit-policy')).toBe('"default";q=2;w=60');
    });
  });
});
