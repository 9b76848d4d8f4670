import type http from 'node:http';
import { Client, FetchError, RETRY_ON, Target, retryAfterMs } from 'fw-http/fetch';
import { closedPort, ctx, httpPeer, rejection, type HttpPeer } from './loopback';

// Target retry policies against a hostile upstream on loopback: 503 storms, resets, hangs. The
// upstream's script says what each request to a path gets, in order; afterwards it answers 200.

type Act = 'ok' | 'reset' | 'hang' | number | { status: number; retryAfter: string };

let peer: HttpPeer;
let client: Client;
const scripts = new Map<string, Act[]>();
const hung: http.ServerResponse[] = [];

beforeAll(async () => {
  peer = await httpPeer((req, res) => {
    const act = scripts.get(req.url ?? '')?.shift() ?? 'ok';
    if (act === 'reset') return void req.socket.destroy();
    if (act === 'hang') return void hung.push(res);
    if (act === 'ok') return void res.end('done');
    const status = typeof act === 'number' ? act : act.status;
    if (typeof act === 'object') res.setHeader('retry-after', act.retryAfter);
    res.statusCode = status;
    res.end('not now');
  });
  client = new Client();
  client.start();
});
afterEach(() => {
  scripts.clear();
  for (const r of hung.splice(0)) r.destroy();
});
afterAll(async () => {
  await client.close();
  await peer.close();
});

const tries = (path: string) => peer.seen.filter((s) => s.url === path).length;
const fast = { attempts: 4, backoff: { baseMs: 1, maxMs: 5 } };
const open = (retry: object, base = peer.origin) => Target('up', { retry }).open(client, { base });
const KEY = [{ name: 'Idempotency-Key', value: 'k-1' }];

describe('Target retry policies', () => {
  it('a GET is retried through a 503 storm until it answers 200', async () => {
    scripts.set('/storm', [503, 502, 504]);
    const res = await open(fast).get(ctx(), '/storm');
    expect(res.status).toBe(200);
    expect(tries('/storm')).toBe(4);
  });

  it('the tries run out: the last answer is returned as it came', async () => {
    scripts.set('/always', [503, 503, 503, 503, 503]);
    const res = await open(fast).get(ctx(), '/always');
    expect(res.status).toBe(503);
    expect(res.body).toBe('not now');
    expect(tries('/always')).toBe(4);
  });

  it('a POST without an Idempotency-Key is never sent twice; with one it is retried', async () => {
    scripts.set('/charge', [503]);
    expect((await open(fast).post(ctx(), '/charge', {}, 'x')).status).toBe(503);
    expect(tries('/charge')).toBe(1);
    scripts.set('/charge-keyed', [503]);
    const keyed = await open(fast).post(ctx(), '/charge-keyed', {}, 'x', { headers: KEY });
    expect(keyed.status).toBe(200);
    expect(tries('/charge-keyed')).toBe(2);
    expect(peer.seen.filter((s) => s.url === '/charge-keyed').map((s) => s.body)).toEqual([
      'x',
      'x',
    ]);
  });

  it('a reset connection is retried (it is in RETRY_ON); a status outside `on` is not', async () => {
    expect(RETRY_ON).toEqual(expect.arrayContaining([503, 'ECONNRESET', 'UND_ERR_SOCKET']));
    scripts.set('/reset', ['reset', 'reset']);
    expect((await open(fast).get(ctx(), '/reset')).status).toBe(200);
    expect(tries('/reset')).toBe(3);
    scripts.set('/teapot', [418]);
    expect((await open(fast).get(ctx(), '/teapot')).status).toBe(418);
    expect(tries('/teapot')).toBe(1);
    scripts.set('/only-418', [418]);
    expect((await open({ ...fast, on: [418] }).get(ctx(), '/only-418')).status).toBe(200);
  });

  it('a refused connection is retried, and fails with the socket error once tries run out', async () => {
    const port = await closedPort();
    const err = await rejection(open(fast, `http://127.0.0.1:${port}`).get(ctx(), '/x'));
    expect(JSON.stringify([err.code, (err.cause as { code?: string })?.code])).toContain(
      'ECONNREFUSED',
    );
  });

  it('a hanging upstream ends at the call deadline, TimedOut, with no retry after it', async () => {
    scripts.set('/hang', ['hang', 'hang']);
    const err = await rejection(open(fast).get(ctx(), '/hang', {}, { timeoutMs: 300 }));
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('TimedOut');
    expect(tries('/hang')).toBe(1);
  });

  it('Retry-After past the deadline is not waited for: the 503 comes back at once', async () => {
    scripts.set('/later', [{ status: 503, retryAfter: '120' }]);
    const res = await open(fast).get(ctx(), '/later', {}, { timeoutMs: 5_000 });
    expect(res.status).toBe(503);
    expect(res.header('retry-after')).toBe('120');
    expect(tries('/later')).toBe(1);
  });

  it('Retry-After within the deadline is honoured before the retry', async () => {
    scripts.set('/soon', [{ status: 503, retryAfter: '1' }]);
    const began = Date.now();
    const res = await open(fast).get(ctx(), '/soon', {}, { timeoutMs: 10_000 });
    expect(res.status).toBe(200);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950); // a lower bound: the wait happened
  });

  it('budgetMs bounds all tries and waits together', async () => {
    scripts.set('/budget', [{ status: 503, retryAfter: '2' }]);
    const res = await open({ ...fast, budgetMs: 1_000 }).get(ctx(), '/budget');
    expect(res.status).toBe(503);
    expect(tries('/budget')).toBe(1);
  });

  it('a scope that ends while the call waits to retry fails Canceled', async () => {
    scripts.set('/wait', [{ status: 503, retryAfter: '5' }]);
    const abort = new AbortController();
    const scope = { requestId: () => null, signal: abort.signal };
    const pending = open(fast).get(scope, '/wait', {}, { timeoutMs: 20_000 });
    setTimeout(() => abort.abort(), 200);
    const err = await rejection(pending);
    expect(err.code).toBe('Canceled');
    expect(tries('/wait')).toBe(1);
  });

  it('bad settings are refused when the target is declared, naming the field', () => {
    expect(() => Target('p', { retry: { attempts: 0 } })).toThrow(
      /target p retry: attempts must be a whole number from 1, got 0/,
    );
    expect(() => Target('p', { retry: { on: [42] } })).toThrow(/42 is neither a status nor a code/);
    expect(() => Target('p', { retry: { backoff: { baseMs: -1 } } })).toThrow(FetchError);
  });

  it('Retry-After reads delay-seconds and HTTP dates', () => {
    expect(retryAfterMs('3')).toBe(3000);
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});
