import { type DataPoint } from '@opentelemetry/sdk-metrics';
import { z } from 'zod';
import { App, Body, Controller, Post, RateLimit, Returns, type Infer } from 'fw-http';
import { MemoryRateStore } from 'fw-http/cache';
import { clientPrefix } from '../../lib/http/features/client-prefix';
import { EvictionNotice, EVICTION_LOG_EVERY_MS } from '../../lib/http/features/eviction-notice';
import { globalMetricReader } from '../support/metric-reader';
import { post, send } from '../support/post';
import { serve } from '../support/rate-apps';

// Who a rate limit counts as one client (an IPv4 address, an IPv6 /64), and what happens past
// maxAddresses: the least recently seen client's window is forgotten, counted and logged.

const reader = globalMetricReader();

async function evictionsOf(route: string): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  let n = 0;
  for (const scope of resourceMetrics.scopeMetrics)
    for (const m of scope.metrics)
      if (m.descriptor.name === 'fw.rate_limit.evictions')
        for (const p of m.dataPoints as DataPoint<number>[])
          if (p.attributes['http.route'] === route) n += p.value;
  return n;
}

const Credentials = z.object({ account: z.enum(['alice', 'bob']) });

@Controller()
class Limited {
  @Returns(Object)
  @Post('/per-64')
  @RateLimit({ max: 1, perSeconds: 60 })
  per64() {
    return { ok: true };
  }

  @Returns(Object)
  @Post('/per-address')
  @RateLimit({ max: 1, perSeconds: 60, ipv6PrefixBits: 128 })
  perAddress() {
    return { ok: true };
  }

  @Returns(Object)
  @Post('/per-48')
  @RateLimit({ max: 1, perSeconds: 60, ipv6PrefixBits: 48 })
  per48() {
    return { ok: true };
  }

  @Returns(Object)
  @Post('/two-clients')
  @RateLimit({ max: 1, perSeconds: 60, maxAddresses: 2 })
  twoClients() {
    return { ok: true };
  }

  @Returns(Object)
  @Post('/login')
  @RateLimit({ max: 2, perSeconds: 60 })
  login(@Body(Credentials) body: Infer<typeof Credentials>) {
    return { account: body.account };
  }
}

/** A POST as the client `address`, told to the app by its trusted loopback proxy. */
const from = (port: number, path: string, address: string) =>
  send(port, path, { headers: { 'x-forwarded-for': address } });

const behindProxy = (log: (line: string) => void = () => {}) =>
  new App({ log, trustProxy: 'loopback' }).controllers(Limited);

describe('who a rate limit counts as one client', () => {
  it('two IPv6 addresses in one /64 share a window; an address in another /64 has its own', async () => {
    await serve(behindProxy(), async (port) => {
      expect((await from(port, '/per-64', '2001:db8:0:7::1')).status).toBe(200);
      expect((await from(port, '/per-64', '2001:db8:0:7:ffff:ffff:ffff:fffe')).status).toBe(429);
      expect((await from(port, '/per-64', '2001:DB8:0:7:0:0:0:9')).status).toBe(429);
      expect((await from(port, '/per-64', '2001:db8:0:8::1')).status).toBe(200);
    });
  });

  it('ipv6PrefixBits sets the prefix: 128 counts every address apart, 48 groups a /48', async () => {
    await serve(behindProxy(), async (port) => {
      expect((await from(port, '/per-address', '2001:db8:0:7::1')).status).toBe(200);
      expect((await from(port, '/per-address', '2001:db8:0:7::2')).status).toBe(200);
      expect((await from(port, '/per-address', '2001:db8::7:0:0:0:1')).status).toBe(429);
      expect((await from(port, '/per-48', '2001:db8:1:1::1')).status).toBe(200);
      expect((await from(port, '/per-48', '2001:db8:1:ffff::1')).status).toBe(429);
      expect((await from(port, '/per-48', '2001:db8:2::1')).status).toBe(200);
    });
  });

  it('an IPv4-mapped IPv6 address counts as its IPv4 address, however it is spelled; IPv4 addresses are counted one by one', async () => {
    await serve(behindProxy(), async (port) => {
      expect((await from(port, '/per-64', '10.0.0.1')).status).toBe(200);
      expect((await from(port, '/per-64', '::ffff:10.0.0.1')).status).toBe(429);
      expect((await from(port, '/per-64', '::ffff:a00:1')).status).toBe(429);
      expect((await from(port, '/per-64', '0:0:0:0:0:ffff:0a00:0001')).status).toBe(429);
      expect((await from(port, '/per-64', '10.0.0.2')).status).toBe(200);
      expect((await from(port, '/per-64', '::ffff:10.0.0.3')).status).toBe(200);
    });
  });

  it('clientPrefix: IPv4 as it is, mapped IPv6 as IPv4, IPv6 cut to its prefix (zone ignored), anything else as it is', () => {
    expect(clientPrefix('192.0.2.1', 64)).toBe('192.0.2.1');
    expect(clientPrefix('::ffff:192.0.2.1', 64)).toBe('192.0.2.1');
    expect(clientPrefix('::ffff:c000:201', 64)).toBe('192.0.2.1');
    expect(clientPrefix('2001:db8:0:7:1:2:3:4', 64)).toBe('2001:db8:0:7/64');
    expect(clientPrefix('2001:db8::7:1:2:3:4', 64)).toBe('2001:db8:0:7/64');
    expect(clientPrefix('fe80::1%eth0', 64)).toBe('fe80:0:0:0/64');
    expect(clientPrefix('::1', 128)).toBe('0:0:0:0:0:0:0:1/128');
    expect(clientPrefix('2001:db8:abcd:ef01::', 52)).toBe('2001:db8:abcd:e000/52');
    expect(clientPrefix('2001:db8::', 1)).toBe('0/1');
    expect(clientPrefix('::ffff:1.2.3.4', 128)).toBe('1.2.3.4');
    expect(clientPrefix('unknown', 64)).toBe('unknown');
    expect(clientPrefix('_hidden:x', 64)).toBe('_hidden:x');
  });

  it('refuses an ipv6PrefixBits that is not a whole number from 1 to 128, naming the route', () => {
    for (const bits of [0, 129, 64.5]) {
      @Controller()
      class Bad {
        @Post('/x') @RateLimit({ max: 1, perSeconds: 1, ipv6PrefixBits: bits }) x() {}
      }
      expect(() => new App({ log: () => {} }).controllers(Bad).build()).toThrow(
        /POST \/x.*ipv6PrefixBits must be a whole number from 1 to 128/s,
      );
    }
  });
});

describe('past maxAddresses', () => {
  it('evictions are counted in fw.rate_limit.evictions by route, and logged at the first and then at most once a minute', async () => {
    const lines: string[] = [];
    await serve(
      behindProxy((l) => lines.push(l)),
      async (port) => {
        const before = await evictionsOf('/two-clients');
        for (const client of ['10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5'])
          expect((await from(port, '/two-clients', client)).status).toBe(200);
        expect((await evictionsOf('/two-clients')) - before).toBe(3);
      },
    );
    const warned = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; evictions?: number })
      .filter((l) => l.msg.includes('least recently seen'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, evictions: 1, maxAddresses: 2 });
    expect(warned[0]!.msg).toMatch(/^POST \/two-clients counts as many clients as it keeps \(2\)/);
  });

  it('over a MemoryRateStore given as the app rateStore, a new client is served and the eviction counted', async () => {
    const store = new MemoryRateStore();
    const app = new App({ log: () => {}, rateStore: store, trustProxy: 'loopback' });
    await serve(app.controllers(Limited), async (port) => {
      const before = await evictionsOf('/two-clients');
      for (const client of ['10.2.0.1', '10.2.0.2', '10.2.0.3'])
        expect((await from(port, '/two-clients', client)).status).toBe(200);
      expect((await from(port, '/two-clients', '10.2.0.3')).status).toBe(429);
      expect((await evictionsOf('/two-clients')) - before).toBe(1);
    });
  });

  it('the log says how many windows were forgotten since its last line, at most one line a minute', () => {
    const notice = new EvictionNotice();
    expect(notice.add(1, 1_000)).toBe(1);
    expect(notice.add(1, 1_001)).toBe(0);
    expect(notice.add(2, 1_000 + EVICTION_LOG_EVERY_MS - 1)).toBe(0);
    expect(notice.add(1, 1_000 + EVICTION_LOG_EVERY_MS)).toBe(4);
    expect(notice.add(1, 1_000 + 2 * EVICTION_LOG_EVERY_MS - 1)).toBe(0);
    expect(EVICTION_LOG_EVERY_MS).toBe(60_000);
  });
});

describe('what a rate limit counts', () => {
  it('a request refused by validation (400) counts against the limit: the limit runs before the body is read', async () => {
    await serve(new App({ log: () => {} }).controllers(Limited), async (port) => {
      const bad = { method: 'POST', headers: { 'content-type': 'application/json' } };
      const invalid = await send(port, '/login', bad);
      expect(invalid.status).toBe(400);
      expect(invalid.headers['ratelimit']).toBe('"default";r=1;t=60');
      expect((await send(port, '/login', bad)).status).toBe(400);
      // Two refused by validation: the allowance of 2 is used, a valid body is now 429.
      const over = await post(port, '/login');
      expect([over.status, Number(over.retryAfter) > 0]).toEqual([429, true]);
    });
  });
});
