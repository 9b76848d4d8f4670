import { IsInt, IsString, Min } from 'class-validator';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import {
  logger,
  App,
  Authorization,
  Body,
  Bytes,
  Controller,
  Ctx,
  Get,
  Idempotent,
  Param,
  Post,
  Put,
  Redirect,
  Reply,
  Returns,
  Status,
  fail,
  reply,
  type BearerCredentials,
} from 'fw-http';
import { Session } from 'fw-http/browser';
import { FileBody } from 'fw-http/files';
import { MemoryStore, RedisStore, Space, type Store } from 'fw-http/cache';
import { startRedis } from '../support/redis';
import { CLAIM_LEASE_MS } from '../../lib/http/features/idempotency/idempotent-mark';
import { recordKey } from '../../lib/http/features/idempotency/read-key';
import { CallerBudget } from '../../lib/http/features/idempotency/caller-budget';
import { KeptAnswers, type KeptAnswer } from '../../lib/http/features/idempotency/kept-answers';

const decodeKept = (b: Buffer | null) =>
  b === null ? null : JSON.parse(b.toString('utf8', 4, 4 + b.readUInt32BE(0)));

class NewOrder {
  @IsString() sku!: string;
  @IsInt() @Min(1) qty!: number;
}

/** What create answers: the order, whose account and run number the tests read (declared). */
class Placed extends NewOrder {
  @IsString() account!: string;
  @IsInt() n!: number;
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
    @Returns(Reply(Placed, { statuses: [201] }))
    create(@Body() order: NewOrder, account: Account) {
      counts.create++;
      return reply(
        201,
        { ...order, account: account.id, n: counts.create },
        { Location: `/orders/${counts.create}` },
      );
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

const bearer = (who: string, key?: string) => ({
  authorization: `Bearer ${who}-token`,
  ...(key === undefined ? {} : { 'idempotency-key': key }),
});
const flush = () => new Promise((r) => setTimeout(r, 5));

const stores: [string, () => Promise<{ store: Store; stop: () => Promise<void> }>][] = [
  [
    'MemoryStore',
    async () => ({ store: new MemoryStore({ bytes: 1 << 20 }), stop: async () => {} }),
  ],
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
    app = new App({ log: (l) => lines.push(l) })
      .controllers(t.IdemController)
      .provide(Orders.open(store))
      .provide(Small.open(store));
  });
  let n = 0;
  const fresh = () => `key-${Date.now()}-${n++}`;
  const order = (
    key: string,
    body: object = { sku: 'abc', qty: 2 },
    who = 'alice',
    url = '/orders',
    method = 'POST',
  ) => app.inject({ method, url, headers: bearer(who, key), body });

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
    expect(raw).toMatchObject({
      k: 'kept',
      status: 201,
      type: 'application/json',
      own: [['Location', '/orders/1']],
    });
  });

  it('IDEM-09 a request without Idempotency-Key is 400 and the handler does not run', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/orders',
      headers: bearer('alice'),
      body: { sku: 'a', qty: 1 },
    });
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
    const res = await app.inject({
      method: 'POST',
      url: '/by-null',
      headers: { 'idempotency-key': key },
    });
    expect(res.status).toBe(403);
    expect(t.counts.create).toBe(0);
    expect(await Orders.open(store).get(recordKey('', key))).toBeNull();
  });

  it('a by that throws is that failure (not 403) and the handler does not run', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/by-throws',
      headers: { 'idempotency-key': fresh() },
    });
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

  it('a JSON body is fingerprinted as canonical JSON: reordered keys and whitespace are the same request, another value is not', async () => {
    const key = fresh();
    const send = (body: string) =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...bearer('alice', key), 'content-type': 'application/json' },
        body,
      });
    const first = await send('{"sku":"a","qty":1}');
    const again = await send(' { "qty": 1,\n "sku": "a" } ');
    expect(again.status).toBe(first.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect((await send('{"qty":2,"sku":"a"}')).status).toBe(422);
  });

  it('a record kept under the raw-bytes fingerprint (by an earlier fw) still replays its JSON request', async () => {
    const key = fresh();
    const first = await order(key);
    const space = Orders.open(store);
    const record = (await space.get(recordKey('alice', key)))!;
    const n = record.readUInt32BE(0);
    const meta = JSON.parse(record.toString('utf8', 4, 4 + n)) as { fp: string };
    const raw = Buffer.concat([
      Buffer.from('POST\0/orders\0\0'),
      Buffer.from('{"sku":"abc","qty":2}'),
    ]);
    meta.fp = createHash('sha256').update(raw).digest('base64url');
    const head = Buffer.from(JSON.stringify(meta));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(head.length);
    await space.put(recordKey('alice', key), Buffer.concat([length, head, record.subarray(4 + n)]));
    const again = await order(key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(t.counts.create).toBe(1);
    expect((await order(key, { sku: 'abc', qty: 3 })).status).toBe(422);
  });

  it('a number that parsing could round is fingerprinted as sent: 16 digits apart by one are two requests', async () => {
    const key = fresh();
    const send = (sku: string) =>
      app.inject({
        method: 'POST',
        url: '/orders',
        headers: { ...bearer('alice', key), 'content-type': 'application/json' },
        body: `{"sku":"a","qty":1,"ref":${sku}}`,
      });
    expect((await send('12345678901234567')).status).toBe(201);
    // Both parse to one double; the fingerprint still tells them apart.
    expect((await send('12345678901234568')).status).toBe(422);
  });

  it('IDEM-21 IDEM-22 IDEM-23 the same key with a different path, query or method is 422', async () => {
    const key = fresh();
    await order(key);
    expect((await order(key, undefined, 'alice', '/orders?x=1')).status).toBe(422);
    expect((await order(key, undefined, 'alice', '/orders', 'PUT')).status).toBe(422);
    const k2 = fresh();
    await app.inject({ method: 'POST', url: '/conflict', headers: { 'idempotency-key': k2 } });
    expect(
      (await app.inject({ method: 'POST', url: '/csv', headers: { 'idempotency-key': k2 } }))
        .status,
    ).toBe(422);
  });

  it('IDEM-17 IDEM-18 IDEM-28 a failure is what the client gets, is not kept, and the next retry runs the handler', async () => {
    const key = fresh();
    const send = () =>
      app.inject({ method: 'POST', url: '/fails', headers: { 'idempotency-key': key } });
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
    const second = await app.inject({
      method: 'POST',
      url: '/slow',
      headers: { 'idempotency-key': key },
    });
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
    const send = () =>
      app.inject({ method: 'POST', url: '/conflict', headers: { 'idempotency-key': key } });
    const a = await send();
    const b = await send();
    expect([a.status, b.status]).toEqual([409, 409]);
    expect(b.body).toBe(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(t.counts.conflict).toBe(1);
  });

  it('IDEM-29 a self-writing answer is kept with its content type and replayed under it', async () => {
    const key = fresh();
    const send = () =>
      app.inject({ method: 'POST', url: '/csv', headers: { 'idempotency-key': key } });
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
    const send = (size: number, key: string) =>
      app.inject({ method: 'POST', url: `/big/${size}`, headers: { 'idempotency-key': key } });
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
    expect(lines.join('\n')).toContain("larger than the space's maxBytes (300): sent, not kept");
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
    const other = new App({ log: () => {} })
      .controllers(controller().IdemController)
      .provide(Orders.open(store))
      .provide(Small.open(store));
    await other.inject({
      method: 'POST',
      url: '/orders',
      headers: bearer('alice', fresh()),
      body: { sku: 'abc', qty: 2 },
    });
    await Orders.open(store).del(recordKey('alice', key));
    const theirs = await other.inject({
      method: 'POST',
      url: '/orders',
      headers: bearer('alice', key),
      body: { sku: 'abc', qty: 2 },
    });
    expect(theirs.headers.location).toBe('/orders/2');
    const replay = await order(key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(theirs.body);
    expect(t.counts.create).toBe(1);
  });

  it('IDEM-31 IDEM-33 a route with a single caller may leave out by; its body is the declared @Body type', async () => {
    const key = fresh();
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/anon',
        headers: { 'idempotency-key': key },
        body: { sku: 's', qty: 1 },
      });
    await send();
    expect((await send()).headers['idempotent-replayed']).toBe('true');
    expect(t.counts.anon).toBe(1);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/anon',
          headers: { 'idempotency-key': fresh() },
          body: { sku: 1 },
        })
      ).status,
    ).toBe(400);
  });
});

describe('idempotent replay over a real socket', () => {
  const Kept = Space('wire', { ttlSeconds: 60, maxBytes: 4096 });
  const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  let runs = 0;
  @Controller()
  class WireController {
    @Post('/ascii')
    @Idempotent(Kept, { by: () => 'one' })
    @Returns(Status(201, Object))
    ascii() {
      runs++;
      return { sku: 'abc-123', qty: 3 };
    }

    @Post('/utf8')
    @Idempotent(Kept, { by: () => 'one' })
    @Returns(Object)
    utf8() {
      runs++;
      return { name: 'café – ü 日本 😀' };
    }

    @Post('/bytes')
    @Idempotent(Kept, { by: () => 'one' })
    @Returns(Bytes)
    bytes() {
      runs++;
      return new Bytes(ALL_BYTES);
    }
  }
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = new App({ log: () => {} })
      .controllers(WireController)
      .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })));
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  const post = async (path: string, key: string) => {
    const r = await fetch(url + path, {
      method: 'POST',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    return {
      status: r.status,
      type: r.headers.get('content-type'),
      replayed: r.headers.get('idempotent-replayed'),
      bytes: Buffer.from(await r.arrayBuffer()),
    };
  };

  it.each(['/ascii', '/utf8', '/bytes'])(
    "IDEM-07 %s: replays carry the first answer's bytes exactly (ASCII, UTF-8 and binary bodies)",
    async (path) => {
      const before = runs;
      const first = await post(path, `wire-${path}`);
      const replays = [await post(path, `wire-${path}`), await post(path, `wire-${path}`)];
      expect(runs).toBe(before + 1);
      if (path === '/bytes') expect(first.bytes.equals(ALL_BYTES)).toBe(true);
      if (path === '/utf8')
        expect(JSON.parse(first.bytes.toString('utf8'))).toEqual({ name: 'café – ü 日本 😀' });
      for (const r of replays) {
        expect(r.replayed).toBe('true');
        expect(r.status).toBe(first.status);
        expect(r.type).toBe(first.type);
        expect(r.bytes.equals(first.bytes)).toBe(true);
      }
    },
  );
});

describe('idempotency without a store', () => {
  it('IDEM-32 the decorated handler stays a plain method a unit test can call', () => {
    const { IdemController, counts } = controller();
    const ctrl = new IdemController();
    const r = ctrl.create(
      Object.assign(new NewOrder(), { sku: 'a', qty: 1 }),
      new Account('alice'),
    );
    expect(r.status).toBe(201);
    expect(counts.create).toBe(1);
  });

  it("IDEM-03 a program's own store with the contract can replace ours", async () => {
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
    const app = new App({ log: () => {} })
      .controllers(IdemController)
      .provide(Orders.open(own))
      .provide(Small.open(own));
    const key = 'own-' + Date.now();
    await app.inject({
      method: 'POST',
      url: '/anon',
      headers: { 'idempotency-key': key },
      body: { sku: 's', qty: 1 },
    });
    const again = await app.inject({
      method: 'POST',
      url: '/anon',
      headers: { 'idempotency-key': key },
      body: { sku: 's', qty: 1 },
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(calls).toEqual(['get', 'putIfAbsent', 'put', 'get']);
  });

  it('the store failing fails closed: 503, no handler run, no hang', async () => {
    const redis = await startRedis();
    const store = new RedisStore({ url: redis.url, commandTimeoutMs: 300 });
    const { IdemController, counts } = controller();
    const app = new App({ log: () => {} })
      .controllers(IdemController)
      .provide(Orders.open(store))
      .provide(Small.open(store));
    await redis.stop();
    const started = Date.now();
    const res = await app.inject({
      method: 'POST',
      url: '/anon',
      headers: { 'idempotency-key': 'down' },
      body: { sku: 's', qty: 1 },
    });
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'idempotency store unavailable', status: 503 });
    expect(counts.anon).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    await store.close();
  });

  it('an in-process store that fails (closed MemoryStore, read through peek) fails closed too: 503, no handler run', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const { IdemController, counts } = controller();
    const app = new App({ log: () => {} })
      .controllers(IdemController)
      .provide(Orders.open(store))
      .provide(Small.open(store));
    await store.close();
    const res = await app.inject({
      method: 'POST',
      url: '/anon',
      headers: { 'idempotency-key': 'closed' },
      body: { sku: 's', qty: 1 },
    });
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'idempotency store unavailable', status: 503 });
    expect(counts.anon).toBe(0);
  });

  it('the claim lease is far shorter than a record TTL: 30 s unless the space sets leaseMs', () => {
    expect(CLAIM_LEASE_MS).toBe(30_000);
    expect(Orders.leaseMs).toBe(30_000);
    expect(Space('l', { ttlSeconds: 60, maxBytes: 1, leaseMs: 5000 }).leaseMs).toBe(5000);
    for (const leaseMs of [0, -1, Number.NaN])
      expect(() => Space('l', { ttlSeconds: 60, maxBytes: 1, leaseMs })).toThrow(
        /Space "l": leaseMs/,
      );
    expect(() => Space('l', { ttlSeconds: 60, maxBytes: 1, maxBytesPerCaller: 0 })).toThrow(
      /maxBytesPerCaller/,
    );
    // Not declared: derived from the store it is opened on; on a store of no known size, as before.
    expect(Space('l', { ttlSeconds: 60, maxBytes: 64 * 1024 }).maxBytesPerCaller).toBeNull();
    const own = new MemoryStore({ bytes: 1024 });
    const unsized: Store = {
      get: (k) => own.get(k),
      putIfAbsent: (k, v, t) => own.putIfAbsent(k, v, t),
      put: (k, v, t, o) => own.put(k, v, t, o),
      del: (k, o) => own.del(k, o),
      close: () => own.close(),
    };
    const sized = (maxBytes: number) => Space('l', { ttlSeconds: 60, maxBytes }).open(unsized);
    expect(sized(64 * 1024).maxBytesPerCaller).toBe(16 * 1024 * 1024);
    expect(sized(1024 * 1024).maxBytesPerCaller).toBe(64 * 1024 * 1024);
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
      return null as never;
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
      new App()
        .controllers(Refused)
        .provide(Orders.open(new MemoryStore({ bytes: 1024 })))
        .build();
    } catch (e) {
      return (e as { problems: string[] }).problems;
    }
    return [];
  })();

  it('REF-10 @Idempotent on a route that answers through the Ctx is refused naming the route', () => {
    expect(
      problems.some((p) =>
        p.startsWith('POST /r/ctx (Refused.viaCtx): @Idempotent route answers through the Ctx'),
      ),
    ).toBe(true);
  });
  it('REF-11 @Idempotent on a FileBody is refused naming the route', () => {
    expect(problems).toContain(
      'GET /r/file (Refused.file): @Idempotent cannot keep a FileBody answer',
    );
  });
  it('REF-12 @Idempotent on a Redirect is refused naming the route', () => {
    expect(problems).toContain(
      'POST /r/redirect (Refused.redirect): @Idempotent cannot keep a Redirect answer',
    );
  });
  it('REF-32 @Idempotent without by on a route with an Authorization or a resolved caller is refused', () => {
    expect(
      problems.filter((p) => p.includes('@Idempotent without by')).map((p) => p.split(':')[0]),
    ).toEqual(['POST /r/auth (Refused.auth)', 'POST /r/resolved (Refused.resolved)']);
  });
  it('a space that is not provided is refused naming it (OPEN-60)', () => {
    expect(problems).toContain(
      'GET /r/unprovided (Refused.unprovided): @Idempotent space "small" is not provided: app.provide(small.open(store))',
    );
  });
});

// ---- The promise is never twice

const listenOn = async (app: App) => (await app.listen({ port: 0 })).port;

/** A POST over its own connection: status, the raw head lines and the body. */
function postRaw(
  port: number,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; head: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const head: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            head.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
          resolve({
            status: res.statusCode ?? 0,
            head,
            body: Buffer.concat(chunks).toString('latin1'),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(stores)('never twice on %s', (storeName, makeStore) => {
  let store: Store;
  let stop: () => Promise<void>;
  beforeAll(async () => ({ store, stop } = await makeStore()));
  afterAll(() => stop());

  it('IDEM-26 IDEM-19 the claim lease is renewed while the handler runs: a duplicate sent after the first lease would have lapsed is 409, the handler runs once', async () => {
    // Margins a busy machine keeps: a 300 ms lease, the duplicate at twice it, the handler at three times.
    const Leased = Space('leased', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });
    let runs = 0;
    @Controller()
    class Long {
      @Post('/long')
      @Idempotent(Leased, { by: () => 'one' })
      @Returns(Object)
      async long() {
        runs++;
        await new Promise((r) => setTimeout(r, 900));
        return { ran: runs };
      }
    }
    // The store as the route sees it, noting each claim's lease and each renewal (a compare-and-set of the claim onto itself).
    const leases: string[] = [];
    const seen: Store = {
      get: (k) => store.get(k),
      putIfAbsent: (k, v, t) => (leases.push(`claim ${t}`), store.putIfAbsent(k, v, t)),
      put: (k, v, t, o) => (
        o?.expect?.equals(v) && leases.push(`renew ${t}`),
        store.put(k, v, t, o)
      ),
      del: (k, o) => store.del(k, o),
      close: async () => {},
    };
    const app = new App({ log: () => {} }).controllers(Long).provide(Leased.open(seen));
    // The duplicate goes to another instance on the same store: this one would refuse it from the
    // keys it holds whatever the store says; only the renewed claim stops the other.
    const rival = new App({ log: () => {} }).controllers(Long).provide(Leased.open(seen));
    const key = `lease-${storeName}-${Date.now()}`;
    const first = app.inject({ method: 'POST', url: '/long', headers: { 'idempotency-key': key } });
    await new Promise((r) => setTimeout(r, 600)); // twice the lease
    const dup = await rival.inject({
      method: 'POST',
      url: '/long',
      headers: { 'idempotency-key': key },
    });
    expect(dup.status).toBe(409);
    expect((await first).status).toBe(200);
    const replay = await app.inject({
      method: 'POST',
      url: '/long',
      headers: { 'idempotency-key': key },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(runs).toBe(1);
    expect(leases[0]).toBe('claim 300');
    expect(leases.filter((l) => l === 'renew 300').length).toBeGreaterThanOrEqual(2);
  });

  it('IDEM-30 CACHE-06 a stampede of identical first requests over real sockets runs the handler exactly once; the rest are 409 or the replay', async () => {
    const Stampede = Space('stampede', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    @Controller()
    class Race {
      @Post('/race')
      @Idempotent(Stampede, { by: () => 'one' })
      @Returns(Status(201, Object))
      async race() {
        runs++;
        await new Promise((r) => setTimeout(r, 20));
        return { ran: runs };
      }
    }
    const app = new App({ log: () => {} }).controllers(Race).provide(Stampede.open(store));
    const port = await listenOn(app);
    try {
      const key = `race-${storeName}-${Date.now()}`;
      const all = await Promise.all(
        Array.from({ length: 40 }, () =>
          postRaw(port, '/race', { 'idempotency-key': key }, '{"a":1}'),
        ),
      );
      expect(runs).toBe(1);
      const firsts = all.filter(
        (r) =>
          r.status === 201 &&
          !r.head.some((h) => h.toLowerCase().startsWith('idempotent-replayed')),
      );
      expect(firsts).toHaveLength(1);
      for (const r of all) {
        expect([201, 409]).toContain(r.status);
        if (r.status === 201) expect(r.body).toBe(firsts[0].body);
      }
    } finally {
      await app.close();
    }
  });

  it('IDEM-26 a keep that fails after the handler ran: the retry within the lease is 503 and never runs the handler; an error line names the route and key', async () => {
    const lines: string[] = [];
    const Fragile = Space('fragile', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    let lose: () => Promise<void> = async () => {};
    @Controller()
    class Keep {
      @Post('/keep')
      @Idempotent(Fragile, { by: () => 'one' })
      @Returns(Object)
      async keep() {
        runs++;
        await lose(); // the store goes down (and loses the claim) between the handler and the keep
        return { ran: runs };
      }
    }
    // On Redis: a real redis-server halted while the handler runs, restarted empty before the retry.
    // In memory: a store over MemoryStore whose keep fails and whose entries are lost with it.
    let ownStop = async () => {};
    let target: Store;
    let restore: () => Promise<void>;
    if (storeName === 'RedisStore') {
      const redis = await startRedis();
      const rs = new RedisStore({ url: redis.url, commandTimeoutMs: 300 });
      target = rs;
      lose = async () => redis.halt();
      restore = async () => {
        await redis.restart();
        for (
          let i = 0;
          i < 50 &&
          !(await rs.get('probe').then(
            () => true,
            () => false,
          ));
          i++
        )
          await new Promise((r) => setTimeout(r, 100));
      };
      ownStop = async () => (await rs.close(), await redis.stop());
    } else {
      let inner = new MemoryStore({ bytes: 1 << 20 });
      let down = false;
      target = {
        get: (k) => inner.get(k),
        putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
        put: (k, v, t, o) =>
          down ? Promise.reject(new Error('store down')) : inner.put(k, v, t, o),
        del: (k, o) => (down ? Promise.reject(new Error('store down')) : inner.del(k, o)),
        close: () => inner.close(),
      };
      lose = async () => {
        down = true;
      };
      restore = async () => {
        inner = new MemoryStore({ bytes: 1 << 20 }); // what it held is gone
        down = false;
      };
    }
    try {
      const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
        .controllers(Keep)
        .provide(Fragile.open(target));
      const key = `keep-${storeName}-${Date.now()}`;
      const first = await app.inject({
        method: 'POST',
        url: '/keep',
        headers: { 'idempotency-key': key },
      });
      expect(first.status).toBe(200);
      lose = async () => {};
      await restore();
      const retry = await app.inject({
        method: 'POST',
        url: '/keep',
        headers: { 'idempotency-key': key },
      });
      expect(retry.status).toBe(503);
      expect(retry.headers['retry-after']).toBeDefined();
      expect(runs).toBe(1);
      await flush();
      expect(
        lines.some((l) => l.startsWith('error: POST /keep (Keep.keep)') && l.includes(key)),
      ).toBe(true);
    } finally {
      await ownStop();
    }
  });
});

describe('eviction, key bytes, headers kept, health', () => {
  it('IDEM-26 IDEM-25 another caller filling the store cannot evict a kept answer or an in-flight claim: the retry replays, the duplicate is 409', async () => {
    const Shop = Space('shop', { ttlSeconds: 60, maxBytes: 4096, maxBytesPerCaller: 256 * 1024 });
    const counts: Record<string, number> = {};
    let release: () => void = () => {};
    @Controller()
    class Flood {
      @Post('/orders')
      @Idempotent(Shop, { by: (c) => c.resolve(Account).id })
      @Returns(Status(201, Object))
      async create(account: Account) {
        counts[account.id] = (counts[account.id] ?? 0) + 1;
        if (account.id === 'slow') await new Promise<void>((r) => (release = r));
        return { who: account.id, pad: 'x'.repeat(1000) };
      }
    }
    const store = new MemoryStore({ bytes: 128 * 1024 });
    const app = new App({ log: () => {} }).controllers(Flood).provide(Shop.open(store));
    const send = (who: string, key: string) =>
      app.inject({ method: 'POST', url: '/orders', headers: bearer(who, key) });
    expect((await send('alice', 'a-1')).status).toBe(201);
    const inFlight = send('slow', 's-1');
    await flush();
    const statuses = new Set<number>();
    for (let i = 0; i < 400; i++) statuses.add((await send('mallory', `m-${i}`)).status);
    expect(statuses.has(201)).toBe(true);
    expect([...statuses].every((s) => s === 201 || s === 503 || s === 429)).toBe(true);
    const retry = await send('alice', 'a-1');
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    const dup = await send('slow', 's-1');
    expect(dup.status).toBe(409);
    release();
    expect((await inFlight).status).toBe(201);
    expect(counts.alice).toBe(1);
    expect(counts.slow).toBe(1);
  });

  it('IDEM-10 LIMITS-01 the key is counted in bytes as they arrived: 255 pass, 256 are 400, a non-ASCII key of 130 bytes passes', async () => {
    const Keys = Space('keys', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    @Controller()
    class K {
      @Post('/k')
      @Idempotent(Keys, { by: () => 'one' })
      @Returns(Object)
      k() {
        return { n: ++runs };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(K)
      .provide(Keys.open(new MemoryStore({ bytes: 1 << 20 })));
    const port = await listenOn(app);
    try {
      // Node's client writes a string header as latin1: each char is one byte on the wire.
      const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
      const nonAscii = utf8('é'.repeat(65));
      expect(Buffer.byteLength(nonAscii, 'latin1')).toBe(130);
      expect((await postRaw(port, '/k', { 'idempotency-key': nonAscii })).status).toBe(200);
      const edge = utf8('é'.repeat(127)) + 'a'; // 255 bytes, non-ASCII
      expect((await postRaw(port, '/k', { 'idempotency-key': edge })).status).toBe(200);
      expect((await postRaw(port, '/k', { 'idempotency-key': 'k'.repeat(255) })).status).toBe(200);
      const over = await postRaw(port, '/k', { 'idempotency-key': 'k'.repeat(256) });
      expect(over.status).toBe(400);
      expect((await postRaw(port, '/k', { 'idempotency-key': edge + 'a' })).status).toBe(400);
      expect(runs).toBe(3);
    } finally {
      await app.close();
    }
  });

  it('IDEM-07 IDEM-04 headers set through the Ctx (setHeader, setCookie, a Session write) are kept: the replay is the first answer byte for byte', async () => {
    const Hdr = Space('hdr', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    @Controller()
    class H {
      @Post('/h')
      @Idempotent(Hdr, { by: () => 'one' })
      @Returns(Status(201, Object))
      h(c: Ctx, session: Session) {
        runs++;
        c.setHeader('X-Trace', 'abc');
        c.setCookie('theme', 'dark');
        session.set('cart', 3);
        return { n: runs };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(H)
      .provide(Hdr.open(new MemoryStore({ bytes: 1 << 20 })))
      .sessions({ sessionSecret: 's'.repeat(40) });
    const port = await listenOn(app);
    try {
      const first = await postRaw(port, '/h', { 'idempotency-key': 'hdr-1' });
      const replay = await postRaw(port, '/h', { 'idempotency-key': 'hdr-1' });
      expect(runs).toBe(1);
      const strip = (head: string[]) =>
        head.filter((h) => !/^(date|idempotent-replayed):/i.test(h));
      expect(replay.head.map((h) => h.toLowerCase())).toContain('idempotent-replayed: true');
      expect(first.head.filter((h) => /^set-cookie:/i.test(h))).toHaveLength(2);
      expect(strip(replay.head)).toEqual(strip(first.head));
      expect(replay.body).toBe(first.body);
      expect(replay.status).toBe(first.status);
    } finally {
      await app.close();
    }
  });

  it('HEALTH-02 health reports the idempotency store: 503 naming the space while redis-server is stopped, 200 when it is up', async () => {
    const redis = await startRedis();
    const store = new RedisStore({ url: redis.url, commandTimeoutMs: 300 });
    const Healthy = Space('healthy', { ttlSeconds: 60, maxBytes: 1024 });
    const app = new App({ log: () => {} })
      .provide(Healthy.open(store))
      .health({ path: '/healthz', cacheMs: 0 } as never);
    try {
      expect((await app.inject({ method: 'GET', url: '/healthz' })).status).toBe(200);
      await redis.halt();
      const down = await app.inject({ method: 'GET', url: '/healthz' });
      expect(down.status).toBe(503);
      expect(down.body).toContain('healthy');
      await redis.restart();
      let up = 0;
      for (let i = 0; i < 50 && up !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        up = (await app.inject({ method: 'GET', url: '/healthz' })).status;
      }
      expect(up).toBe(200);
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});

describe('the per-caller bound (maxBytesPerCaller)', () => {
  it("the per-caller bound: a claim that fits the caller's bound exactly is admitted; one byte more is refused with the wait until its oldest record lapses", () => {
    const budget = new CallerBudget(1000);
    const now = performance.now();
    expect(budget.admit('a', 'k1', 600, now + 60_000)).toBe(0);
    expect(budget.admit('a', 'k2', 400, now + 60_000)).toBe(0); // exactly 1000
    expect(budget.used('a')).toBe(1000);
    const wait = budget.admit('a', 'k3', 1, now + 60_000);
    expect(wait).toBeGreaterThan(59_000);
    expect(budget.admit('b', 'k1', 1000, now + 60_000)).toBe(0); // another caller is not touched
    budget.drop('a', 'k2');
    expect(budget.admit('a', 'k3', 400, now + 60_000)).toBe(0);
    budget.set('a', 'k3', 100, now + 60_000); // the kept answer replaces what its claim counted
    expect(budget.used('a')).toBe(700);
  });

  it("a record that lapsed leaves the caller's count", async () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('a', 'k1', 100, performance.now() + 30)).toBe(0);
    expect(budget.admit('a', 'k2', 1, performance.now() + 30)).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.admit('a', 'k2', 100, performance.now() + 30)).toBe(0);
    expect(budget.used('a')).toBe(100);
  });

  it('IDEM-05 a caller past maxBytesPerCaller gets 429 with Retry-After and its handler does not run; another caller is served', async () => {
    const Capped = Space('capped', { ttlSeconds: 60, maxBytes: 4096, maxBytesPerCaller: 8 * 1024 });
    const counts: Record<string, number> = {};
    @Controller()
    class Capper {
      @Post('/c')
      @Idempotent(Capped, { by: (c) => c.resolve(Account).id })
      @Returns(Status(201, Object))
      create(account: Account) {
        counts[account.id] = (counts[account.id] ?? 0) + 1;
        return { pad: 'x'.repeat(1000) };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(Capper)
      .provide(Capped.open(new MemoryStore({ bytes: 1 << 20 })));
    const send = (who: string, key: string) =>
      app.inject({ method: 'POST', url: '/c', headers: bearer(who, key) });
    let refused: Awaited<ReturnType<typeof send>> | null = null;
    for (let i = 0; i < 20 && refused === null; i++) {
      const r = await send('mallory', `m-${i}`);
      if (r.status !== 201) refused = r;
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(50);
    const served = counts.mallory;
    expect(served).toBeGreaterThanOrEqual(6);
    expect(served).toBeLessThanOrEqual(8);
    expect((await send('mallory', 'm-0')).headers['idempotent-replayed']).toBe('true'); // its kept answers still replay
    expect((await send('alice', 'a-0')).status).toBe(201);
    expect(counts.mallory).toBe(served);
  });

  it('a route with no by has one caller and no per-caller bound: only the store bounds it', async () => {
    const Single = Space('single', { ttlSeconds: 60, maxBytes: 4096, maxBytesPerCaller: 8 * 1024 });
    let runs = 0;
    @Controller()
    class OneCaller {
      @Post('/s')
      @Idempotent(Single)
      @Returns(Status(201, Object))
      create() {
        runs++;
        return { pad: 'x'.repeat(1000) };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(OneCaller)
      .provide(Single.open(new MemoryStore({ bytes: 1 << 20 })));
    for (let i = 0; i < 20; i++)
      expect(
        (await app.inject({ method: 'POST', url: '/s', headers: { 'idempotency-key': `k-${i}` } }))
          .status,
      ).toBe(201);
    expect(runs).toBe(20); // 20 kept answers of about 1 KiB: past the 8 KiB a caller of a by route may hold
  });
});

// Found by mutation testing (npm run mutate): the bookkeeping under the per-caller bound and the decoded kept answers.
describe('the per-caller count and the kept answers, exactly', () => {
  it('a claim admitted again for the same record counts once, at its new size; dropping it gives back what it counts now', () => {
    const budget = new CallerBudget(1000);
    const until = performance.now() + 60_000;
    expect(budget.admit('a', 'k1', 600, until)).toBe(0);
    expect(budget.admit('a', 'k2', 400, until)).toBe(0);
    expect(budget.admit('a', 'k1', 600, until)).toBe(0); // the same record: still 1000
    expect(budget.admit('a', 'k1', 100, until)).toBe(0);
    expect(budget.used('a')).toBe(500);
    budget.drop('a', 'k1');
    expect(budget.used('a')).toBe(400);
    budget.set('b', 'k9', 250, until); // a record the caller had no claim for
    expect(budget.used('b')).toBe(250);
  });

  it("a refused claim waits until the caller's oldest record lapses, no longer", () => {
    const budget = new CallerBudget(100);
    const now = performance.now();
    expect(budget.admit('a', 'k1', 100, now + 5000)).toBe(0);
    const wait = budget.admit('a', 'k2', 1, now + 60_000);
    expect(wait).toBeGreaterThan(4000);
    expect(wait).toBeLessThanOrEqual(5000);
  });

  it("a lapsed record leaves the count while the caller's live records stay counted", async () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('a', 'short', 50, performance.now() + 30)).toBe(0);
    expect(budget.admit('a', 'long', 10, performance.now() + 60_000)).toBe(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.admit('a', 'next', 40, performance.now() + 60_000)).toBe(0);
    expect(budget.used('a')).toBe(50);
  });

  it('callers who never come back are swept one a call, round the table', async () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('a', 'k', 10, performance.now() + 60_000)).toBe(0);
    expect(budget.admit('z', 'k', 10, performance.now() + 30)).toBe(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.used('z')).toBe(10); // not looked at yet
    budget.admit('a', 'k2', 1, performance.now() + 60_000);
    budget.admit('a', 'k3', 1, performance.now() + 60_000); // a's calls went round to z, whose record lapsed
    expect(budget.used('z')).toBe(0);
    expect(budget.used('a')).toBe(12);
  });

  const answer = (fp: string): KeptAnswer => ({
    fp,
    status: 201,
    type: 'application/json',
    body: '{}',
    own: [],
  });
  const parts = (body: string | Buffer) => ({
    method: 'POST',
    path: '/orders',
    rawQuery: '',
    body: Buffer.from(body),
  });

  it('a record of exactly MAX_ENTRY_BYTES is remembered, and a request that brings the entry to exactly that is learned', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const decode = (b: Buffer) => (decoded++, answer(String(b.length)));
    const max = Buffer.alloc(KeptAnswers.MAX_ENTRY_BYTES, 0x61);
    answers.find('max', max, decode);
    answers.find('max', Buffer.from(max), decode);
    expect(decoded).toBe(1);
    const entry = answers.find('id', Buffer.from('rec'), decode)!;
    const fits = 'x'.repeat(KeptAnswers.MAX_ENTRY_BYTES - 3);
    KeptAnswers.learn(entry, parts(fits));
    expect(KeptAnswers.known(entry, parts(fits))).toBe(true);
  });

  it('a record replaced under its id is forgotten: the store giving the old Buffer again is decoded anew', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const decode = (b: Buffer) => (decoded++, answer(b.toString()));
    const rec1 = Buffer.from('rec-1');
    const first = answers.find('id', rec1, decode);
    answers.find('id', Buffer.from('rec-2'), decode);
    const again = answers.find('id', rec1, decode);
    expect(decoded).toBe(3);
    expect(again).not.toBe(first);
    expect(again!.answer.fp).toBe('rec-1');
  });
});

describe('the first POST on an in-process store', () => {
  const Now = Space('now', { ttlSeconds: 60, maxBytes: 4096 });
  @Controller()
  class NowController {
    @Post('/now')
    @Idempotent(Now)
    @Returns(Status(201, NewOrder))
    now(@Body() o: NewOrder) {
      return o;
    }
  }
  const send = (app: App, key: string, qty = 1) =>
    app.inject({
      method: 'POST',
      url: '/now',
      headers: { 'idempotency-key': key },
      body: { sku: 'a', qty },
    });

  it('IDEM-01 a synchronous handler on a MemoryStore is answered without waiting for the store: claim, run and keep before inject() returns', async () => {
    const app = new App({ log: () => {} })
      .controllers(NowController)
      .provide(Now.open(new MemoryStore({ bytes: 1 << 20 })));
    app.build();
    let first: { status: number; body: string } | null = null;
    void send(app, 'k1').then((r) => (first = r));
    await null; // one turn of the promise queue: enough only for an answer already written
    expect(first).toMatchObject({ status: 201, body: '{"sku":"a","qty":1}' });
    const again = await send(app, 'k1');
    expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([
      201,
      first!.body,
      'true',
    ]);
    expect((await send(app, 'k1', 2)).status).toBe(422);
  });

  it('a store extending MemoryStore with its own operations is still asked for each of them', async () => {
    const calls: string[] = [];
    class Watched extends MemoryStore {
      override putIfAbsent(k: string, v: Buffer, ttl: number) {
        calls.push('putIfAbsent');
        return super.putIfAbsent(k, v, ttl);
      }
      override put(k: string, v: Buffer, ttl: number, o?: { expect?: Buffer }) {
        calls.push('put');
        return super.put(k, v, ttl, o);
      }
    }
    const app = new App({ log: () => {} })
      .controllers(NowController)
      .provide(Now.open(new Watched({ bytes: 1 << 20 })));
    expect((await send(app, 'w1')).status).toBe(201);
    expect(calls).toEqual(['putIfAbsent', 'put']);
    expect((await send(app, 'w1')).headers['idempotent-replayed']).toBe('true');
  });

  it('every claim is its own: no two claims carry the same owner, in one app or two on one store', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const claims: string[] = [];
    const seen: Store = {
      get: (k) => store.get(k),
      putIfAbsent: (k, v, t) => (
        claims.push(JSON.parse(v.toString('utf8', 4)).owner),
        store.putIfAbsent(k, v, t)
      ),
      put: (k, v, t, o) => store.put(k, v, t, o),
      del: (k, o) => store.del(k, o),
      close: () => store.close(),
    };
    const a = new App({ log: () => {} }).controllers(NowController).provide(Now.open(seen));
    const b = new App({ log: () => {} }).controllers(NowController).provide(Now.open(seen));
    for (let i = 0; i < 20; i++) await send(i % 2 ? a : b, `o${i}`);
    expect(claims).toHaveLength(20);
    expect(new Set(claims).size).toBe(20);
    for (const owner of claims) expect(owner).toMatch(/^[A-Za-z0-9_-]{16,}$/);
  });

  it('IDEM-26 claims of handlers in flight together are each renewed, the later one after the first is done; none once all are done', async () => {
    const Leased = Space('leased18', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 600 });
    const runs = new Map<string, number>();
    @Controller()
    class Long {
      @Post('/long/{ms}')
      @Idempotent(Leased)
      @Returns(Object)
      async long(@Param('ms') ms: string) {
        runs.set(ms, (runs.get(ms) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Number(ms)));
        return { ms };
      }
    }
    const store = new MemoryStore({ bytes: 1 << 20 });
    let renewals = 0;
    const seen: Store = {
      get: (k) => store.get(k),
      putIfAbsent: (k, v, t) => store.putIfAbsent(k, v, t),
      put: (k, v, t, o) => (o?.expect?.equals(v) && renewals++, store.put(k, v, t, o)),
      del: (k, o) => store.del(k, o),
      close: async () => {},
    };
    const app = new App({ log: () => {} }).controllers(Long).provide(Leased.open(seen));
    // Another instance on the same store: only the renewed claim (not this one's held keys) stops it.
    const rival = new App({ log: () => {} }).controllers(Long).provide(Leased.open(seen));
    const post = (ms: number, to = app) =>
      to.inject({ method: 'POST', url: `/long/${ms}`, headers: { 'idempotency-key': `k${ms}` } });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Margins four jest workers on two cores keep: a 600 ms lease, renewed every 200 ms.
    const a = post(1000);
    await sleep(400);
    const b = post(2000); // claimed at 400 ms; its first lease would lapse at 1,000 ms, as a finishes
    await sleep(1400);
    expect((await post(2000, rival)).status).toBe(409); // at 1,800 ms: b's claim still held
    expect([(await a).status, (await b).status]).toEqual([200, 200]);
    expect([runs.get('1000'), runs.get('2000')]).toEqual([1, 1]);
    const after = renewals;
    expect(after).toBeGreaterThanOrEqual(4);
    await sleep(800); // more than a lease: nothing in flight, nothing renewed
    expect(renewals).toBe(after);
  });

  it('a memory store closed under a route answers 503 StoreUnavailable', async () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const app = new App({ log: () => {} }).controllers(NowController).provide(Now.open(store));
    expect((await send(app, 'u1')).status).toBe(201);
    await store.close();
    const down = await send(app, 'u2');
    expect(down.status).toBe(503);
    expect(down.json<{ error: string }>().error).toMatch(/idempotency store unavailable/);
  });
});

describe('the per-caller count kept in lists (claims by id, kept answers in lapse order)', () => {
  it('a claim released out of order leaves the records before and after it counted, and they lapse in order', async () => {
    const budget = new CallerBudget(100);
    const now = performance.now();
    expect(budget.admit('a', 'k1', 10, now + 30)).toBe(0);
    expect(budget.admit('a', 'k2', 20, now + 60_000)).toBe(0);
    expect(budget.admit('a', 'k3', 30, now + 60_000)).toBe(0);
    budget.set('a', 'k3', 40, now + 60_000); // k3 kept: its claim is no longer at hand for k2
    budget.drop('a', 'k2'); // the middle one, looked up by id
    expect(budget.used('a')).toBe(50);
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.admit('a', 'k4', 60, performance.now() + 60_000)).toBe(0); // k1 lapsed: 40 + 60
    expect(budget.used('a')).toBe(100);
    const wait = budget.admit('a', 'k5', 1, performance.now() + 60_000);
    expect(wait).toBeGreaterThan(59_000); // the oldest live record is k3, kept for a minute
    budget.drop('a', 'k4'); // the newest
    expect(budget.admit('a', 'k5', 60, performance.now() + 60_000)).toBe(0);
    expect(budget.used('a')).toBe(100);
  });

  it('a kept answer is not released by a drop of its id: only a claim is', () => {
    const budget = new CallerBudget(100);
    const until = performance.now() + 60_000;
    expect(budget.admit('a', 'k1', 10, until)).toBe(0);
    budget.set('a', 'k1', 30, until);
    budget.drop('a', 'k1');
    expect(budget.used('a')).toBe(30);
  });

  it('the claim at hand is the one named: another caller with the same id, or another id, is looked up', () => {
    const budget = new CallerBudget(100);
    const until = performance.now() + 60_000;
    expect(budget.admit('a', 'k', 10, until)).toBe(0);
    expect(budget.admit('b', 'k', 20, until)).toBe(0); // b's claim is at hand
    budget.set('a', 'k', 15, until);
    budget.drop('b', 'x'); // no such claim: nothing changes
    expect(budget.used('a')).toBe(15);
    expect(budget.used('b')).toBe(20);
    budget.drop('b', 'k');
    expect(budget.used('b')).toBe(0);
    budget.set('b', 'k', 5, until); // its claim was released: counted anew
    expect(budget.used('b')).toBe(5);
  });

  it('a caller whose last claim is released leaves the table, and the sweep goes on round the others', async () => {
    const budget = new CallerBudget(100);
    expect(budget.admit('a', 'k', 10, performance.now() + 60_000)).toBe(0);
    expect(budget.admit('b', 'k', 10, performance.now() + 60_000)).toBe(0);
    expect(budget.admit('c', 'k', 10, performance.now() + 30)).toBe(0);
    expect(budget.admit('d', 'k', 10, performance.now() + 30)).toBe(0);
    budget.drop('b', 'k');
    budget.drop('a', 'k');
    await new Promise((r) => setTimeout(r, 50));
    expect(budget.used('c')).toBe(10);
    expect(budget.used('d')).toBe(10);
    for (let i = 0; i < 3; i++) budget.admit('e', `k${i}`, 1, performance.now() + 60_000);
    expect(budget.used('c')).toBe(0);
    expect(budget.used('d')).toBe(0);
    expect(budget.used('e')).toBe(3);
  });
});
