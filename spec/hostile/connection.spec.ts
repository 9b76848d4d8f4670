import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';
import { Client, OpenTarget, Target } from 'fw-http/fetch';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';
import { exchangeOf } from '../../lib/http/request/exchange-of';

// Socket-level attacks on connections, against a real server on 127.0.0.1, bounded in count and
// time: clients that never read their answer (a large buffered answer, a file, an event stream)
// and a stream of requests that each look at their cancellation signal. Afterwards the server
// still answers, and its descriptors and heap after GC are back within a bound. No assertion is
// timed: a defect shows as a bound never reached.

const BIG = 16 * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'fw-hostile-conn-'));
const bigFile = join(dir, 'big.bin');
writeFileSync(bigFile, Buffer.alloc(BIG, 0x62));
const big = Buffer.alloc(BIG, 0x61);

const Upstream = Target('upstream');
/** The app-wide shutdown signal, as the requests see it. */
let shutdown: AbortSignal | null = null;

@Controller()
class Victim {
  constructor(readonly upstream: OpenTarget) {}
  @Returns(Object)
  @Get('/signal')
  signal(c: Ctx) {
    shutdown = exchangeOf(c).core.shutdown;
    return { aborted: c.signal.aborted };
  }
  @Returns(String)
  @Get('/nap')
  async nap(c: Ctx) {
    await c.sleep(1);
    return 'rested';
  }
  @Returns(String)
  @Get('/call')
  async call(c: Ctx) {
    const res = await this.upstream.get(c, '/thing', {});
    return res.body;
  }
  @Get('/big') big(c: Ctx) {
    c.send(200, 'application/octet-stream', big);
  }
  @Get('/file') file(c: Ctx) {
    return c.sendFile({ file: bigFile });
  }
  @Get('/sse') async sse(c: Ctx) {
    const events = c.events();
    const data = 'e'.repeat(60 * 1024);
    for (let i = 0; i < 1000; i++) await events.send({ data });
    events.close();
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

let upstream: Server;
let client: Client;
let app: App;
let port = 0;

beforeAll(async () => {
  upstream = createServer((_req, res) => res.end('thing'));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  client = new Client();
  const target = Upstream.open(client, {
    base: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  });
  app = new App({
    log: () => {},
    writeTimeoutMs: 300,
    idleTimeoutMs: 5_000,
    maxRequestsInFlight: 4,
  })
    .controllers(Victim)
    .provide(client)
    .provide(target);
  port = (await app.listen()).port;
});

afterAll(async () => {
  await app.close();
  await new Promise((r) => upstream.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** `count` GETs of `path` over a few kept connections; every answer must be 200. */
async function many(path: string, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const once = () =>
        new Promise<number>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path, agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
            .on('error', reject)
            .end();
        });
      // What this measures is the server's listeners and heap, not the transport: a kept connection
      // reset under a loaded machine (the agent reusing a socket as it closes) is tried once more.
      const status = await once().catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ECONNRESET') return once();
        throw e;
      });
      expect(status).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker)); // within maxRequestsInFlight
  agent.destroy();
}

const listeners = () => getEventListeners(shutdown!, 'abort').length;

describe('requests that look at their signal, sleep, or call out with the Ctx as scope', () => {
  it('leave no listener on the shutdown signal and no memory behind', async () => {
    await many('/signal', 50);
    await many('/nap', 50);
    await many('/call', 50);
    const before = await heapAfterGc();
    const listenersBefore = listeners();
    for (let round = 0; round < 3; round++) {
      await many('/signal', 1000);
      await many('/nap', 500);
      await many('/call', 500);
    }
    expect(await settlesWithin(listeners, listenersBefore, 2_000)).toBe(listenersBefore);
    expect(listenersBefore).toBeLessThanOrEqual(1);
    const grown = (await heapAfterGc()) - before;
    expect(grown).toBeLessThan(4 * 1024 * 1024); // 6,000 requests leaking 4 KB each would be 24 MB
    expect((await getOnce(port, '/plain')).body).toBe('plain');
  });
});

describe('clients that never read their answer', () => {
  /** Sends a GET and reads nothing. */
  async function stalled(path: string): Promise<Socket> {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    return socket;
  }
  const connections = () => new Promise<number>((r) => app.server.getConnections((_e, n) => r(n)));

  it('a large answer, a file and an event stream: each stalled reader is cut after writeTimeoutMs, its slot and descriptors freed', async () => {
    await getOnce(port, '/plain');
    const fdsBefore = openDescriptors();
    const heapBefore = await heapAfterGc();
    const clients: Socket[] = [];
    // Event streams hold no in-flight slot; two large answers and two files take all four.
    for (const path of ['/sse', '/sse', '/sse', '/sse', '/big', '/big', '/file', '/file'])
      clients.push(await stalled(path));
    await new Promise((r) => setTimeout(r, 100));
    expect(await connections()).toBe(8);
    expect((await getOnce(port, '/plain')).status).toBe(503);
    // …and every one of them is cut, so the server serves again.
    expect(await settlesWithin(connections, 0, 10_000)).toBe(0);
    expect((await getOnce(port, '/plain')).body).toBe('plain');
    for (const s of clients) s.destroy();
    expect(await settlesWithin(openDescriptors, fdsBefore + 2, 5_000)).toBeLessThanOrEqual(
      fdsBefore + 2,
    );
    expect((await heapAfterGc()) - heapBefore).toBeLessThan(8 * 1024 * 1024);
  });
});
