import {
  App,
  Controller,
  Header,
  Idempotent,
  Post,
  Reply,
  Returns,
  Status,
  fail,
  reply,
  Ctx,
} from 'fw-http';
import { MemoryStore, Space, type Store } from 'fw-http/cache';
import { send } from '../support/post';

// Idempotency's edges (key bytes, callers, replays, refusals) over one app's routes.

const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });

/** An app whose POST /by/<n> names its caller with `bys[n]`, and POST /one with no `by`; `runs` counts handler runs. */
function byApp(bys: readonly ((c: Ctx) => unknown)[], lines: string[]) {
  const runs = { n: 0 };
  const routes = bys.map((by, i) => {
    @Controller()
    class By {
      @Post(`/by/${i}`)
      @Idempotent(Orders, { by: by as (c: Ctx) => string })
      @Returns(Status(201, Object))
      create() {
        runs.n++;
        return { n: runs.n };
      }
    }
    Object.defineProperty(By, 'name', { value: `By${i}` });
    return By;
  });
  @Controller()
  class One {
    @Post('/one')
    @Idempotent(Orders)
    @Returns(Status(201, Object))
    create() {
      runs.n++;
      return { n: runs.n };
    }
  }
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(...routes, One)
    .provide(Orders.open(new MemoryStore({ bytes: 1024 * 1024 })));
  return { app, runs };
}

describe('idempotency: the caller and the key', () => {
  it('a `by` that returns anything but a non-empty string is 500 naming the route in the log, and the handler never runs', async () => {
    const lines: string[] = [];
    const bad = [
      () => () => 'x',
      () => ({ id: 'x' }),
      () => '',
      () => 42,
      () => Object.prototype.toString,
    ];
    const { app, runs } = byApp(bad, lines);
    for (let i = 0; i < bad.length; i++) {
      const res = await app.inject({
        method: 'POST',
        url: `/by/${i}`,
        headers: { 'idempotency-key': `k${i}` },
      });
      expect([i, res.status]).toEqual([i, 500]);
      await new Promise((r) => setImmediate(r)); // the log sink writes on the next turn
      expect(JSON.stringify(res.json())).not.toContain('Idempotent'); // the reason is logged, not sent
      expect(
        lines.some(
          (l) =>
            l.includes(`POST /by/${i} (By${i}.create)`) && l.includes('@Idempotent by returned'),
        ),
      ).toBe(true);
    }
    expect(runs.n).toBe(0);
  });

  it('a `by` that returns null is still 403, and a non-empty string a caller', async () => {
    const { app, runs } = byApp([() => null, () => 'alice'], []);
    const none = await app.inject({
      method: 'POST',
      url: '/by/0',
      headers: { 'idempotency-key': 'a' },
    });
    expect(none.status).toBe(403);
    const ok = await app.inject({
      method: 'POST',
      url: '/by/1',
      headers: { 'idempotency-key': 'a' },
    });
    expect(ok.status).toBe(201);
    expect(runs.n).toBe(1);
  });

  it('two Idempotency-Key headers are 400 over a real socket, never the key "k1, k2"; one key holding a comma is still one key', async () => {
    const { app, runs } = byApp([], []);
    const { port } = await app.listen({ port: 0 });
    try {
      const head = (keys: string[]) =>
        `POST /one HTTP/1.1\r\nHost: x\r\n${keys.map((k) => `Idempotency-Key: ${k}\r\n`).join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`;
      const two = await rawText(port, head(['k1', 'k2']));
      expect(two).toMatch(/^HTTP\/1.1 400 /);
      expect(two).toContain('more than one Idempotency-Key');
      expect(runs.n).toBe(0);
      // The same two as one line with a comma: one key, run once.
      expect(await rawText(port, head(['k1, k2']))).toMatch(/^HTTP\/1.1 201 /);
      expect(runs.n).toBe(1);
      expect(
        (await send(port, '/one', { headers: { 'idempotency-key': 'k1, k2' } })).headers[
          'idempotent-replayed'
        ],
      ).toBe('true');
    } finally {
      await app.close();
    }
  });
});

async function rawText(port: number, text: string): Promise<string> {
  const { raw } = await import('../support/raw');
  return (await raw(port, text, { quietMs: 2000 })).text;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const flush = () => new Promise((r) => setImmediate(r));

describe('idempotency: after the handler ran', () => {
  for (const kind of ['sync', 'async'] as const) {
    it(`an answer refused by the run-time @Returns check (${kind} handler) is 500 once and replayed after: the side effect runs once`, async () => {
      const lines: string[] = [];
      let charges = 0;
      @Controller()
      class Pay {
        @Post('/charges')
        @Idempotent(Orders, { by: () => 'one' })
        @Returns(Reply(Object, { statuses: [201] }))
        charge() {
          charges++;
          const wrong = reply(200 as 201, { charged: charges });
          return kind === 'sync' ? wrong : Promise.resolve(wrong);
        }
      }
      const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
        .controllers(Pay)
        .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })));
      const tries = [];
      for (let i = 0; i < 3; i++)
        tries.push(
          await app.inject({
            method: 'POST',
            url: '/charges',
            headers: { 'idempotency-key': `c-${kind}` },
          }),
        );
      expect(tries.map((t) => t.status)).toEqual([500, 500, 500]);
      expect(tries.map((t) => t.headers['idempotent-replayed'])).toEqual([
        undefined,
        'true',
        'true',
      ]);
      expect(tries[1].body).toBe(tries[0].body);
      expect(charges).toBe(1);
      await flush();
      expect(
        lines.filter(
          (l) => l.includes('POST /charges (Pay.charge)') && l.includes('UndeclaredAnswer'),
        ),
      ).toHaveLength(1);
    });
  }

  it('a handler that throws still releases its key (IDEM-17): the retry runs it', async () => {
    let runs = 0;
    @Controller()
    class Flaky {
      @Post('/flaky')
      @Idempotent(Orders, { by: () => 'one' })
      @Returns(Status(201, Object))
      async make() {
        runs++;
        if (runs === 1) throw new Error('boom');
        return { runs };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(Flaky)
      .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })));
    const one = () =>
      app.inject({ method: 'POST', url: '/flaky', headers: { 'idempotency-key': 'f' } });
    expect((await one()).status).toBe(500);
    expect((await one()).status).toBe(201);
    expect(runs).toBe(2);
  });

  it('an answer sent but not kept is refused 503 for the record TTL, well past the lease, then the key is free again', async () => {
    const Fragile = Space('fragile', { ttlSeconds: 2, maxBytes: 4096, leaseMs: 100 });
    const inner = new MemoryStore({ bytes: 1 << 20 });
    // Keeps nothing: every keep over a claim fails, as a store that went down after the claim.
    const store: Store = {
      get: (k) => inner.get(k),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: () => Promise.reject(new Error('store down')),
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    let runs = 0;
    @Controller()
    class Keep {
      @Post('/keep')
      @Idempotent(Fragile, { by: () => 'one' })
      @Returns(Status(201, Object))
      keep() {
        return { run: ++runs };
      }
    }
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
      .controllers(Keep)
      .provide(Fragile.open(store));
    const one = () =>
      app.inject({ method: 'POST', url: '/keep', headers: { 'idempotency-key': 'k' } });
    const started = performance.now();
    expect((await one()).status).toBe(201);
    await sleep(500); // five leases: the claim has lapsed in the store
    const retry = await one();
    expect(retry.status).toBe(503);
    expect(Number(retry.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(runs).toBe(1);
    await flush();
    expect(
      lines.some((l) => l.includes('sent but not kept') && l.includes('refused 503 for 2 s')),
    ).toBe(true);
    await sleep(Math.max(0, 2300 - (performance.now() - started)));
    expect((await one()).status).toBe(201); // the window is over: as for a key whose record lapsed
    expect(runs).toBe(2);
  });
});

describe('the per-caller share of a MemoryStore', () => {
  it('the default maxBytesPerCaller is a sixteenth of the store shared by its spaces; elsewhere the larger of 16 MiB and 64 × maxBytes', () => {
    const A = Space('a', { ttlSeconds: 60, maxBytes: 4096 });
    const B = Space('b', { ttlSeconds: 60, maxBytes: 4096 });
    expect(A.maxBytesPerCaller).toBeNull();
    expect(A.open(new MemoryStore({ bytes: 16 << 20 })).maxBytesPerCaller).toBe(1 << 20);
    const shared = new MemoryStore({ bytes: 16 << 20 });
    const a = A.open(shared);
    B.open(shared);
    expect(a.maxBytesPerCaller).toBe(512 << 10);
    // At least two of the largest records, however small the store.
    expect(A.open(new MemoryStore({ bytes: 1024 })).maxBytesPerCaller).toBe(
      2 * (4096 + 1024 + MemoryStore.entryOverheadBytes),
    );
    const inner = new MemoryStore({ bytes: 1024 });
    const own: Store = {
      get: (k) => inner.get(k),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: (k, v, t, o) => inner.put(k, v, t, o),
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    expect(A.open(own).maxBytesPerCaller).toBe(16 << 20);
    expect(
      Space('c', { ttlSeconds: 60, maxBytes: 1, maxBytesPerCaller: 99 }).open(shared)
        .maxBytesPerCaller,
    ).toBe(99);
  });

  it('fourteen callers filling at their cap leave room for a new caller’s claim; a warning is logged once the store passes 80 %', async () => {
    const Shop = Space('shop', { ttlSeconds: 60, maxBytes: 4096 });
    const store = new MemoryStore({ bytes: 1 << 20 });
    @Controller()
    class Fill {
      @Post('/orders')
      @Idempotent(Shop, { by: (c) => c.header('x-caller') })
      @Returns(Status(201, Object))
      create() {
        return { pad: 'x'.repeat(2000) };
      }
    }
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
      .controllers(Fill)
      .provide(Shop.open(store));
    const post = (who: string, key: string) =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'x-caller': who, 'idempotency-key': key },
      });
    for (let who = 0; who < 14; who++) {
      let status = 201;
      for (let i = 0; i < 200 && status === 201; i++)
        status = (await post(`c${who}`, `k${i}`)).status;
      expect([who, status]).toEqual([who, 429]); // at its cap, not at a full store
    }
    expect(store.bytesUsed).toBeLessThan(store.bytes);
    expect((await post('newcomer', 'k0')).status).toBe(201);
    await flush();
    const warnings = lines.filter((l) =>
      l.startsWith('warning: space "shop": the idempotency store is'),
    );
    expect(warnings).toHaveLength(1);
  });
});

describe('tests that kill the step’s mutants', () => {
  /** An app of one idempotent POST /x whose handler is `run`, on a fresh memory store (or `store`). */
  function one(
    run: (c: Ctx) => object | Promise<object>,
    store: Store = new MemoryStore({ bytes: 1 << 20 }),
  ) {
    @Controller()
    class X {
      @Post('/x')
      @Idempotent(Orders, { by: () => 'one' })
      @Returns(Status(201, Object))
      x(c: Ctx) {
        return run(c);
      }
    }
    const app = new App({ log: () => {} }).controllers(X).provide(Orders.open(store));
    const post = (key: string, body = '') =>
      app.inject({ method: 'POST', url: '/x', headers: { 'idempotency-key': key }, body });
    return { app, post };
  }

  it('IDEM-17 IDEM-18 an async handler that rejects answers its failure at once, keeps nothing and frees its key', async () => {
    let runs = 0;
    const { post } = one(async () => {
      runs++;
      await flush();
      if (runs === 1) throw fail.conflict('out of stock');
      if (runs === 2) throw new Error('boom');
      return { runs };
    });
    expect((await post('a')).status).toBe(409);
    expect((await post('a')).status).toBe(500);
    const ok = await post('a');
    expect([ok.status, ok.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(runs).toBe(3);
  });

  it('the same mismatched body sent twice is 422 both times; the first body still replays', async () => {
    const { post } = one(() => ({ ok: true }));
    expect((await post('m', '{"a":1}')).status).toBe(201);
    expect((await post('m', '{"a":2}')).status).toBe(422);
    expect((await post('m', '{"a":2}')).status).toBe(422);
    expect((await post('m', '{"a":1}')).headers['idempotent-replayed']).toBe('true');
  });

  it('a retry after a longer request on another key still replays (no stale scratch bytes in the fingerprint)', async () => {
    const { post } = one(() => ({ ok: true }));
    expect((await post('short', '{"a":1}')).status).toBe(201);
    expect((await post('long', JSON.stringify({ pad: 'y'.repeat(9000) }))).status).toBe(201);
    expect((await post('mid', JSON.stringify({ pad: 'z'.repeat(3000) }))).status).toBe(201);
    const again = await post('short', '{"a":1}');
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
  });

  it('OPEN-50 at run time: an idempotent route that answers through the Ctx is 500, keeps nothing, and its retry is refused the same way', async () => {
    let runs = 0;
    const { post } = one((c) => {
      runs++;
      c.sendText(200, 'sent by hand');
      return { never: true };
    });
    const first = await post('o');
    expect(first.status).toBe(500);
    expect(first.body).not.toContain('sent by hand');
    expect((await post('o')).status).toBe(500);
    expect(runs).toBe(2); // refused before it answered: the handler had not returned, nothing ran to keep
  });

  it('two answers not kept at once are both remembered: both retries are 503, neither runs again', async () => {
    const inner = new MemoryStore({ bytes: 1 << 20 });
    const store: Store = {
      get: (k) => inner.get(k),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: () => Promise.reject(new Error('store down')),
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    let runs = 0;
    const { post } = one(async () => {
      runs++;
      await sleep(20);
      return { runs };
    }, store);
    const both = await Promise.all([post('p'), post('q')]);
    expect(both.map((r) => r.status)).toEqual([201, 201]);
    expect([(await post('p')).status, (await post('q')).status]).toEqual([503, 503]);
    expect(runs).toBe(2);
  });

  it('keep and release compare-and-set: a holder whose claim lapsed while a rival claimed neither overwrites nor deletes the rival’s record', async () => {
    const Short = Space('short', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 100 });
    const inner = new MemoryStore({ bytes: 1 << 20 });
    // Renewals (a claim put over itself) are dropped, so a claim lapses after its lease.
    const store: Store = {
      get: (k) => inner.get(k),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: (k, v, t, o) => (o?.expect?.equals(v) ? Promise.resolve(true) : inner.put(k, v, t, o)),
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    const gates: (() => void)[] = [];
    const made: string[] = [];
    function instance(name: string) {
      @Controller()
      class X {
        @Post('/x')
        @Idempotent(Short, { by: () => 'one' })
        @Returns(Status(201, Object))
        async x(@Header('x-fail') failIt: string | undefined) {
          made.push(name);
          if (name === 'stale') await new Promise<void>((r) => gates.push(r));
          if (failIt === 'yes') throw new Error('late failure');
          return { by: name };
        }
      }
      return new App({ log: () => {} }).controllers(X).provide(Short.open(store));
    }
    const stale = instance('stale');
    const rival = instance('rival');
    for (const failIt of ['no', 'yes']) {
      const key = `cas-${failIt}`;
      const headers = { 'idempotency-key': key, 'x-fail': failIt };
      const first = stale.inject({ method: 'POST', url: '/x', headers });
      await sleep(400); // four leases: the stale claim is gone from the store
      const won = await rival.inject({
        method: 'POST',
        url: '/x',
        headers: { 'idempotency-key': key },
      });
      expect(won.status).toBe(201);
      gates.splice(0).forEach((open) => open());
      await first; // kept over a claim it no longer holds (refused), or released (refused)
      const replay = await rival.inject({
        method: 'POST',
        url: '/x',
        headers: { 'idempotency-key': key },
      });
      expect([failIt, replay.status, replay.headers['idempotent-replayed'], replay.json()]).toEqual(
        [failIt, 201, 'true', { by: 'rival' }],
      );
    }
  });
});
