import { IsInt, IsString, Min } from 'class-validator';
import { logger, FileBody, App, Authorization, Body, Bytes, Controller, Ctx, Get, Idempotent, Param, Post, Put, Redirect, Reply, Returns, Status, fail, headers, type BearerCredentials } from 'fw';
import { MemoryStore, RedisStore, Space, type Store } from 'fw/cache';
import { startRedis } from '../support/redis';
import { CLAIM_LEASE_MS, recordKey } from '../../lib/http/idempotency';

const decodeKept = (b: Buffer | null) => (b === null ? null : JSON.parse(b.toString('utf8', 4, 4 + b.readUInt32BE(0))));

class NewOrder {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

class Problem {
  constructor(readonly reason: string) {}
}

class Csv {
  static contentType = 'text/csv';
  constructor(readonly line: string) {}
  write(out: { write(s: string): void }) {
    out.write(this.line);
  }
}

const Orders = Space('orders', { ttlSeconds: 0.4, maxBytes: 4096 });
const Small = Space('small', { ttlSeconds: 60, maxBytes: 300 });

class Account {
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Account {
    const token = c.authorization('bearer').value;
    return new Account(token.replace(/-token$/, ''));
  }
}

function controller() {
  const counts = { create: 0, fails: 0, slow: 0, conflict: 0, csv: 0, big: 0, byFails: 0, anon: 0 };
  let release: () => void = () => {};
  @Controller()
  class IdemController {
    @Post('/orders')
    @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
    @Returns(Reply(NewOrder, { statuses: [201] }))
    create(@Body() order: NewOrder, account: Account) {
      counts.create++;
      return { status: 201, headers: headers.of([{ name: 'Location', value: `/orders/${counts.create}` }]), value: { ...order, account: account.id, n: counts.create } };
    }

    @Put('/orders')
    @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
    @Returns(Status(200, NewOrder))
    replace(@Body() order: NewOrder, _account: Account) {
      counts.create++;
      return order;
    }

    @Post('/fails')
    @Idempotent(Orders, { by: () => 'one' })
    @Returns(NewOrder)
    fails() {
      counts.fails++;
      if (counts.fails === 1) throw fail.conflict('out of stock');
      if (counts.fails === 2) throw new Error('boom');
      return { sku: 'ok', qty: counts.fails };
    }

    @Post('/slow')
    @Idempotent(Orders, { by: () => 'one' })
    @Returns(Status(202, NewOrder))
    async slow() {
      counts.slow++;
      await new Promise<void>((r) => (release = r));
      return { sku: 'slow', qty: 1 };
    }

    @Post('/conflict')
    @Idempotent(Orders, { by: () => 'one' })
    @Returns(Status(409, Problem))
    conflict() {
      counts.conflict++;
      return new Problem(`already cancelled ${counts.conflict}`);
    }

    @Post('/csv')
    @Idempotent(Orders, { by: () => 'one' })
    @Returns(Status(201, Csv))
    csv() {
      counts.csv++;
      return new Csv(`id,n\nx,${counts.csv}\n`);
    }

    @Post('/big/{size}')
    @Idempotent(Small, { by: () => 'one' })
    @Returns(Bytes)
    big(@Param('size') size: number) {
      counts.big++;
      return new Bytes('x'.repeat(size), 'text/plain');
    }

    @Post('/by-null')
    @Idempotent(Orders, { by: () => null })
    @Returns(NewOrder)
    byNull() {
      counts.create++;
      return { sku: 'never', qty: 1 };
    }

    @Post('/by-throws')
    @Idempotent(Orders, {
      by: () => {
        counts.byFails++;
        throw fail.unauthorized('by says no');
      },
    })
    @Returns(NewOrder)
    byThrows() {
      counts.create++;
      return { sku: 'never', qty: 1 };
    }

    @Post('/anon')
    @Idempotent(Orders)
    @Returns(NewOrder)
    anon(@Body() order: NewOrder) {
      counts.anon++;
      return order;
    }
  }
  return { IdemController, counts, release: () => release() };
}

const bearer = (who: string, key?: string) => ({ authorization: `Bearer ${who}-token`, ...(key === undefined ? {} : { 'idempotency-key': key }) });
const flush = () => new Promise((r) => setTimeout(r, 5));

const stores: [string, () => Promise<{ store: Store; stop: () => Promise<void> }>][] = [
  ['MemoryStore', async () => ({ store: new MemoryStore({ bytes: 1 << 20 }), stop: async () => {} })],
  [
    'RedisStore',
    async () => {
      const redis = await startRedis();
      const store = new RedisStore({ url: redis.url });
      return { store, stop: async () => (await store.close(), await redis.stop()) };
    },
  ],
];

describe.each(stores)('idempotent routes on %s', (_name, makeStore) => {
  let store: Store;
  let stop: () => Promise<void>;
  let app: App;
  let t: ReturnType<typeof controller>;
  const lines: string[] = [];
  beforeAll(async () => ({ store, stop } = await makeStore()));
  afterAll(() => stop());
  beforeEach(() => {
    t = controller();
    lines.length = 0;
    app = new App({ log: (l) => lines.push(l) }).controllers(t.IdemController).provide(Orders.open(store)).provide(Small.open(store));
  });
  let n = 0;
  const fresh = () => `key-${Date.now()}-${n++}`;
  const order = (key: string, body: object = { sku: 'abc', qty: 2 }, who = 'alice', url = '/orders', method = 'POST') => app.inject({ method, url, headers: bearer(who, key), body });

  it('IDEM-01 IDEM-12 IDEM-13 IDEM-26 the handler runs once per key; IDEM-07 retries get the kept answer byte for byte', async () => {
    const key = fresh();
    const first = await order(key);
    const second = await order(key);
    const third = await order(key);
    expect(t.counts.create).toBe(1);
    expect(first.status).toBe(201);
    for (const r of [second, third]) {
      expect(r.status).toBe(201);
      expect(r.body).toBe(first.body);
      expect(r.headers.location).toBe(first.headers.location);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['idempotent-replayed']).toBe('true');
    }
  });

  it('IDEM-08 the first answer carries no Idempotent-Replayed', async () => {
    expect((await order(fresh())).headers['idempotent-replayed']).toBeUndefined();
  });

  it('IDEM-04 IDEM-13 the record keeps status, body and own headers (Location); a replay has its own X-Request-Id', async () => {
    app.use(logger.with({ format: 'json', requestId: true }));
    const key = fresh();
    const first = await order(key);
    const again = await order(key);
    expect(again.headers.location).toBe('/orders/1');
    expect(again.headers.date).toBeDefined();
    expect(again.headers['x-request-id']).toBeDefined();
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    const raw = decodeKept(await Orders.open(store).get(recordKey('alice', key)));
    expect(raw).toMatchObject({ k: 'kept', status: 201, type: 'application/json', own: [['Location', '/orders/1']] });
  });

  it('IDEM-09 a request without Idempotency-Key is 400 and the handler does not run', async () => {
    const res = await app.inject({ method: 'POST', url: '/orders', headers: bearer('alice'), body: { sku: 'a', qty: 1 } });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'Idempotency-Key missing', status: 400 });
    expect(t.counts.create).toBe(0);
  });

  it('IDEM-10 LIMITS-01 a key of 255 bytes is accepted; 256 bytes is 400 and the handler does not run', async () => {
    const base = fresh();
    const k255 = base + 'k'.repeat(255 - base.length);
    expect((await order(k255)).status).toBe(201);
    const res = await order(k255 + 'k');
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toBe('Idempotency-Key longer than 255 bytes');
    expect(t.counts.create).toBe(1);
  });

  it('an empty key is 400 (OPEN-13); the quoted form "abc" is the key abc', async () => {
    expect((await order('')).status).toBe(400);
    expect((await order('""')).status).toBe(400);
    const key = fresh();
    await order(key);
    const quoted = await order(`"${key}"`);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(t.counts.create).toBe(1);
  });

  it('IDEM-11 by returning null is 403; the handler does not run and nothing is claimed', async () => {
    const key = fresh();
    const res = await app.inject({ method: 'POST', url: '/by-null', headers: { 'idempotency-key': key } });
    expect(res.status).toBe(403);
    expect(t.counts.create).toBe(0);
    expect(await Orders.open(store).get(recordKey('', key))).toBeNull();
  });

  it('a by that throws is that failure (not 403) and the handler does not run', async () => {
    const res = await app.inject({ method: 'POST', url: '/by-throws', headers: { 'idempotency-key': fresh() } });
    expect(res.status).toBe(401);
    expect(t.counts.byFails).toBe(1);
    expect(t.counts.create).toBe(0);
  });

  it('IDEM-05 IDEM-02 AUTH-11 (by: c => c.resolve(Account).id) the same key from two callers makes two records; neither gets the other answer', async () => {
    const key = fresh();
    const a = await order(key, undefined, 'alice');
    const b = await order(key, undefined, 'bob');
    expect(t.counts.create).toBe(2);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.json<{ account: string }>().account).toBe('alice');
    expect(b.json<{ account: string }>().account).toBe('bob');
    expect((await order(key, undefined, 'bob')).json<{ account: string }>().account).toBe('bob');
  });

  it('records are filed without ambiguity: caller a:b with key c never meets caller a with key b:c', () => {
    expect(recordKey('a:b', 'c')).not.toBe(recordKey('a', 'b:c'));
  });

  it('IDEM-06 IDEM-20 the same key with a different body is 422; the handler does not run and the record stays', async () => {
    const key = fresh();
    const first = await order(key);
    const other = await order(key, { sku: 'zzz', qty: 2 });
    expect(other.status).toBe(422);
    expect(t.counts.create).toBe(1);
    expect((await order(key)).body).toBe(first.body);
  });

  it('reordered JSON keys are a different request (the fingerprint covers raw bytes)', async () => {
    const key = fresh();
    await app.inject({ method: 'POST', url: '/orders', headers: { ...bearer('alice', key), 'content-type': 'application/json' }, body: '{"sku":"a","qty":1}' });
    const res = await app.inject({ method: 'POST', url: '/orders', headers: { ...bearer('alice', key), 'content-type': 'application/json' }, body: '{"qty":1,"sku":"a"}' });
    expect(res.status).toBe(422);
  });

  it('IDEM-21 IDEM-22 IDEM-23 the same key with a different path, query or method is 422', async () => {
    const key = fresh();
    await order(key);
    expect((await order(key, undefined, 'alice', '/orders?x=1')).status).toBe(422);
    expect((await order(key, undefined, 'alice', '/orders', 'PUT')).status).toBe(422);
    const k2 = fresh();
    await app.inject({ method: 'POST', url: '/conflict', headers: { 'idempotency-key': k2 } });
    expect((await app.inject({ method: 'POST', url: '/csv', headers: { 'idempotency-key': k2 } })).status).toBe(422);
  });

  it('IDEM-17 IDEM-18 IDEM-28 a failure is what the client gets, is not kept, and the next retry runs the handler', async () => {
    const key = fresh();
    const send = () => app.inject({ method: 'POST', url: '/fails', headers: { 'idempotency-key': key } });
    const a = await send();
    expect(a.json()).toEqual({ error: 'out of stock', status: 409 });
    const b = await send();
    expect(b.status).toBe(500);
    const c = await send();
    expect(c.status).toBe(200);
    expect(c.headers['idempotent-replayed']).toBeUndefined();
    expect((await send()).headers['idempotent-replayed']).toBe('true');
    expect(t.counts.fails).toBe(3);
  });

  it('IDEM-19 IDEM-30 a second request while the first is in flight is 409 with Retry-After; the first goes on', async () => {
    const key = fresh();
    const first = app.inject({ method: 'POST', url: '/slow', headers: { 'idempotency-key': key } });
    await flush();
    await flush();
    const second = await app.inject({ method: 'POST', url: '/slow', headers: { 'idempotency-key': key } });
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBe('1');
    t.release();
    expect((await first).status).toBe(202);
    expect(t.counts.slow).toBe(1);
  });

  it('IDEM-30 CACHE-06 simultaneous first requests for one key run the handler exactly once', async () => {
    const key = fresh();
    const all = await Promise.all(Array.from({ length: 20 }, () => order(key)));
    const statuses = all.map((r) => r.status);
    expect(t.counts.create).toBe(1);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
  });

  it('IDEM-27 a typed status such as Status(409, Problem) is kept and replayed', async () => {
    const key = fresh();
    const send = () => app.inject({ method: 'POST', url: '/conflict', headers: { 'idempotency-key': key } });
    const a = await send();
    const b = await send();
    expect([a.status, b.status]).toEqual([409, 409]);
    expect(b.body).toBe(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(t.counts.conflict).toBe(1);
  });

  it('IDEM-29 a self-writing answer is kept with its content type and replayed under it', async () => {
    const key = fresh();
    const send = () => app.inject({ method: 'POST', url: '/csv', headers: { 'idempotency-key': key } });
    const a = await send();
    const b = await send();
    expect(b.headers['content-type']).toBe('text/csv');
    expect([b.status, b.body]).toEqual([201, a.body]);
    expect(t.counts.csv).toBe(1);
  });

  it('IDEM-14 IDEM-15 IDEM-16 LIMITS-02 an answer up to maxBytes is kept; one byte more is sent, not kept, and logged', async () => {
    // The kept record is the body plus its meta (status, type, fingerprint): measure the meta once.
    const probe = fresh();
    await app.inject({ method: 'POST', url: '/big/10', headers: { 'idempotency-key': probe } });
    const raw = await Small.open(store).get(recordKey('one', probe));
    const overhead = raw!.length - 10;
    const fit = 300 - overhead;
    const k1 = fresh();
    const send = (size: number, key: string) => app.inject({ method: 'POST', url: `/big/${size}`, headers: { 'idempotency-key': key } });
    await send(fit, k1);
    expect((await send(fit, k1)).headers['idempotent-replayed']).toBe('true');
    const k2 = fresh();
    const over = await send(fit + 1, k2);
    expect(over.status).toBe(200);
    expect(over.body.length).toBe(fit + 1);
    const retry = await send(fit + 1, k2);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(t.counts.big).toBe(4);
    await flush();
    expect(lines.join('\n')).toContain('larger than the space\'s maxBytes (300): sent, not kept');
  });

  it('IDEM-24 IDEM-25 once ttlSeconds pass the record is gone and the handler runs again', async () => {
    const key = fresh();
    await order(key);
    await new Promise((r) => setTimeout(r, 600));
    const again = await order(key);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(t.counts.create).toBe(2);
    // The replay is the new record's answer, not the first one decoded earlier in this process.
    const replay = await order(key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(replay.body).n).toBe(2);
  });

  it('IDEM-07 a replay sends the record the store holds now, even when another instance replaced it', async () => {
    const key = fresh();
    const first = await order(key);
    expect((await order(key)).body).toBe(first.body); // decoded and remembered by this app
    // Another instance on the same store keeps a different answer under the same (caller, key).
    const other = new App({ log: () => {} }).controllers(controller().IdemController).provide(Orders.open(store)).provide(Small.open(store));
    await other.inject({ method: 'POST', url: '/orders', headers: bearer('alice', fresh()), body: { sku: 'abc', qty: 2 } });
    await Orders.open(store).del(recordKey('alice', key));
    const theirs = await other.inject({ method: 'POST', url: '/orders', headers: bearer('alice', key), body: { sku: 'abc', qty: 2 } });
    expect(theirs.headers.location).toBe('/orders/2');
    const replay = await order(key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(theirs.body);
    expect(t.counts.create).toBe(1);
  });

  it('IDEM-31 IDEM-33 a route with a single caller may leave out by; its body is the declared @Body type', async () => {
    const key = fresh();
    const send = () => app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': key }, body: { sku: 's', qty: 1 } });
    await send();
    expect((await send()).headers['idempotent-replayed']).toBe('true');
    expect(t.counts.anon).toBe(1);
    expect((await app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': fresh() }, body: { sku: 1 } })).status).toBe(400);
  });
});

describe('idempotent replay over a real socket', () => {
  const Kept = Space('wire', { ttlSeconds: 60, maxBytes: 4096 });
  const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  let runs = 0;
  @Controller()
  class WireController {
    @Post('/ascii') @Idempotent(Kept, { by: () => 'one' }) @Returns(Status(201, Object))
    ascii() {
      runs++;
      return { sku: 'abc-123', qty: 3 };
    }

    @Post('/utf8') @Idempotent(Kept, { by: () => 'one' }) @Returns(Object)
    utf8() {
      runs++;
      return { name: 'café – ü 日本 😀' };
    }

    @Post('/bytes') @Idempotent(Kept, { by: () => 'one' }) @Returns(Bytes)
    bytes() {
      runs++;
      return new Bytes(ALL_BYTES);
    }
  }
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = new App({ log: () => {} }).controllers(WireController).provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })));
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  const post = async (path: string, key: string) => {
    const r = await fetch(url + path, { method: 'POST', headers: { 'idempotency-key': key, 'content-type': 'application/json' }, body: '{"n":1}' });
    return { status: r.status, type: r.headers.get('content-type'), replayed: r.headers.get('idempotent-replayed'), bytes: Buffer.from(await r.arrayBuffer()) };
  };

  it.each(['/ascii', '/utf8', '/bytes'])('IDEM-07 %s: replays carry the first answer\'s bytes exactly (ASCII, UTF-8 and binary bodies)', async (path) => {
    const before = runs;
    const first = await post(path, `wire-${path}`);
    const replays = [await post(path, `wire-${path}`), await post(path, `wire-${path}`)];
    expect(runs).toBe(before + 1);
    if (path === '/bytes') expect(first.bytes.equals(ALL_BYTES)).toBe(true);
    if (path === '/utf8') expect(JSON.parse(first.bytes.toString('utf8'))).toEqual({ name: 'café – ü 日本 😀' });
    for (const r of replays) {
      expect(r.replayed).toBe('true');
      expect(r.status).toBe(first.status);
      expect(r.type).toBe(first.type);
      expect(r.bytes.equals(first.bytes)).toBe(true);
    }
  });
});

describe('idempotency without a store', () => {
  it('IDEM-32 the decorated handler stays a plain method a unit test can call', () => {
    const { IdemController, counts } = controller();
    const ctrl = new IdemController();
    const r = ctrl.create(Object.assign(new NewOrder(), { sku: 'a', qty: 1 }), new Account('alice'));
    expect(r.status).toBe(201);
    expect(counts.create).toBe(1);
  });

  it('IDEM-03 a program\'s own store with the contract can replace ours', async () => {
    const calls: string[] = [];
    const inner = new MemoryStore({ bytes: 1 << 16 });
    const own: Store = {
      get: (k) => (calls.push('get'), inner.get(k)),
      putIfAbsent: (k, v, t) => (calls.push('putIfAbsent'), inner.putIfAbsent(k, v, t)),
      put: (k, v, t, o) => (calls.push('put'), inner.put(k, v, t, o)),
      del: (k, o) => (calls.push('del'), inner.del(k, o)),
      close: () => inner.close(),
    };
    const { IdemController } = controller();
    const app = new App({ log: () => {} }).controllers(IdemController).provide(Orders.open(own)).provide(Small.open(own));
    const key = 'own-' + Date.now();
    await app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': key }, body: { sku: 's', qty: 1 } });
    const again = await app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': key }, body: { sku: 's', qty: 1 } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(calls).toEqual(['get', 'putIfAbsent', 'put', 'get']);
  });

  it('the store failing fails closed: 503, no handler run, no hang', async () => {
    const redis = await startRedis();
    const store = new RedisStore({ url: redis.url, commandTimeoutMs: 300 });
    const { IdemController, counts } = controller();
    const app = new App({ log: () => {} }).controllers(IdemController).provide(Orders.open(store)).provide(Small.open(store));
    await redis.stop();
    const started = Date.now();
    const res = await app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': 'down' }, body: { sku: 's', qty: 1 } });
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'idempotency store unavailable', status: 503 });
    expect(counts.anon).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    await store.close();
  });

  it('an in-process store that fails (closed MemoryStore, read through peek) fails closed too: 503, no handler run', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const { IdemController, counts } = controller();
    const app = new App({ log: () => {} }).controllers(IdemController).provide(Orders.open(store)).provide(Small.open(store));
    await store.close();
    const res = await app.inject({ method: 'POST', url: '/anon', headers: { 'idempotency-key': 'closed' }, body: { sku: 's', qty: 1 } });
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'idempotency store unavailable', status: 503 });
    expect(counts.anon).toBe(0);
  });

  it('the claim lease is far shorter than a record TTL', () => {
    expect(CLAIM_LEASE_MS).toBe(30_000);
  });
});

describe('idempotency Refusals', () => {
  class Thing {
    @IsString() a!: string;
  }
  @Controller('/r')
  class Refused {
    @Post('/ctx')
    @Idempotent(Orders, { by: () => 'x' })
    viaCtx(c: Ctx) {
      c.sendText(200, 'x');
    }
    @Post('/redirect')
    @Idempotent(Orders, { by: () => 'x' })
    @Returns(Redirect(303))
    redirect() {
      return Redirect.to('/');
    }
    @Post('/auth')
    @Idempotent(Orders)
    @Returns(Thing)
    auth(@Authorization('bearer') a: BearerCredentials) {
      return { a: a.value };
    }
    @Post('/resolved')
    @Idempotent(Orders)
    @Returns(Thing)
    resolved(account: Account) {
      return { a: account.id };
    }
    @Get('/file')
    @Idempotent(Orders, { by: () => 'x' })
    @Returns(FileBody)
    file() {
      return null;
    }
    @Get('/unprovided')
    @Idempotent(Small, { by: () => 'x' })
    @Returns(Thing)
    unprovided() {
      return { a: '1' };
    }
  }
  const problems = (() => {
    try {
      new App().controllers(Refused).provide(Orders.open(new MemoryStore({ bytes: 1024 }))).build();
    } catch (e) {
      return (e as { problems: string[] }).problems;
    }
    return [];
  })();

  it('REF-10 @Idempotent on a route that answers through the Ctx is refused naming the route', () => {
    expect(problems.some((p) => p.startsWith('POST /r/ctx (Refused.viaCtx): @Idempotent route answers through the Ctx'))).toBe(true);
  });
  it('REF-11 @Idempotent on a FileBody is refused naming the route', () => {
    expect(problems).toContain('GET /r/file (Refused.file): @Idempotent cannot keep a FileBody answer');
  });
  it('REF-12 @Idempotent on a Redirect is refused naming the route', () => {
    expect(problems).toContain('POST /r/redirect (Refused.redirect): @Idempotent cannot keep a Redirect answer');
  });
  it('REF-32 @Idempotent without by on a route with an Authorization or a resolved caller is refused', () => {
    expect(problems.filter((p) => p.includes('@Idempotent without by')).map((p) => p.split(':')[0])).toEqual(['POST /r/auth (Refused.auth)', 'POST /r/resolved (Refused.resolved)']);
  });
  it('a space that is not provided is refused naming it (OPEN-60)', () => {
    expect(problems).toContain('GET /r/unprovided (Refused.unprovided): @Idempotent space "small" is not provided: app.provide(small.open(store))');
  });
});
