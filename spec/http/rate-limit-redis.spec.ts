import { App, Controller, Post, RateLimit, Returns } from 'fw-http';
import { RedisStore } from 'fw-http/cache';
import { post, send } from '../support/post';
import { limitedRoutes, sleep } from '../support/rate-apps';
import { startRedis, type RedisServer } from '../support/redis';

// @RateLimit over a RedisStore shared by several App instances: one allowance for all of them,
// fixed and sliding windows at their edges, and what a limit does while Redis is down (fail open
// or closed, as the route declares). Real sockets, a real redis-server per file.

let runs = 0;

@Controller()
class LoginController {
  @Returns(Object)
  @Post('/login')
  @RateLimit({ max: 5, perSeconds: 60 })
  login() {
    runs++;
    return { ok: true };
  }

  @Returns(Object)
  @Post('/short')
  @RateLimit({ max: 2, perSeconds: 1 })
  short() {
    return { ok: true };
  }
}
const Limited = limitedRoutes({ sliding: 3, open: 2, closed: 2 }, () => runs++);

let server: RedisServer;
let prefixes = 0;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(async () => {
  while (closing.length) await closing.pop()!();
});

/** `n` apps on their own ports, each with its own RedisStore on the one server, sharing a key prefix. */
async function instances(n: number, lines: string[] = []) {
  const prefix = `rl-${++prefixes}:`;
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const store = new RedisStore({ url: server.url, keyPrefix: prefix, commandTimeoutMs: 300 });
    const app = new App({ log: (l) => lines.push(l), rateStore: store }).controllers(
      LoginController,
      Limited,
    );
    ports.push((await app.listen({ port: 0 })).port);
    closing.push(
      () => store.close(),
      () => app.close(),
    );
  }
  return ports;
}

/** Posts every 100 ms, up to 40 times, until one is admitted (the store answers again); the last status. */
async function untilAdmitted(port: number, path: string, address: string): Promise<number> {
  let status = 0;
  for (let i = 0; i < 40 && status !== 200; i++) {
    await sleep(100);
    status = (await post(port, path, address)).status;
  }
  return status;
}

/** Until every instance has logged that its rate store answers again (at most 4 s), prodding each from an address of its own. */
async function untilCounting(ports: number[], lines: string[]): Promise<void> {
  const back = () => lines.filter((l) => l.includes('rate-limit store answers again')).length;
  for (let i = 0; i < 40 && back() < ports.length; i++) {
    await sleep(100);
    for (const port of ports) await post(port, '/open', '127.0.0.9');
  }
  expect(back()).toBe(ports.length);
}

describe('@RateLimit over a shared RedisStore', () => {
  it('admitted answers say what is left across instances: RateLimit r counts down, fixed and sliding', async () => {
    const [a, b] = await instances(2);
    const fixed: string[] = [];
    for (let i = 0; i < 3; i++)
      fixed.push(
        String(
          (await send(i % 2 === 0 ? a! : b!, '/login', { localAddress: '127.0.0.21' })).headers
            .ratelimit,
        ),
      );
    expect(fixed.map((h) => /r=(\d+)/.exec(h)?.[1])).toEqual(['4', '3', '2']);
    expect(fixed[0]).toMatch(/^"default";r=4;t=(59|60)$/);
    const sliding: string[] = [];
    for (let i = 0; i < 3; i++)
      sliding.push(
        String(
          (await send(i % 2 === 0 ? b! : a!, '/sliding', { localAddress: '127.0.0.22' })).headers
            .ratelimit,
        ),
      );
    expect(sliding.map((h) => /r=(\d+)/.exec(h)?.[1])).toEqual(['2', '1', '0']);
    const over = await send(a!, '/sliding', { localAddress: '127.0.0.22' });
    expect(over.status).toBe(429);
    expect(over.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
  });

  it('FAIL-27 two App instances on two ports sharing one redis-server enforce one allowance', async () => {
    const [a, b] = await instances(2);
    runs = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(i % 2 === 0 ? a! : b!, '/login')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    // The sixth, whichever instance gets it, is over the one allowance.
    const sixth = await post(b!, '/login');
    expect(sixth.status).toBe(429);
    expect(JSON.parse(sixth.body)).toEqual({ error: 'at most 5 requests per 60 s', status: 429 });
    expect(Number(sixth.retryAfter)).toBeGreaterThanOrEqual(59);
    expect(Number(sixth.retryAfter)).toBeLessThanOrEqual(60);
    expect((await post(a!, '/login')).status).toBe(429);
    expect(runs).toBe(5);
    // Another address has its own allowance on both.
    expect((await post(a!, '/login', '127.0.0.2')).status).toBe(200);
    expect((await post(b!, '/login', '127.0.0.2')).status).toBe(200);
  });

  it('FAIL-27 fixed window at its edge: max passes, one past is 429 with Retry-After 1, and the next window admits again', async () => {
    const [a, b] = await instances(2);
    expect((await post(a!, '/short')).status).toBe(200);
    expect((await post(b!, '/short')).status).toBe(200);
    const over = await post(a!, '/short');
    expect([over.status, over.retryAfter]).toEqual([429, '1']);
    await sleep(1_050);
    expect((await post(b!, '/short')).status).toBe(200);
  });

  it('FAIL-27 sliding window at its edge: max passes, one past is 429, Retry-After is when the weighted count drops below max', async () => {
    const [a, b] = await instances(2);
    const span = 60_000;
    // Three requests straddling a minute would count in two windows: start clear of the edge.
    const into = Date.now() % span;
    if (into > span - 2_000) await sleep(span - into + 50);
    expect((await post(a!, '/sliding')).status).toBe(200);
    expect((await post(b!, '/sliding')).status).toBe(200);
    expect((await post(a!, '/sliding')).status).toBe(200);
    const before = Date.now();
    const over = await post(b!, '/sliding');
    const after = Date.now();
    expect(over.status).toBe(429);
    // Windows are aligned to the Redis server's clock (this machine's): with 3 counted in this
    // window and none before, the estimate falls to 2 a third into the next one.
    const expected = (t: number) =>
      Math.ceil(((Math.floor(t / span) + 1) * span + span / 3 - t) / 1000);
    const ra = Number(over.retryAfter);
    expect(ra).toBeGreaterThanOrEqual(Math.min(expected(before), expected(after)));
    expect(ra).toBeLessThanOrEqual(Math.max(expected(before), expected(after)));
    expect(ra).toBeGreaterThan(20);
  });

  it('fails open by default while Redis is down: admits, one error line per outage; counting resumes after', async () => {
    const lines: string[] = [];
    const [a, b] = await instances(2, lines);
    runs = 0;
    await server.halt();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await post(i % 2 ? a! : b!, '/open')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      expect(runs).toBe(6);
    } finally {
      await server.restart();
    }
    // One line per outage and instance (each has its own store), not one per request.
    const down = lines.filter((l) => l.includes('rate-limit store unreachable'));
    expect(down).toHaveLength(2);
    expect(JSON.parse(down[0]!)).toMatchObject({ level: 50 });
    // Back: the allowance is counted again, across both. A 200 alone cannot say an instance is
    // counting again (failing open admits too), so wait for each to log that its store answers.
    await untilCounting([a!, b!], lines);
    expect((await post(a!, '/open', '127.0.0.3')).status).toBe(200);
    expect((await post(b!, '/open', '127.0.0.3')).status).toBe(200);
    expect((await post(a!, '/open', '127.0.0.3')).status).toBe(429);
    expect(lines.filter((l) => l.includes('rate-limit store unreachable'))).toHaveLength(2);
    expect(lines.some((l) => l.includes('rate-limit store answers again'))).toBe(true);
  });

  it('fails closed when the limit says so: 503 with Retry-After in the failure shape, handler not run; counting resumes after', async () => {
    const [a, b] = await instances(2);
    runs = 0;
    await server.halt();
    try {
      const down = await post(a!, '/closed');
      expect(down.status).toBe(503);
      expect(down.retryAfter).toBe('1');
      expect(JSON.parse(down.body)).toEqual({
        error: 'POST /closed: rate-limit store unavailable',
        status: 503,
      });
      expect((await post(b!, '/closed')).status).toBe(503);
      expect(runs).toBe(0);
    } finally {
      await server.restart();
    }
    // Failing closed, a 200 does say a store answers: wait for both (each has its own connection).
    expect(await untilAdmitted(a!, '/closed', '127.0.0.8')).toBe(200);
    expect(await untilAdmitted(b!, '/closed', '127.0.0.9')).toBe(200);
    runs = 0;
    expect((await post(b!, '/closed', '127.0.0.4')).status).toBe(200);
    expect((await post(a!, '/closed', '127.0.0.4')).status).toBe(200);
    expect((await post(b!, '/closed', '127.0.0.4')).status).toBe(429);
    expect(runs).toBe(2);
  });
});

describe('the sample shop on Redis', () => {
  it('FAIL-27 POST /login allows 5 a minute per address across two shop instances sharing REDIS_URL', async () => {
    const { shop } = await import('../../sample/shop/shop');
    const ports: number[] = [];
    for (let i = 0; i < 2; i++) {
      const app = shop({
        log: () => {},
        redisUrl: server.url,
        warehouseUrl: 'http://127.0.0.1:9',
        openapiOut: null,
      });
      ports.push((await app.listen({ port: 0 })).port);
      closing.push(() => app.close());
    }
    const login = async (port: number) =>
      (
        await fetch(`http://127.0.0.1:${port}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ account: 'alice' }),
        })
      ).status;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await login(ports[i % 2]!));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
