import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';
import { Client, OpenTarget, Target } from 'fw-http/fetch';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';

// Floods of unauthenticated /healthz against a real server whose target is a real, slow upstream
// (127.0.0.1 only, bounded in count). Probes are cached and collapsed, take no business permit and
// have their own deadline, so a flood costs the upstream one probe at a time and the business
// route nothing. No assertion is timed.

/** The upstream: `/ready` slow (or hung), `/work` quick; counts probes and the most at once. */
class SlowUpstream {
  readyHits = 0;
  readyNow = 0;
  readyMost = 0;
  workHits = 0;
  hang = false;
  readonly server: Server = createServer((req, res) => {
    if (req.url === '/ready') {
      this.readyHits++;
      this.readyMost = Math.max(this.readyMost, ++this.readyNow);
      let open = true;
      const done = () => {
        if (open) this.readyNow--;
        open = false;
      };
      res.once('close', done);
      if (this.hang) return;
      setTimeout(() => {
        done();
        res.writeHead(200).end('ready');
      }, 200);
      return;
    }
    this.workHits++;
    setTimeout(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"stock":3}'),
      20,
    );
  });
  base = '';
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

@Controller()
class Quote {
  constructor(readonly warehouse: OpenTarget) {}
  @Returns(Object)
  @Get('/quote')
  async quote(c: Ctx) {
    const res = await this.warehouse.get(c, '/work');
    return { upstream: res.status };
  }
}

async function shopOn(up: SlowUpstream, health?: Parameters<App['health']>[0]) {
  const client = new Client();
  // As the sample's warehouse: a gate of its own, a 5 s deadline.
  const warehouse = Target('warehouse', { maxInFlight: 4, timeoutMs: 5_000, ready: '/ready' }).open(
    client,
    { base: up.base },
  );
  const app = new App({ log: () => {} })
    .provide(client)
    .provide(warehouse)
    .controllers(Quote)
    .health(health);
  const { port } = await app.listen();
  return { app, port };
}

describe('hostile: /healthz floods', () => {
  let up: SlowUpstream;
  beforeEach(async () => {
    up = await new SlowUpstream().start();
  });
  afterEach(() => up.stop());

  it('HEALTH-03 500 concurrent /healthz: the business route still answers 200, the upstream sees one probe at a time and a handful in all', async () => {
    const { app, port } = await shopOn(up);
    try {
      expect((await getOnce(port, '/quote')).status).toBe(200);
      const fdsBefore = openDescriptors();
      const heapBefore = await heapAfterGc();
      const started = Date.now();
      const flood = Promise.all(
        Array.from({ length: 500 }, () => getOnce(port, '/healthz', 20_000)),
      );
      const quotes = await Promise.all(
        Array.from({ length: 8 }, () => getOnce(port, '/quote', 20_000)),
      );
      const probes = await flood;
      const elapsed = Date.now() - started;
      expect(quotes.map((q) => q.status)).toEqual(Array(8).fill(200));
      expect(probes.filter((p) => p.status !== 200)).toEqual([]);
      expect(up.readyMost).toBe(1);
      // One probe per cacheMs (1 s by default) at most, however long the flood took on this machine.
      expect(up.readyHits).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 1_000));
      expect(up.readyHits).toBeLessThan(10);
      expect((await getOnce(port, '/quote')).status).toBe(200);
      expect(await settlesWithin(openDescriptors, fdsBefore + 10)).toBeLessThanOrEqual(
        fdsBefore + 10,
      );
      expect(await heapAfterGc()).toBeLessThan(heapBefore + 16 * 1024 * 1024);
    } finally {
      await app.close();
    }
  });

  it('HEALTH-02 300 concurrent /healthz against a hung ready path: 503 naming the target, one hung probe at a time, and the business route unharmed', async () => {
    up.hang = true;
    const { app, port } = await shopOn(up, { timeoutMs: 300 });
    try {
      const fdsBefore = openDescriptors();
      const flood = Promise.all(
        Array.from({ length: 300 }, () => getOnce(port, '/healthz', 20_000)),
      );
      const quote = await getOnce(port, '/quote', 20_000);
      const probes = await flood;
      expect(quote.status).toBe(200);
      expect(new Set(probes.map((p) => `${p.status} ${p.body}`))).toEqual(
        new Set(['503 {"error":"not ready: warehouse","status":503}']),
      );
      expect(up.readyMost).toBe(1);
      expect(up.readyHits).toBeLessThan(10);
      expect((await getOnce(port, '/quote')).status).toBe(200);
      // The hung probe's connection was dropped at its deadline.
      expect(await settlesWithin(() => up.readyNow, 0)).toBe(0);
      expect(await settlesWithin(openDescriptors, fdsBefore + 10)).toBeLessThanOrEqual(
        fdsBefore + 10,
      );
    } finally {
      await app.close();
    }
  });
});
