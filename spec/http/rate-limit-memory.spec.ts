import { secondsLeft } from '../../lib/http/features/rate-limit';
import { performance } from 'node:perf_hooks';
import { App, Controller, Post, RateLimit } from 'fw-http';
import { MemoryRateStore, type RateStore } from 'fw-http/cache';
import { post } from '../support/post';
import { limitedRoutes, serve, sleep } from '../support/rate-apps';

// @RateLimit's settings besides the Redis store: a sliding window counted in this process, a
// store of the program's own (MemoryRateStore) given as the app's rateStore, the settings it
// refuses, and what the API description lists.

let runs = 0;
const Limited = limitedRoutes({ sliding: 2, open: 1, closed: 1 }, () => runs++);

describe('@RateLimit in this process', () => {
  it('FAIL-27 sliding window at its edge without a store: max passes, one past is 429, Retry-After a half into the next window', async () => {
    const span = 60_000;
    // The window is aligned to this process's performance.now(): start clear of its edge.
    const into = performance.now() % span;
    if (into > span - 2_000) await sleep(span - into + 50);
    await serve(new App({ log: () => {} }).controllers(Limited), async (port) => {
      expect((await post(port, '/sliding')).status).toBe(200);
      expect((await post(port, '/sliding')).status).toBe(200);
      const before = performance.now();
      const over = await post(port, '/sliding');
      const after = performance.now();
      expect([over.status, JSON.parse(over.body)]).toEqual([
        429,
        { error: 'at most 2 requests per 60 s', status: 429 },
      ]);
      // 2 counted and none before: the estimate falls to 1 half into the next window.
      const expected = (t: number) =>
        Math.ceil(((Math.floor(t / span) + 1) * span + span / 2 - t) / 1000);
      const ra = Number(over.retryAfter);
      expect(ra).toBeGreaterThanOrEqual(expected(after));
      expect(ra).toBeLessThanOrEqual(expected(before));
      expect((await post(port, '/sliding', '127.0.0.2')).status).toBe(200);
    });
  });

  it('storeDown applies only to a store: without one, a closed limit counts in this process as before', async () => {
    await serve(new App({ log: () => {} }).controllers(Limited), async (port) => {
      expect((await post(port, '/closed')).status).toBe(200);
      expect((await post(port, '/closed')).status).toBe(429);
    });
  });
});

describe('@RateLimit over a MemoryRateStore given as the app rateStore', () => {
  it('FAIL-27 two apps sharing one MemoryRateStore share one allowance', async () => {
    const store = new MemoryRateStore();
    const a = new App({ log: () => {}, rateStore: store }).controllers(Limited);
    const b = new App({ log: () => {}, rateStore: store }).controllers(Limited);
    await serve(a, (pa) =>
      serve(b, async (pb) => {
        expect((await post(pa, '/sliding')).status).toBe(200);
        expect((await post(pb, '/sliding')).status).toBe(200);
        expect((await post(pa, '/sliding')).status).toBe(429);
        expect((await post(pb, '/sliding')).status).toBe(429);
      }),
    );
  });

  it('a store that fails: open admits uncounted with one error line, closed is 503 with Retry-After', async () => {
    const store = new MemoryRateStore();
    await store.close();
    const lines: string[] = [];
    runs = 0;
    await serve(
      new App({ log: (l) => lines.push(l), rateStore: store }).controllers(Limited),
      async (port) => {
        expect((await post(port, '/open')).status).toBe(200);
        expect((await post(port, '/open')).status).toBe(200);
        const closed = await post(port, '/closed');
        expect([closed.status, closed.retryAfter, JSON.parse(closed.body)]).toEqual([
          503,
          '1',
          { error: 'POST /closed: rate-limit store unavailable', status: 503 },
        ]);
        expect(runs).toBe(2);
      },
    );
    const down = lines.filter((l) => l.includes('rate-limit store unreachable'));
    expect(down).toHaveLength(1);
    expect(JSON.parse(down[0]!)).toMatchObject({
      level: 50,
      err: { type: 'CacheError', code: 'Unavailable' },
    });
  });

  it('the failure shape of the app is the body of a fail-closed 503', async () => {
    const store = new MemoryRateStore();
    await store.close();
    const app = new App({ log: () => {}, rateStore: store })
      .controllers(Limited)
      .failures({ failure: (status, message) => ({ problem: message, code: status }) });
    await serve(app, async (port) => {
      const res = await post(port, '/closed');
      expect([res.status, JSON.parse(res.body)]).toEqual([
        503,
        { problem: 'POST /closed: rate-limit store unavailable', code: 503 },
      ]);
    });
  });
});

describe('@RateLimit settings and description', () => {
  it('refuses a window, a storeDown or a rateStore it cannot use, naming the route', () => {
    const build = (mark: object, rateStore?: RateStore) => {
      @Controller()
      class Bad {
        @Post('/x') @RateLimit({ max: 1, perSeconds: 1, ...mark }) x() {}
      }
      return () =>
        new App({ log: () => {}, ...(rateStore ? { rateStore } : {}) }).controllers(Bad).build();
    };
    expect(build({ window: 'rolling' })).toThrow(/POST \/x.*window must be 'fixed' or 'sliding'/s);
    expect(build({ storeDown: 'maybe' })).toThrow(
      /POST \/x.*storeDown must be 'open' or 'closed'/s,
    );
    expect(build({}, {} as RateStore)).toThrow(/POST \/x.*rateStore has no hit\(rule, key\)/s);
    expect(build({ perSeconds: 0.0001 }, new MemoryRateStore())).toThrow(
      /POST \/x.*perSeconds × 1000 must be a whole number of ms from 1, got 0.1/s,
    );
    // Counting in the process too: the route is named, not just the table's setting.
    expect(build({ max: 0 })).toThrow(
      /POST \/x.*@RateLimit: max must be a whole number from 1, got 0/s,
    );
  });

  it('OpenAPI lists 429 with Retry-After on every limited route, and 503 with it on a limit that fails closed', () => {
    const doc = new App({ log: () => {} }).controllers(Limited).document();
    const op = (path: string) =>
      (
        doc.paths[path] as Record<
          string,
          {
            responses: Record<
              string,
              { description: string; headers: Record<string, { schema: object }> }
            >;
          }
        >
      ).post!.responses;
    for (const path of ['/sliding', '/open', '/closed'])
      expect(op(path)['429'].headers['Retry-After'].schema).toEqual({ type: 'integer' });
    expect(op('/sliding')['429'].description).toMatch(/sliding window/);
    expect(op('/open')['503']).toBeUndefined();
    expect(op('/closed')['503'].headers['Retry-After'].schema).toEqual({ type: 'integer' });
    expect(op('/closed')['503'].description).toMatch(/rate-limit store cannot be reached/);
  });
});

describe('RateLimit t= never exceeds the window', () => {
  it('a window start plus its span, less now, a hair over the span in floating point, is still t=60 for a 60 s window (CI saw t=61)', () => {
    const now = 128537.21790187956;
    const left = now + 60_000 - now; // 60000.000000000015
    expect(Math.ceil(left / 1000)).toBe(61); // what the header said before
    expect(secondsLeft(left, 60)).toBe(60);
    expect(secondsLeft(0.2, 60)).toBe(1);
    expect(secondsLeft(59_001, 60)).toBe(60);
  });
});
