import type net from 'node:net';
import { PassThrough, Readable, Writable } from 'node:stream';
import { Client, Exchange, FetchError, ResponseHead } from 'fw-http/fetch';
import {
  ctx,
  httpPeer,
  linesNamed,
  rawPeer,
  rejection,
  run,
  sleep,
  type HttpPeer,
  type RawPeer,
} from './loopback';

let peer: HttpPeer;
let client: Client;

beforeAll(async () => {
  peer = await httpPeer((req, res, seen) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const n = Number(u.searchParams.get('n') ?? 0);
    switch (u.pathname) {
      case '/echo':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: seen.method, body: seen.body }));
        return;
      case '/sized':
        res.writeHead(200, {
          'content-length': n,
          'content-type': 'application/octet-stream',
          'x-kind': 'sized',
        });
        res.end(Buffer.alloc(n, 'abcdefghij'));
        return;
      case '/chunked':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(Buffer.alloc(Math.floor(n / 2), 'x'));
        setImmediate(() => res.end(Buffer.alloc(n - Math.floor(n / 2), 'x')));
        return;
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('héllo wörld');
        return;
      case '/slow-rest': {
        // Head and the first bytes now, the rest later: the body is still arriving when end() runs.
        const first = Number(u.searchParams.get('first'));
        const chunked = u.searchParams.has('chunked');
        res.writeHead(200, chunked ? {} : { 'content-length': n });
        res.write(Buffer.alloc(first, 'f'));
        const t = setTimeout(() => res.end(Buffer.alloc(n - first, 'r')), 500);
        res.on('close', () => clearTimeout(t));
        return;
      }
      case '/gzip':
        res.writeHead(200, { 'content-encoding': 'gzip' });
        res.end('zz');
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

/**
 * undici checks an idle keep-alive socket for a pending FIN/RST on the next turn of the loop
 * (setImmediate) before reusing it, and meanwhile a Pool opens another connection. A short pause
 * before the next call lets the check finish, so a kept connection is seen as kept.
 */
const settle = () => sleep(20);

/** A fresh client so connection counts start from an empty pool. */
async function freshClient<T>(body: (c: Client) => Promise<T>, settings = {}): Promise<T> {
  const c = new Client(settings);
  c.start();
  try {
    return await body(c);
  } finally {
    await c.close();
  }
}

function collector(): { w: Writable; data: () => Buffer } {
  const chunks: Buffer[] = [];
  const w = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk);
      setImmediate(cb);
    },
  });
  return { w, data: () => Buffer.concat(chunks) };
}

describe('begin and Head', () => {
  it('FETCH-71 FETCH-76 begin sends the request and returns the Head once it has arrived', async () => {
    const ex = new Exchange();
    const head = await ex.begin(client, { method: 'GET', url: peer.url + 'sized?n=10' });
    expect(head).toBeInstanceOf(ResponseHead);
    expect(head.status).toBe(200);
    expect(head.ok).toBe(true);
    expect(head.contentLength).toBe(10);
    expect(head.contentType).toBe('application/octet-stream');
    expect(head.header('X-KIND')).toBe('sized');
    expect(head.header('x-missing')).toBeNull();
    expect(head.redirected).toBeNull();
    expect(head.location()).toBeNull();
    expect(head.headers.some((h) => h.name.toLowerCase() === 'x-kind')).toBe(true);
    await ex.end();
  });

  it('FETCH-76 a chunked answer has no contentLength; a 404 head is not ok', async () => {
    const ex = new Exchange();
    const head = await ex.begin(client, { url: peer.url + 'chunked?n=10' });
    expect(head.contentLength).toBeNull();
    await ex.end();
    const ex2 = new Exchange();
    const h2 = await ex2.begin(client, { url: `${peer.origin}/status-none` });
    expect(h2.ok).toBe(true);
    await ex2.end();
  });

  it('FETCH-78 OPEN-67 head.keep(c) stays valid after the body has been read', async () => {
    const ex = new Exchange();
    const head = (await ex.begin(client, { url: peer.url + 'sized?n=20000' })).keep(run);
    await ex.take(run, 1 << 20);
    await ex.end();
    expect(head.status).toBe(200);
    expect(head.contentLength).toBe(20000);
    expect(head.header('x-kind')).toBe('sized');
  });

  it('FETCH-72 begin takes method, url, headers, host, authorization, contentType, userAgent, timeoutMs, stallMs, body, redirects, transferBuffer', async () => {
    const ex = new Exchange();
    const head = await ex.begin(client, {
      method: 'PUT',
      url: new URL(peer.url + 'echo'),
      headers: [{ name: 'X-Extra', value: '1' }],
      host: 'svc.test',
      authorization: 'Bearer abc',
      contentType: 'text/plain',
      userAgent: 'fw-test/1',
      timeoutMs: 5000,
      stallMs: 5000,
      body: { kind: 'slice', bytes: 'payload' },
      redirects: 'refuse',
      transferBuffer: 1024,
      scope: ctx('ex-rid'),
    });
    expect(head.status).toBe(200);
    expect(JSON.parse(await ex.take(run, 1000))).toEqual({ method: 'PUT', body: 'payload' });
    await ex.end();
    const s = last();
    expect(linesNamed(s, 'host')).toEqual(['svc.test']);
    expect(linesNamed(s, 'authorization')).toEqual(['Bearer abc']);
    expect(linesNamed(s, 'content-type')).toEqual(['text/plain']);
    expect(linesNamed(s, 'user-agent')).toEqual(['fw-test/1']);
    expect(linesNamed(s, 'x-extra')).toEqual(['1']);
    expect(linesNamed(s, 'accept-encoding')).toEqual(['identity']);
    expect(linesNamed(s, 'x-request-id')).toEqual(['ex-rid']);
  });

  it('FETCH-73 OPEN-65 an explicit field and a same-named header line are both written', async () => {
    const ex = new Exchange();
    await ex.begin(client, {
      method: 'POST',
      url: peer.url + 'echo',
      authorization: 'Bearer field',
      userAgent: 'field-agent',
      contentType: 'text/plain',
      headers: [
        { name: 'Authorization', value: 'Bearer line' },
        { name: 'User-Agent', value: 'line-agent' },
        { name: 'Content-Type', value: 'text/csv' },
      ],
      body: { kind: 'slice', bytes: new Uint8Array([1, 2]) },
    });
    await ex.end();
    const s = last();
    expect(linesNamed(s, 'authorization')).toEqual(['Bearer field', 'Bearer line']);
    expect(linesNamed(s, 'user-agent')).toEqual(['field-agent', 'line-agent']);
    expect(linesNamed(s, 'content-type')).toEqual(['text/plain', 'text/csv']);
  });

  it('FETCH-73 host is the exception: given as field and line it is refused before sending (HTTP allows one Host)', async () => {
    const before = peer.seen.length;
    const ex = new Exchange();
    const err = await rejection(
      ex.begin(client, {
        url: peer.url,
        host: 'a.test',
        headers: [{ name: 'Host', value: 'b.test' }],
      }),
    );
    expect(err.code).toBe('BadHeader');
    expect(peer.seen.length).toBe(before);
    await ex.end();
  });

  it('FETCH-74 a stream body is sent with its Content-Length', async () => {
    const ex = new Exchange();
    const stream = Readable.from([Buffer.from('abc'), Buffer.from('defg')]);
    await ex.begin(client, {
      method: 'POST',
      url: peer.url + 'echo',
      body: { kind: 'stream', stream, length: 7 },
    });
    expect(JSON.parse(await ex.take(run, 1000))).toEqual({ method: 'POST', body: 'abcdefg' });
    await ex.end();
    expect(linesNamed(last(), 'content-length')).toEqual(['7']);
    expect(linesNamed(last(), 'transfer-encoding')).toEqual([]);
    const none = new Exchange();
    await none.begin(client, { method: 'POST', url: peer.url + 'echo', body: { kind: 'none' } });
    expect(JSON.parse(await none.take(run, 1000))).toEqual({ method: 'POST', body: '' });
    await none.end();
  });

  it('FETCH-75 a stream body without a length is refused at run time too (BadBody)', async () => {
    const ex = new Exchange();
    const body = { kind: 'stream', stream: Readable.from(['x']) } as unknown as {
      kind: 'stream';
      stream: Readable;
      length: number;
    };
    expect((await rejection(ex.begin(client, { method: 'POST', url: peer.url, body }))).code).toBe(
      'BadBody',
    );
  });

  it('header values with CR, LF or NUL are refused before sending (BadHeader)', async () => {
    const before = peer.seen.length;
    for (const args of [
      { headers: [{ name: 'X-A', value: 'a\r\nb' }] },
      { authorization: 'Bearer a\nb' },
      { userAgent: 'x\0' },
    ]) {
      const ex = new Exchange();
      expect((await rejection(ex.begin(client, { url: peer.url, ...args }))).code).toBe(
        'BadHeader',
      );
      await ex.end();
    }
    expect(peer.seen.length).toBe(before);
  });

  it('a compressed answer fails begin with HttpContentEncodingUnsupported', async () => {
    const ex = new Exchange();
    expect((await rejection(ex.begin(client, { url: peer.url + 'gzip' }))).code).toBe(
      'HttpContentEncodingUnsupported',
    );
    await ex.end();
  });

  it('an Exchange used out of order is refused with ExchangeMisuse', async () => {
    const ex = new Exchange();
    expect((await rejection(ex.take(run, 10))).code).toBe('ExchangeMisuse');
    await ex.begin(client, { url: peer.url });
    expect((await rejection(ex.begin(client, { url: peer.url }))).code).toBe('ExchangeMisuse');
    await ex.end();
    expect((await rejection(ex.readInto(new Uint8Array(1)))).code).toBe('ExchangeMisuse');
  });
});

describe('reading the body', () => {
  it('FETCH-83 take(c, max) returns the rest of the body as text', async () => {
    const ex = new Exchange();
    await ex.begin(client, { url: peer.url + 'text' });
    expect(await ex.take(run, 100)).toBe('héllo wörld');
    await ex.end();
  });

  it('FETCH-84 OPEN-39 take(c, max) refuses a longer body with BodyTooLarge (Content-Length and chunked)', async () => {
    for (const path of ['sized?n=101', 'chunked?n=101']) {
      const ex = new Exchange();
      await ex.begin(client, { url: peer.url + path });
      const err = await rejection(ex.take(run, 100));
      expect(err.code).toBe('BodyTooLarge');
      await ex.end();
    }
    const ok = new Exchange();
    await ok.begin(client, { url: peer.url + 'chunked?n=100' });
    expect((await ok.take(run, 100)).length).toBe(100);
    await ok.end();
  });

  it('FETCH-85 readInto(buf) fills exactly buf.length bytes, leaving the rest for the next read', async () => {
    const ex = new Exchange();
    await ex.begin(client, { url: peer.url + 'sized?n=25', transferBuffer: 4 });
    const a = new Uint8Array(7);
    expect(await ex.readInto(a)).toBe(7);
    expect(Buffer.from(a).toString()).toBe('abcdefg');
    const b = new Uint8Array(18);
    await ex.readInto(b);
    expect(Buffer.from(b).toString()).toBe('hijabcdefghijabcde');
    await ex.end();
  });

  it('FETCH-86 readInto fails BodyTooShort when the body ends first', async () => {
    const ex = new Exchange();
    await ex.begin(client, { url: peer.url + 'sized?n=5' });
    const err = await rejection(ex.readInto(new Uint8Array(6)));
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('BodyTooShort');
    await ex.end();
  });

  it('FETCH-87 pipe(w) writes the rest of the body into w and returns the byte count', async () => {
    const ex = new Exchange();
    await ex.begin(client, { url: peer.url + 'sized?n=300000' });
    const { w, data } = collector();
    expect(await ex.pipe(w)).toBe(300000);
    expect(data().length).toBe(300000);
    expect(data().subarray(0, 10).toString()).toBe('abcdefghij');
    expect(w.writableEnded).toBe(false); // the writer is the caller's to end
    await ex.end();
  });

  it('FETCH-88 stream(w, limit) writes one chunk of at most limit bytes; 0 means the end', async () => {
    const ex = new Exchange();
    await ex.begin(client, { url: peer.url + 'sized?n=50000' });
    const out = new PassThrough();
    const got: Buffer[] = [];
    out.on('data', (c: Buffer) => got.push(c));
    const sizes: number[] = [];
    for (let n = await ex.stream(out, 1000); n > 0; n = await ex.stream(out, 1000)) sizes.push(n);
    expect(sizes.every((n) => n > 0 && n <= 1000)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(50000);
    expect(Buffer.concat(got).length).toBe(50000);
    expect(await ex.stream(out, 1000)).toBe(0);
    await ex.end();
  });

  it('FETCH-97 a writer’s error surfaces unchanged from pipe and stream', async () => {
    for (const op of ['pipe', 'stream'] as const) {
      const ex = new Exchange();
      await ex.begin(client, { url: peer.url + 'sized?n=1000' });
      const w = new Writable({
        write(_c, _e, cb) {
          cb(Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
        },
      });
      const err = await rejection(op === 'pipe' ? ex.pipe(w) : ex.stream(w, 100));
      expect(err).not.toBeInstanceOf(FetchError);
      expect(err.code).toBe('ENOSPC');
      await ex.end();
    }
  });
});

describe('short bodies', () => {
  let liar: RawPeer;
  beforeAll(async () => {
    liar = await rawPeer((socket: net.Socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n');
      socket.write(Buffer.alloc(30, 'z'));
      setTimeout(() => socket.end(), 20);
    });
  });
  afterAll(() => liar.close());

  it('FETCH-96 a body ending before its Content-Length is BodyTooShort for take, readInto, pipe and stream', async () => {
    const ops: Array<(ex: Exchange) => Promise<unknown>> = [
      (ex) => ex.take(run, 1000),
      (ex) => ex.readInto(new Uint8Array(100)),
      (ex) => ex.pipe(collector().w),
      async (ex) => {
        const w = collector().w;
        while ((await ex.stream(w, 7)) > 0);
      },
    ];
    for (const op of ops) {
      const ex = new Exchange();
      await ex.begin(client, { url: liar.url });
      const err = await rejection(op(ex));
      expect(err).toBeInstanceOf(FetchError);
      expect(err.code).toBe('BodyTooShort');
      await ex.end();
    }
  });
});

describe('end, drain and discard', () => {
  it('FETCH-90 end() gives the permit back: a second begin waits for it', async () => {
    await freshClient(
      async (c) => {
        const a = new Exchange();
        await a.begin(c, { url: peer.url + 'sized?n=10' });
        const b = new Exchange();
        let begun = false;
        const pending = b.begin(c, { url: peer.url + 'sized?n=10' }).then((h) => {
          begun = true;
          return h;
        });
        await sleep(200);
        expect(begun).toBe(false);
        await a.end();
        expect((await pending).status).toBe(200);
        await b.end();
      },
      { maxInFlight: 1 },
    );
  });

  it('FETCH-92 end() twice is safe and does nothing more', async () => {
    await freshClient(
      async (c) => {
        const ex = new Exchange();
        await ex.begin(c, { url: peer.url + 'sized?n=10' });
        await ex.end();
        await ex.end();
        // One permit only: had the second end() given back another, two calls would run at once.
        const one = new Exchange();
        await one.begin(c, { url: peer.url + 'sized?n=10' });
        const two = new Exchange();
        let begun = false;
        const p = two.begin(c, { url: peer.url }).then(() => (begun = true));
        await sleep(150);
        expect(begun).toBe(false);
        await one.end();
        await p;
        await two.end();
      },
      { maxInFlight: 1 },
    );
  });

  /**
   * Runs one Exchange on `path` with a fresh client (one connection in its pool), then a plain
   * call, and tells whether the plain call came on the same connection (the server sees the same socket).
   */
  async function reused(
    path: string,
    act: (ex: Exchange) => Promise<void> | void = () => undefined,
    settings = {},
  ): Promise<boolean> {
    return freshClient((c) => reusedOn(c, path, act), settings);
  }

  async function reusedOn(
    c: Client,
    path: string,
    act: (ex: Exchange) => Promise<void> | void,
  ): Promise<boolean> {
    const ex = new Exchange();
    await ex.begin(c, { url: peer.url + path });
    const first = last();
    await act(ex);
    await ex.end();
    await settle();
    await c.get(run, peer.url + 'after', {});
    const after = last();
    expect(after.url).toBe('/after');
    return after.socket === first.socket;
  }

  it('FETCH-91 FETCH-10 end() with exactly maxDrain (64 KiB) unread reads the rest and keeps the connection', async () => {
    expect(await reused(`slow-rest?n=${64 * 1024}&first=1000`)).toBe(true);
    expect(await reused(`slow-rest?n=${64 * 1024}&first=1000&chunked`)).toBe(true);
  });

  it('FETCH-11 end() with more than maxDrain unread drops the connection', async () => {
    expect(await reused(`slow-rest?n=${64 * 1024 + 1}&first=1000`)).toBe(false);
    expect(await reused(`slow-rest?n=${64 * 1024 + 1}&first=1000&chunked`)).toBe(false);
  });

  it('FETCH-11 maxDrain is the client setting, and counts only what the reader has not taken', async () => {
    const settings = { maxDrain: 1024 };
    expect(await reused('slow-rest?n=2048&first=1500', undefined, settings)).toBe(false);
    expect(
      await reused(
        'slow-rest?n=2048&first=1500',
        async (ex) => void (await ex.readInto(new Uint8Array(1024))),
        settings,
      ),
    ).toBe(true);
  });

  it('FETCH-89 discard() closes the connection whatever maxDrain says', async () => {
    let ex: Exchange | null = null;
    expect(
      await reused('slow-rest?n=100&first=10', (e) => {
        ex = e;
        e.discard();
      }),
    ).toBe(false);
    expect((await rejection((ex as unknown as Exchange).take(run, 10))).code).toBe(
      'ExchangeMisuse',
    );
    // the same small body without discard() is drained and its connection kept
    expect(await reused('slow-rest?n=100&first=10')).toBe(true);
  });

  it('FETCH-91 a body read to its end keeps the connection too', async () => {
    expect(await reused('sized?n=100000', async (ex) => void (await ex.pipe(collector().w)))).toBe(
      true,
    );
  });

  it('FETCH-04 an Exchange deadline covers the body: a trickle past timeoutMs fails TimedOut while reading', async () => {
    const slow = await httpPeer((_req, res) => {
      res.writeHead(200);
      const t = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(t));
    });
    try {
      const ex = new Exchange();
      await ex.begin(client, { url: slow.url, timeoutMs: 300 });
      const err = await rejection(ex.pipe(collector().w));
      expect(err.code).toBe('TimedOut');
      await ex.end();
    } finally {
      await slow.close();
    }
  });
});
