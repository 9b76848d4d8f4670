import { request, type IncomingMessage } from 'node:http';
import { chromium } from 'playwright-core';
import { WebSocket as Client } from 'ws';
import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { frame, rawWebSocket } from '../support/frames';
import { warehouse } from '../../sample/warehouse/warehouse';

let warehouseApp: App;
let warehouseUrl = '';
beforeAll(async () => {
  warehouseApp = warehouse({ log: () => {} });
  warehouseUrl = (await warehouseApp.listen({ port: 0 })).url;
});
afterAll(() => warehouseApp.close());

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request(url, resolve).on('error', reject).end());
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  for await (const chunk of res) out += chunk;
  return out;
}

function handshake(url: string, origin?: string): Promise<{ ws: Client | null; status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new Client(url, origin === undefined ? {} : { origin });
    ws.once('open', () => resolve({ ws, status: 101 }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ ws: null, status: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

const sessionCookie = (set: string | string[] | undefined) =>
  (Array.isArray(set) ? set : [set ?? '']).find((l) => l.startsWith('fw_session='))!.split(';')[0];

describe('the sample shop: live answers and sessions (SAMPLE.md contract)', () => {
  let app: App;
  let base = '';
  let port = 0;
  beforeEach(async () => {
    app = shop({ log: () => {}, warehouseUrl, openapiOut: null });
    ({ url: base, port } = await app.listen({ port: 0 }));
  });
  afterEach(() => app.close());

  it('EVENTS-01 GET /events sends 3 events data: {"n":i} by default, then the stream ends', async () => {
    const res = await get(`${base}/events`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await text(res)).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n');
  });

  it('EVENTS-03 GET /events?count=N sends N events (at most 100), never gzipped; a bad count is 400', async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      request(`${base}/events?count=100`, { headers: { 'accept-encoding': 'gzip' } }, resolve)
        .on('error', reject)
        .end(),
    );
    expect(res.headers['content-encoding']).toBeUndefined();
    const body = await text(res);
    expect(body.match(/^data: /gm)).toHaveLength(100);
    expect(body.endsWith('data: {"n":100}\n\n')).toBe(true);
    for (const count of ['0', '101', 'abc', '1.5']) {
      const bad = await app.inject({ url: `/events?count=${count}` });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.json<object>())).toEqual(['error', 'status']);
    }
  });

  it("EVENTS-04 GET /ws/echo echoes messages for the service's own origins (127.0.0.1 and localhost at its port)", async () => {
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const { ws } = await handshake(`ws://127.0.0.1:${port}/ws/echo`, origin);
      const reply = new Promise<string>((resolve) =>
        ws!.once('message', (d) => resolve(d.toString())),
      );
      ws!.send('ping');
      expect(await reply).toBe('ping');
      ws!.close();
    }
  });

  it('AUTH-12 GET /ws/echo from another origin (or none) is 403; EVENTS-05 a plain GET is 400', async () => {
    expect((await handshake(`ws://127.0.0.1:${port}/ws/echo`, 'http://evil.example')).status).toBe(
      403,
    );
    expect(
      (await handshake(`ws://127.0.0.1:${port}/ws/echo`, `http://127.0.0.1:${port + 1}`)).status,
    ).toBe(403);
    expect((await handshake(`ws://127.0.0.1:${port}/ws/echo`)).status).toBe(403);
    const plain = await get(`${base}/ws/echo`);
    expect(plain.statusCode).toBe(400);
    expect(JSON.parse(await text(plain))).toEqual({
      error: 'not a WebSocket upgrade',
      status: 400,
    });
  });

  it('a malformed frame to GET /ws/echo closes that socket (1002) and the shop goes on: the echo as written is safe', async () => {
    const peer = await rawWebSocket(port, '/ws/echo', `http://127.0.0.1:${port}`);
    peer.socket.write(frame({ opcode: 0x1, payload: 'unmasked', mask: false }));
    expect(await peer.closed).toBe(1002);
    peer.socket.destroy();
    const big = await rawWebSocket(port, '/ws/echo', `http://127.0.0.1:${port}`);
    big.socket.write(frame({ opcode: 0x2, declaredLength: 1024 * 1024 + 1 }));
    expect(await big.closed).toBe(1009);
    big.socket.destroy();
    const { ws } = await handshake(`ws://127.0.0.1:${port}/ws/echo`, `http://127.0.0.1:${port}`);
    const reply = new Promise<string>((resolve) =>
      ws!.once('message', (d) => resolve(d.toString())),
    );
    ws!.send('after');
    expect(await reply).toBe('after');
    ws!.close();
    expect((await get(`${base}/healthz`)).statusCode).toBe(200);
  });

  it('POST /login sets the signed session cookie; GET /me answers its account; no or bad session is 401', async () => {
    const login = await app.inject({ method: 'POST', url: '/login', body: { account: 'bob' } });
    expect(login.status).toBe(200);
    const set = login.headers['set-cookie'] as unknown as string[];
    expect(set[0]).toMatch(/^fw_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const cookie = sessionCookie(set);
    const me = await app.inject({ url: '/me', headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.json()).toEqual({ account: 'bob' });
    for (const headers of [
      {},
      { cookie: cookie.slice(0, -3) + 'AAA' },
      { cookie: 'fw_session=nonsense' },
    ] as Record<string, string>[]) {
      const res = await app.inject({ url: '/me', headers });
      expect(res.status).toBe(401);
      expect(Object.keys(res.json<object>())).toEqual(['error', 'status']);
    }
    expect(
      (await app.inject({ method: 'POST', url: '/login', body: { account: 'mallory' } })).status,
    ).toBe(400);
  });

  it('POST /login allows 5 per minute per address, then 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++)
      expect(
        (await app.inject({ method: 'POST', url: '/login', body: { account: 'alice' } })).status,
      ).toBe(200);
    const sixth = await app.inject({ method: 'POST', url: '/login', body: { account: 'alice' } });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(sixth.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('a real browser (chromium) gets the three events through EventSource and an echo through WebSocket', async () => {
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/healthz`);
      const got = await page.evaluate(async (echoUrl) => {
        const events = await new Promise<string[]>((resolve, reject) => {
          const seen: string[] = [];
          const source = new EventSource('/events?count=3');
          source.onmessage = (e) => {
            seen.push(e.data);
            if (seen.length === 3) {
              source.close();
              resolve(seen);
            }
          };
          source.onerror = () => {
            source.close();
            reject(new Error(`EventSource failed after ${seen.length} events`));
          };
        });
        const echoed = await new Promise<string>((resolve, reject) => {
          const ws = new WebSocket(echoUrl);
          ws.onopen = () => ws.send('hello from the browser');
          ws.onmessage = (e) => {
            resolve(String(e.data));
            ws.close();
          };
          ws.onerror = () => reject(new Error('WebSocket failed'));
        });
        return { events, echoed };
      }, `ws://127.0.0.1:${port}/ws/echo`);
      expect(got.events).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
      expect(got.echoed).toBe('hello from the browser');
    } finally {
      await browser.close();
    }
  });
});
