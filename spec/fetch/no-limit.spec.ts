import type http from 'node:http';
import { type Client, Exchange, Target } from 'fw-http/fetch';
import { httpPeer, rejection, run, withClient, type HttpPeer } from './loopback';

// "0 means no limit" (FETCH-05, FETCH-06) cannot be shown by waiting: the default deadline is
// 30 s and undici's own clocks run 300 s. So this file runs every clock in the process that a
// call could arm on the fake clock — fw's deadline and stall timers and undici's timers alike,
// installed before the first client exists — and moves it on ten minutes while a call waits on a
// real loopback server. A call that still completes afterwards armed no clock at all. The
// controls (a non-zero bound under the same clock fails) show the fake clock does reach them.
jest.useFakeTimers({
  doNotFake: [
    'nextTick',
    'setImmediate',
    'clearImmediate',
    'queueMicrotask',
    'Date',
    'performance',
    'hrtime',
  ],
});

const TEN_MINUTES = 10 * 60_000;
let peer: HttpPeer;
const held: http.ServerResponse[] = [];
const releaseAll = () => {
  for (const r of held.splice(0)) if (!r.writableEnded) r.end('released');
};

/** Waits on the event loop, not on a timer (timers are fake here). */
async function settle(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 20_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  if (!cond()) throw new Error('condition not met');
}

/** Lets whatever the advanced clock fired run to its end (rejections, aborts). */
async function drainLoop(): Promise<void> {
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
}

beforeAll(async () => {
  peer = await httpPeer((req, res) => {
    if (req.url === '/hold-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first');
    }
    held.push(res); // '/hold': nothing at all until released
  });
});
afterEach(releaseAll);
afterAll(async () => {
  releaseAll();
  await peer.close();
  jest.useRealTimers();
});

/** Starts a call that waits for its head and an Exchange that waits inside its body, then moves the clock on. */
async function waitTenMinutes(
  c: Client,
  call: Parameters<Client['get']>[2] = {},
): Promise<{ head: Promise<string>; body: Promise<string>; ex: Exchange }> {
  const head = c.get(run, peer.url + 'hold', call).then((r) => r.body);
  const ex = new Exchange();
  await ex.begin(c, { url: peer.url + 'hold-body' });
  const body = ex.take(run, 1 << 20);
  head.catch(() => undefined);
  body.catch(() => undefined);
  await settle(() => held.length === 2);
  jest.advanceTimersByTime(TEN_MINUTES);
  await drainLoop();
  releaseAll();
  return { head, body, ex };
}

describe('0 means no limit, under a clock moved on ten minutes', () => {
  it('FETCH-05 FETCH-06 timeoutMs: 0 and stallMs: 0: a call silent before its head and one silent inside its body still complete', async () => {
    await withClient({ timeoutMs: 0, stallMs: 0 }, async (c) => {
      const { head, body, ex } = await waitTenMinutes(c);
      expect(await head).toBe('released');
      expect(await body).toBe('firstreleased');
      await ex.end();
    });
  });

  it('FETCH-05 FETCH-06 the client defaults (stallMs 0) with a call-level timeoutMs: 0 over a client deadline', async () => {
    await withClient({ timeoutMs: 200 }, async (c) => {
      const head = c.get(run, peer.url + 'hold', { timeoutMs: 0 }).then((r) => r.body);
      await settle(() => held.length === 1);
      jest.advanceTimersByTime(TEN_MINUTES);
      await drainLoop();
      releaseAll();
      expect(await head).toBe('released');
    });
  });

  it("FETCH-05 a target's timeoutMs: 0 over a client deadline means no limit", async () => {
    await withClient({ timeoutMs: 200 }, async (c) => {
      const api = Target('unbounded', { timeoutMs: 0 }).open(c, { base: peer.origin });
      const head = api.get(run, '/hold').then((r) => r.body);
      await settle(() => held.length === 1);
      jest.advanceTimersByTime(TEN_MINUTES);
      await drainLoop();
      releaseAll();
      expect(await head).toBe('released');
    });
  });

  it('control: under the same clock the default timeoutMs (30 s) fails TimedOut', async () => {
    await withClient({}, async (c) => {
      const { head, body, ex } = await waitTenMinutes(c);
      expect((await rejection(head)).code).toBe('TimedOut');
      expect((await rejection(body)).code).toBe('TimedOut');
      await ex.end();
    });
  });

  it('control: under the same clock stallMs: 30000 fails Stalled, before the head and inside the body', async () => {
    await withClient({ timeoutMs: 0, stallMs: 30_000 }, async (c) => {
      const { head, body, ex } = await waitTenMinutes(c);
      expect((await rejection(head)).code).toBe('Stalled');
      expect((await rejection(body)).code).toBe('Stalled');
      await ex.end();
    });
  });
});
