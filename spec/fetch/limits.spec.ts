import type http from 'node:http';
import type net from 'node:net';
import { Client, Exchange, FetchError } from 'fw-http/fetch';
import {
  closedPort,
  httpPeer,
  rawPeer,
  rejection,
  run,
  sleep,
  until,
  withClient,
  type HttpPeer,
  type RawPeer,
} from './loopback';

// One peer, many behaviours, chosen by path.
let peer: HttpPeer;
// Answers held open by /hold until a test lets them go.
const held: http.ServerResponse[] = [];
const releaseAll = () => {
  for (const r of held.splice(0)) if (!r.writableEnded) r.end('released');
};

function trickle(res: http.ServerResponse, everyMs: number, times: number): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  let n = 0;
  const t = setInterval(() => {
    if (res.destroyed) return clearInterval(t);
    res.write('.');
    if (++n >= times) {
      clearInterval(t);
      res.end();
    }
  }, everyMs);
  res.on('close', () => clearInterval(t));
}

beforeAll(async () => {
  peer = await httpPeer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const n = Number(u.searchParams.get('n') ?? 0);
    switch (u.pathname) {
      case '/hold':
        held.push(res);
        return;
      case '/slow-head':
        setTimeout(() => res.end('late'), n);
        return;
      case '/trickle':
        trickle(res, Number(u.searchParams.get('every')), n);
        return;
      case '/part':
        // n bytes of body, then silence until a test releases it
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(Buffer.alloc(n, 7));
        held.push(res);
        return;
      case '/silent-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first bytes');
        return; // and nothing more
      case '/endless': {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(16 * 1024, 1);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      case '/sized':
        res.writeHead(200, { 'content-length': n });
        res.end(Buffer.alloc(n, 2));
        return;
      case '/chunked':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(Buffer.alloc(Math.floor(n / 2), 3));
        setImmediate(() => res.end(Buffer.alloc(n - Math.floor(n / 2), 3)));
        return;
      case '/late-half':
        // The rest comes well after the reader has started collecting: the limit is met while reading.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(Buffer.alloc(Math.floor(n / 2), 4));
        setTimeout(() => res.end(Buffer.alloc(n - Math.floor(n / 2), 4)), 30);
        return;
      case '/status':
        res.statusCode = n;
        res.end();
        return;
      case '/gzip':
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': 3 });
        res.end('abc');
        return;
      case '/redirect':
        res.writeHead(302, { location: '/sized?n=1' });
        res.end();
        return;
      default:
        res.end('ok');
    }
  });
});

afterEach(() => releaseAll());
afterAll(async () => {
  releaseAll();
  await peer.close();
});

describe('maxInFlight', () => {
  it('LIMITS-11 FETCH-03 with maxInFlight 32 a 33rd call waits until one of the 32 ends, then proceeds', async () => {
    await withClient({}, async (c) => {
      const seenBefore = peer.seen.length;
      const calls = Array.from({ length: 33 }, () => c.get(run, peer.url + 'hold', {}));
      await until(() => held.length === 32);
      await sleep(300); // room for a 33rd to (wrongly) arrive
      expect(held.length).toBe(32);
      expect(peer.seen.length - seenBefore).toBe(32);
      held.shift()?.end('one');
      await until(() => held.length === 32 && peer.seen.length - seenBefore === 33);
      releaseAll();
      const results = await Promise.all(calls);
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(peer.maxInFlight).toBeLessThanOrEqual(32);
    });
  });

  it('FETCH-02 the permit counts calls across all hosts', async () => {
    const other = await httpPeer((_req, res) => {
      held.push(res);
    });
    try {
      await withClient({ maxInFlight: 2 }, async (c) => {
        const a = c.get(run, peer.url + 'hold', {});
        const b = c.get(run, other.url, {});
        await until(() => held.length === 2);
        const third = c.get(run, peer.url + 'hold', {});
        await sleep(200);
        expect(held.length).toBe(2);
        held.shift()?.end('x');
        await until(() => held.length === 2);
        releaseAll();
        expect((await Promise.all([a, b, third])).map((r) => r.status)).toEqual([200, 200, 200]);
      });
    } finally {
      await other.close();
    }
  });

  it('waiting callers get their permit first come, first served', async () => {
    await withClient({ maxInFlight: 1 }, async (c) => {
      const order: string[] = [];
      const first = c.get(run, peer.url + 'hold', {});
      await until(() => held.length === 1);
      const waiters = ['a', 'b', 'c'].map((name) =>
        c.get(run, peer.url + `x?${name}`, {}).then(() => order.push(name)),
      );
      await sleep(50);
      releaseAll();
      await first;
      await Promise.all(waiters);
      expect(order).toEqual(['a', 'b', 'c']);
    });
  });

  it('FETCH-03 permits come back on every way out: success, error, timeout, abort, oversize, bad encoding, refused redirect, unread body', async () => {
    const dead = await closedPort();
    await withClient({ maxInFlight: 1, maxBody: 10 }, async (c) => {
      const next = async () =>
        expect((await c.get(run, peer.url, { timeoutMs: 5000 })).status).toBe(200);
      await c.get(run, peer.url, {}); // success
      await next();
      const refused = await rejection(c.get(run, `http://127.0.0.1:${dead}/`, {})); // connect error
      expect(refused).not.toBeInstanceOf(FetchError);
      await next();
      expect((await rejection(c.get(run, peer.url + 'hold', { timeoutMs: 100 }))).code).toBe(
        'TimedOut',
      );
      await next();
      const ac = new AbortController();
      const aborted = c.get({ requestId: () => null, signal: ac.signal }, peer.url + 'hold', {});
      await until(() => held.length === 1);
      ac.abort();
      expect((await rejection(aborted)).code).toBe('Canceled');
      await next();
      expect((await rejection(c.get(run, peer.url + 'sized?n=100', {}))).code).toBe('BodyTooLarge');
      await next();
      expect((await rejection(c.get(run, peer.url + 'gzip', {}))).code).toBe(
        'HttpContentEncodingUnsupported',
      );
      await next();
      const ex = new Exchange();
      expect((await rejection(ex.begin(c, { url: peer.url + 'redirect' }))).code).toBe(
        'RedirectRefused',
      );
      await ex.end();
      await next();
      const unread = new Exchange();
      await unread.begin(c, { url: peer.url + 'sized?n=5000' });
      await unread.end();
      await next();
      releaseAll();
    });
  });
});

describe('timeoutMs', () => {
  it('FETCH-04 VERS-03 running past timeoutMs fails TimedOut, the body included', async () => {
    await withClient({ timeoutMs: 400 }, async (c) => {
      const slowHead = await rejection(c.get(run, peer.url + 'slow-head?n=3000', {}));
      expect(slowHead).toBeInstanceOf(FetchError);
      expect(slowHead.code).toBe('TimedOut');
      // The head comes at once; the body trickles for 3 s: the deadline covers the body too.
      const slowBody = await rejection(c.get(run, peer.url + 'trickle?every=50&n=60', {}));
      expect(slowBody.code).toBe('TimedOut');
    });
  });

  it('FETCH-05 timeoutMs 0 means no limit', async () => {
    await withClient({ timeoutMs: 0 }, async (c) => {
      const res = await c.get(run, peer.url + 'slow-head?n=600', {});
      expect(res.body).toBe('late');
    });
  });

  it('FETCH-94 TimedOut is the call’s own deadline: an upstream 504 or 408 is a Response', async () => {
    await withClient({ timeoutMs: 5000 }, async (c) => {
      expect((await c.get(run, peer.url + 'status?n=504', {})).status).toBe(504);
      expect((await c.get(run, peer.url + 'status?n=408', {})).status).toBe(408);
      const own = await rejection(c.get(run, peer.url + 'hold', { timeoutMs: 150 }));
      expect(own.code).toBe('TimedOut');
      expect(own.message).toContain('150 ms');
    });
  });

  it('OPEN-40 waiting for a permit counts against timeoutMs; the waiting call is never sent', async () => {
    await withClient({ maxInFlight: 1, timeoutMs: 0 }, async (c) => {
      const before = peer.seen.length;
      const first = c.get(run, peer.url + 'hold', {});
      await until(() => held.length === 1);
      const err = await rejection(c.get(run, peer.url + 'never', { timeoutMs: 200 }));
      expect(err.code).toBe('TimedOut');
      releaseAll();
      await first;
      expect(peer.seen.slice(before).map((s) => s.url)).toEqual(['/hold']);
    });
  });
});

describe('stallMs', () => {
  it('FETCH-07 VERS-04 nothing received for stallMs fails Stalled: before the head and inside the body', async () => {
    await withClient({ stallMs: 200, timeoutMs: 10_000 }, async (c) => {
      const head = await rejection(c.get(run, peer.url + 'slow-head?n=5000', {}));
      expect(head).toBeInstanceOf(FetchError);
      expect(head.code).toBe('Stalled');
      const body = await rejection(c.get(run, peer.url + 'silent-body', {}));
      expect(body.code).toBe('Stalled');
    });
  });

  it('FETCH-07 the stall bound counts from the last byte: a steady trickle is not a stall', async () => {
    await withClient({ stallMs: 500, timeoutMs: 10_000 }, async (c) => {
      const res = await c.get(run, peer.url + 'trickle?every=40&n=20', {});
      expect(res.body).toBe('.'.repeat(20));
    });
  });

  it('FETCH-06 stallMs 0 means silence has no bound', async () => {
    await withClient({ stallMs: 0, timeoutMs: 0 }, async (c) => {
      expect((await c.get(run, peer.url + 'slow-head?n=600', {})).body).toBe('late');
    });
  });

  it('VERS-04 the stall clock runs while the reader is idle but the server is silent', async () => {
    await withClient({ stallMs: 200, timeoutMs: 10_000 }, async (c) => {
      const ex = new Exchange();
      const head = await ex.begin(c, { url: peer.url + 'silent-body' });
      expect(head.status).toBe(200);
      await sleep(600); // a slow reader; the server sends nothing meanwhile
      const err = await rejection(ex.take(run, 1 << 20));
      expect(err.code).toBe('Stalled');
      await ex.end();
    });
  });

  it('VERS-04 a reader slower than stallMs is not a stall when the server keeps sending (the socket is paused)', async () => {
    await withClient({ stallMs: 200, timeoutMs: 10_000 }, async (c) => {
      const ex = new Exchange();
      await ex.begin(c, { url: peer.url + 'sized?n=2000000' });
      await sleep(600);
      const body = await ex.take(run, 2_000_000);
      expect(body.length).toBe(2_000_000);
      await ex.end();
    });
  });
});

describe('readBufferSize', () => {
  // readBufferSize is how much received body is held for a reader that is not reading before the
  // socket is paused; once paused, the silence is the reader's, so the stall clock stops (VERS-04).
  // So a body part bigger than the buffer survives an idle reader past stallMs, and a smaller one
  // (with the server silent after it) is a stall. The default, 8 KiB, sits between the two cases.
  async function idleReader(
    settings: ConstructorParameters<typeof Client>[0],
    n: number,
  ): Promise<string | Error> {
    let out: string | Error = new Error('not read');
    await withClient({ stallMs: 200, timeoutMs: 10_000, ...settings }, async (c) => {
      const ex = new Exchange();
      await ex.begin(c, { url: peer.url + `part?n=${n}` });
      await until(() => held.length === 1);
      await sleep(600); // an idle reader, three times stallMs; the server is silent after its n bytes
      releaseAll(); // the server ends the body
      out = await ex.take(run, 1 << 20).catch((e: Error) => e);
      await ex.end();
    });
    return out;
  }

  it('FETCH-12 a non-default readBufferSize takes effect: 1 KiB is filled by a 4 KiB part, so the idle reader is not a stall', async () => {
    const body = await idleReader({ readBufferSize: 1024 }, 4096);
    expect(body).toBe('\x07'.repeat(4096) + 'released');
    // the same part under the default 8 KiB does not fill the buffer: the server's silence is a stall
    expect(((await idleReader({}, 4096)) as FetchError).code).toBe('Stalled');
  });

  it('FETCH-12 a non-default readBufferSize takes effect: 64 KiB is not filled by a 16 KiB part, so the silence is a stall', async () => {
    expect(((await idleReader({ readBufferSize: 64 * 1024 }, 16 * 1024)) as FetchError).code).toBe(
      'Stalled',
    );
    // the same part under the default 8 KiB fills the buffer: the reader's idleness is not a stall
    expect(await idleReader({}, 16 * 1024)).toBe('\x07'.repeat(16 * 1024) + 'released');
  });
});

describe('maxBody', () => {
  it('FETCH-09 maxBody is enforced while reading: an endless body fails BodyTooLarge', async () => {
    await withClient({ maxBody: 64 * 1024, timeoutMs: 10_000 }, async (c) => {
      const err = await rejection(c.get(run, peer.url + 'endless', {}));
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe('BodyTooLarge');
    });
  });

  it('FETCH-09 a Content-Length over maxBody fails before any of the body is read', async () => {
    const liar = await rawPeer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n'); // and no body at all
    });
    try {
      await withClient({ maxBody: 1024, timeoutMs: 10_000 }, async (c) => {
        const err = await rejection(c.get(run, liar.url, {}));
        expect(err.code).toBe('BodyTooLarge');
        expect(err.message).toContain('Content-Length');
      });
    } finally {
      await liar.close();
    }
  });

  it('LIMITS-12 a body of exactly maxBody is accepted; one byte more fails BodyTooLarge', async () => {
    await withClient({ maxBody: 5000 }, async (c) => {
      // sized: found from Content-Length; chunked: queued before collecting; late-half: met while reading.
      for (const [kind, why] of [
        ['sized', 'Content-Length 5001 is over 5000'],
        ['chunked', 'body passed 5000 bytes'],
        ['late-half', 'body passed 5000 bytes'],
      ]) {
        expect((await c.get(run, peer.url + `${kind}?n=5000`, {})).bytes.length).toBe(5000);
        const err = await rejection(c.get(run, peer.url + `${kind}?n=5001`, {}));
        expect([kind, err.code, err.message]).toEqual([
          kind,
          'BodyTooLarge',
          expect.stringContaining(why),
        ]);
      }
    });
  });
});

describe('short bodies and other failures', () => {
  let liar: RawPeer;
  beforeAll(async () => {
    liar = await rawPeer((socket: net.Socket, head: string) => {
      const close = head.includes('/close');
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Length: 100\r\n${close ? 'Connection: close\r\n' : ''}\r\n`,
      );
      socket.write(Buffer.alloc(40, 1));
      setTimeout(() => socket.end(), 20);
    });
  });
  afterAll(() => liar.close());

  it('FETCH-96 a body ending before its Content-Length fails BodyTooShort (kept-alive and closing answers)', async () => {
    await withClient({ timeoutMs: 5000 }, async (c) => {
      for (const path of ['keep', 'close']) {
        const err = await rejection(c.get(run, liar.url + path, {}));
        expect(err).toBeInstanceOf(FetchError);
        expect(err.code).toBe('BodyTooShort');
        expect(err.cause).toBeDefined();
      }
    });
  });

  it('FETCH-97 connect errors, URL parse errors and resets surface unchanged, not as FetchError codes', async () => {
    const dead = await closedPort();
    const reset = await rawPeer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    try {
      await withClient({ timeoutMs: 5000 }, async (c) => {
        const refused = await rejection(c.get(run, `http://127.0.0.1:${dead}/`, {}));
        expect(refused).not.toBeInstanceOf(FetchError);
        expect(refused.code).toBe('ECONNREFUSED');
        const parse = await rejection(c.get(run, 'not a url', {}));
        expect(parse.name).toBe('TypeError'); // from Node's realm, so not instanceof jest's TypeError
        expect(parse.code).toBe('ERR_INVALID_URL');
        const rst = await rejection(c.get(run, reset.url, {}));
        expect(rst).not.toBeInstanceOf(FetchError);
        expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(rst.code);
      });
    } finally {
      await reset.close();
    }
  });
});

describe('Canceled', () => {
  it('FETCH-95 close() cancels calls in flight and callers waiting for a permit with Canceled', async () => {
    const c = new Client({ maxInFlight: 1 });
    c.start();
    // rejection() subscribes at once: the promises reject while close() runs.
    const inFlight = rejection(c.get(run, peer.url + 'hold', {}));
    await until(() => held.length === 1);
    const waiting = rejection(c.get(run, peer.url + 'x', {}));
    const ex = new Exchange();
    const begun = rejection(ex.begin(c, { url: peer.url + 'x' }));
    await c.close();
    for (const p of [inFlight, waiting, begun]) {
      const err = await p;
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe('Canceled');
    }
    await ex.end();
  });

  it('FETCH-95 an Exchange being read when the client closes fails Canceled', async () => {
    const c = new Client();
    c.start();
    const ex = new Exchange();
    await ex.begin(c, { url: peer.url + 'silent-body' });
    const reading = rejection(ex.take(run, 1 << 20));
    await c.close();
    expect((await reading).code).toBe('Canceled');
    await ex.end();
  });

  it('a call whose scope is aborted fails Canceled', async () => {
    await withClient({}, async (c) => {
      const ac = new AbortController();
      const p = c.get({ requestId: () => 'r', signal: ac.signal }, peer.url + 'hold', {});
      await until(() => held.length === 1);
      ac.abort(new Error('client went away'));
      const err = await rejection(p);
      expect(err.code).toBe('Canceled');
      const pre = new AbortController();
      pre.abort();
      expect(
        (await rejection(c.get({ requestId: () => null, signal: pre.signal }, peer.url, {}))).code,
      ).toBe('Canceled');
    });
  });
});
