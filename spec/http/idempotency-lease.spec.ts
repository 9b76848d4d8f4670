// The lease of an idempotent run's claim, checked in its own process with no round trip: on a
// clock the test moves (`performance.now()` answered by the test), a stall is the clock jumping
// while nothing runs. The claims live in a real MemoryStore behind a real OpenSpace; its renewals
// (`put` with `expect`) are counted, to show a loss is found before any is asked. The lease is
// long on the real clock (its renewal timer never ticks during a test) and moved on the fake one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { CacheError, MemoryStore, Space, type OpenSpace, type Store } from 'fw-http/cache';
import { Client } from 'fw-http/fetch';
import { ClaimRenewer, type Holding } from '../../lib/http/features/idempotency/claim-renewer';
import type { Core } from '../../lib/http/request/exchange';
import { exchangeOf, openCtx } from '../../lib/http/request/exchange-of';
import { openIdempotency } from '../../lib/http/request/idempotency-of';
import { Lease } from '../../lib/http/request/lease';
import { stepKey } from '../../lib/http/request/step';

const LEASE_MS = 300_000;
const MARGIN_MS = 30_000;
/** Past this long since the last confirmation the claim counts as lost here. */
const LIMIT_MS = LEASE_MS - MARGIN_MS;
const LABEL = 'POST /orders (Shop.order)';
const Leased = Space('lease-unit', {
  ttlSeconds: 600,
  maxBytes: 4096,
  leaseMs: LEASE_MS,
  leaseMarginMs: MARGIN_MS,
});

let now = 0;
beforeEach(() => {
  now = 0;
  jest.spyOn(performance, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

/** A space on a MemoryStore whose renewals are counted. */
function counted(): { space: OpenSpace; renewals: () => number } {
  const inner = new MemoryStore({ bytes: 1 << 20 });
  let renewals = 0;
  const store: Store = {
    get: (k) => inner.get(k),
    putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
    put: (k, v, t, o) => (o?.expect !== undefined && renewals++, inner.put(k, v, t, o)),
    del: (k, o) => inner.del(k, o),
    close: () => inner.close(),
  };
  return { space: Leased.open(store), renewals: () => renewals };
}

/** A real Ctx of an idempotent request whose handler holds its claim (sent at 0) until `end()`. */
function holding(space: OpenSpace, key = 'k1') {
  const lines: string[] = [];
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/orders';
  const core = { log: (l: string) => lines.push(l), shutdown: new AbortController().signal };
  const c = openCtx(req, new ServerResponse(req), core as unknown as Core);
  const run = (exchangeOf(c).idempotency = openIdempotency(Leased.name, '', key));
  run.steps = { space, record: key, core, label: LABEL, run: exchangeOf(c) };
  const claim = Buffer.from(`claim on ${key}`);
  expect(space.putIfAbsent(key, claim, LEASE_MS)).toBe(true);
  const renewer = new ClaimRenewer(space, LEASE_MS, LABEL, MARGIN_MS);
  const h: Holding = renewer.hold(c, key, claim, 0);
  let finish!: () => void;
  const settled = renewer.while(h, new Promise<void>((r) => (finish = r)));
  return {
    c,
    h,
    lines,
    end: async () => (finish(), await settled),
  };
}

const lost = (key: string) =>
  `error: ${LABEL}: claim on Idempotency-Key "${key}" was lost while the handler ran (stalled or cut off from the store past its lease of ${LEASE_MS} ms): its signal is aborted, and another instance may run the request`;

describe('a Lease', () => {
  it('is held until leaseMs − marginMs after the last confirmation, then lost once (onLost told once); a confirmation sent earlier than the last does not set it back', () => {
    const told: Lease[] = [];
    const lease = new Lease({
      sentAt: 10,
      leaseMs: 100,
      marginMs: 10,
      onLost: (l) => told.push(l),
    });
    now = 99;
    expect(lease.check()).toBe(true);
    lease.confirm(50);
    lease.confirm(20); // answered late: older than the one before
    expect(lease.confirmedAt).toBe(50);
    now = 139;
    expect(lease.check()).toBe(true);
    now = 140;
    expect(lease.check()).toBe(false);
    expect(lease.check()).toBe(false);
    expect(lease.lost).toBe(true);
    expect(told).toEqual([lease]);
  });

  it('with a margin of 0 is held a millisecond short of leaseMs and lost at it', () => {
    const lease = new Lease({ sentAt: 0, leaseMs: 100, marginMs: 0, onLost: () => undefined });
    now = 99;
    expect(lease.check()).toBe(true);
    now = 100;
    expect(lease.check()).toBe(false);
  });

  it('takes its clock from its options when given one', () => {
    let t = 0;
    const lease = new Lease({
      sentAt: 0,
      leaseMs: 10,
      marginMs: 0,
      onLost: () => undefined,
      now: () => t,
    });
    now = 1_000_000; // performance.now() is not asked
    expect(lease.check()).toBe(true);
    t = 10;
    expect(lease.check()).toBe(false);
  });
});

describe("a stalled handler finds its lease lost at its next check, before any renewal's round trip", () => {
  it('c.signal read a millisecond short of leaseMs − leaseMarginMs is not aborted; read at it, it is (LeaseLost), the loss logged once, no renewal asked', async () => {
    const { space, renewals } = counted();
    const r = holding(space);
    now = LIMIT_MS - 1; // the process stalled: the clock moved, no timer ran
    expect(r.c.signal.aborted).toBe(false);
    now = LIMIT_MS;
    expect(r.c.signal.aborted).toBe(true);
    expect(r.c.signal.reason).toMatchObject({
      code: 'LeaseLost',
      status: 503,
      message: 'claim on Idempotency-Key "k1" was lost while the handler ran',
    });
    expect(r.c.signal.aborted).toBe(true);
    expect(r.lines).toEqual([lost('k1')]);
    expect(renewals()).toBe(0);
    await r.end();
  });

  it("a signal kept from before the stall checks too: its aborted reads true, its throwIfAborted throws LeaseLost, and its 'abort' listeners run", async () => {
    const { space } = counted();
    const r = holding(space);
    const kept = r.c.signal;
    const heard: unknown[] = [];
    kept.addEventListener('abort', () => heard.push(kept.reason));
    now = LIMIT_MS;
    expect(kept.aborted).toBe(true);
    expect(heard).toHaveLength(1);
    expect(() => kept.throwIfAborted()).toThrow(expect.objectContaining({ code: 'LeaseLost' }));
    await r.end();
  });

  it('a signal made before the claim (read by middleware) checks the lease once the handler runs', async () => {
    const { space } = counted();
    const lines: string[] = [];
    const req = new IncomingMessage(new Socket());
    const core = { log: (l: string) => lines.push(l), shutdown: new AbortController().signal };
    const c = openCtx(req, new ServerResponse(req), core as unknown as Core);
    const early = c.signal;
    exchangeOf(c).idempotency = openIdempotency(Leased.name, '', 'k2');
    const claim = Buffer.from('claim');
    expect(space.putIfAbsent('k2', claim, LEASE_MS)).toBe(true);
    const renewer = new ClaimRenewer(space, LEASE_MS, LABEL, MARGIN_MS);
    const h = renewer.hold(c, 'k2', claim, 0);
    now = LIMIT_MS;
    expect(early.aborted).toBe(true);
    renewer.end(h);
  });

  it('c.step past the limit rejects with LeaseLost and does not run its function; within it the step runs and is recorded', async () => {
    const { space } = counted();
    const r = holding(space);
    const ran: string[] = [];
    now = LIMIT_MS - 1;
    await expect(r.c.step('charge', () => (ran.push('charge'), 'ch_1'))).resolves.toBe('ch_1');
    now = LIMIT_MS;
    await expect(r.c.step('reserve', () => (ran.push('reserve'), 'r_1'))).rejects.toMatchObject({
      code: 'LeaseLost',
    });
    expect(ran).toEqual(['charge']);
    expect(space.get(stepKey('k1', 'charge'))).not.toBeNull();
    expect(space.get(stepKey('k1', 'reserve'))).toBeNull();
    await r.end();
  });

  it('an outbound call of fw-http/fetch made past the limit fails Canceled and is never sent', async () => {
    let taken = 0;
    const upstream: Server = createServer((_req, res) => (taken++, res.end('{}')));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/charges`;
    const client = new Client();
    client.start();
    const { space } = counted();
    const r = holding(space);
    try {
      const first = await client.postJson(r.c, url, {});
      expect([first.status, taken]).toEqual([200, 1]);
      now = LIMIT_MS;
      await expect(client.postJson(r.c, url, {})).rejects.toMatchObject({ code: 'Canceled' });
      expect(taken).toBe(1);
    } finally {
      await r.end();
      await client.close();
      await new Promise((res) => upstream.close(res));
    }
  });

  it('a renewal due past the limit is not sent: the claim is lost at that tick, said once (renewals failing before it)', async () => {
    jest.restoreAllMocks();
    jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const inner = new MemoryStore({ bytes: 1 << 20 });
      const asked: number[] = [];
      const store: Store = {
        get: (k) => inner.get(k),
        putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
        put: (k, v, t, o) => {
          if (o?.expect === undefined) return inner.put(k, v, t, o);
          asked.push(performance.now());
          throw new Error('store unavailable (on purpose)');
        },
        del: (k, o) => inner.del(k, o),
        close: () => inner.close(),
      };
      const Short = Space('lease-ticks', {
        ttlSeconds: 60,
        maxBytes: 4096,
        leaseMs: 300,
        leaseMarginMs: 30,
      });
      const space = Short.open(store);
      const lines: string[] = [];
      const req = new IncomingMessage(new Socket());
      const core = { log: (l: string) => lines.push(l), shutdown: new AbortController().signal };
      const c = openCtx(req, new ServerResponse(req), core as unknown as Core);
      exchangeOf(c).idempotency = openIdempotency(Short.name, '', 'k3');
      const claim = Buffer.from('claim');
      expect(space.putIfAbsent('k3', claim, 300)).toBe(true);
      const renewer = new ClaimRenewer(space, 300, LABEL, 30);
      let finish!: () => void;
      const settled = renewer.while(
        renewer.hold(c, 'k3', claim, 0),
        new Promise<void>((r) => (finish = r)),
      );
      await jest.advanceTimersByTimeAsync(299);
      expect(asked).toEqual([100, 200]);
      expect(lines.filter((l) => l.startsWith('error:'))).toHaveLength(0);
      await jest.advanceTimersByTimeAsync(1); // 300: past 270 since the claim, and nothing confirmed
      expect(asked).toEqual([100, 200]);
      expect(lines.filter((l) => l.includes('was lost while the handler ran'))).toHaveLength(1);
      expect(c.signal.aborted).toBe(true);
      expect(jest.getTimerCount()).toBe(0);
      finish();
      await settled;
    } finally {
      jest.useRealTimers();
    }
  });

  it('once the handler is over its lease is checked no more: a signal read later is not aborted', async () => {
    const { space } = counted();
    const r = holding(space);
    await r.end();
    now = 10 * LEASE_MS;
    expect(r.c.signal.aborted).toBe(false);
    expect(r.lines).toEqual([]);
  });
});

describe('what a run that lost its lease answers', () => {
  it("a failure thrown after the loss (the signal's LeaseLost) is not kept even where the space keeps 'all': the key is given back and the retry runs", async () => {
    const KeepsAll = Space('lease-keep-all', {
      ttlSeconds: 600,
      maxBytes: 4096,
      leaseMs: LEASE_MS,
      leaseMarginMs: MARGIN_MS,
      keep: 'all',
    });
    let release!: () => void;
    let runs = 0;
    @Controller()
    class Orders {
      @Post('/orders')
      @Idempotent(KeepsAll)
      @Returns(Status(201, Object))
      async create(c: Ctx) {
        if (++runs === 1) {
          await new Promise<void>((r) => (release = r));
          c.signal.throwIfAborted(); // checked before the effect, as the guide says
        }
        return { runs };
      }
    }
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(l) })
      .controllers(Orders)
      .provide(KeepsAll.open(new MemoryStore({ bytes: 1 << 20 })));
    const send = () =>
      app.inject({ method: 'POST', url: '/orders', headers: { 'idempotency-key': 'o-1' } });
    const first = send();
    while (release === undefined) await new Promise((r) => setImmediate(r));
    now = LIMIT_MS; // a stall: lost here, while the store still holds the claim (its lease is longer)
    release();
    const failed = await first;
    expect(failed.status).toBe(503);
    expect(failed.json()).toEqual({
      status: 503,
      error: 'claim on Idempotency-Key "o-1" was lost while the handler ran',
    });
    const retry = await send();
    expect([retry.status, retry.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(retry.json()).toEqual({ runs: 2 });
  });
});

describe('the leaseMarginMs setting', () => {
  it('defaults to a tenth of leaseMs; 0 and anything below leaseMs are taken', () => {
    expect(Space('m1', { ttlSeconds: 1, maxBytes: 1 }).leaseMarginMs).toBe(3_000);
    expect(Space('m2', { ttlSeconds: 1, maxBytes: 1, leaseMs: 500 }).leaseMarginMs).toBe(50);
    expect(Space('m3', { ttlSeconds: 1, maxBytes: 1, leaseMarginMs: 0 }).leaseMarginMs).toBe(0);
    expect(
      Space('m4', { ttlSeconds: 1, maxBytes: 1, leaseMs: 500, leaseMarginMs: 499.5 }).leaseMarginMs,
    ).toBe(499.5);
    const opened = Space('m5', { ttlSeconds: 1, maxBytes: 1, leaseMarginMs: 7 }).open(
      new MemoryStore({ bytes: 1 << 16 }),
    );
    expect(opened.leaseMarginMs).toBe(7);
  });

  it('refuses a margin below 0, at or past leaseMs, or not a finite number, with InvalidArgument naming the space', () => {
    for (const bad of [
      -1,
      500,
      501,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '5' as unknown as number,
    ]) {
      let err: unknown;
      try {
        Space('bad-margin', { ttlSeconds: 1, maxBytes: 1, leaseMs: 500, leaseMarginMs: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CacheError);
      expect(err).toMatchObject({ code: 'InvalidArgument' });
      expect((err as Error).message).toMatch(
        /^Space "bad-margin": leaseMarginMs must be a number from 0 to less than leaseMs \(500\), got /,
      );
    }
  });
});
