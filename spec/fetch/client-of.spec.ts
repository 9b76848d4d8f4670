import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { IsInt, IsString } from 'class-validator';
import {
  App,
  Controller,
  Ctx,
  Idempotent,
  Param,
  Post,
  Problem,
  Returns,
  Run,
  Status,
  fail,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import {
  Client,
  FetchError,
  Target,
  clientOf,
  type ClientDocument,
  type OpenTarget,
} from 'fw-http/fetch';
import type { ordersController } from '../../sample/shop/orders-controller';
import type { QuoteController } from '../../sample/shop/quote-controller';
import { start, type Started } from '../../sample/start';

// The typed client over real sockets, against the sample and against a small app whose
// idempotent route misbehaves on purpose (busy, slow), with a proxy that cuts an answer.

type OrdersController = InstanceType<ReturnType<typeof ordersController>>;
const run = new Run();

/**
 * A TCP proxy to `upstream` that, once armed, lets the next request whose first line starts with
 * `line` through and cuts both connections as the answer's first bytes come back: the server has
 * run the handler (and kept the answer) but the client never reads it.
 */
async function cuttingProxy(upstream: URL) {
  const seen: string[] = [];
  let armed: string | null = null;
  const server = net.createServer((down) => {
    const up = net.connect(Number(upstream.port), upstream.hostname);
    let cut = false;
    down.on('data', (chunk: Buffer) => {
      const first = chunk.toString('latin1').split('\r\n')[0];
      if (/^[A-Z]+ \//.test(first)) seen.push(first);
      if (armed !== null && first.startsWith(armed)) {
        armed = null;
        cut = true;
      }
      up.write(chunk);
    });
    up.on('data', (chunk: Buffer) => {
      if (cut) {
        down.destroy();
        up.destroy();
      } else down.write(chunk);
    });
    up.on('error', () => down.destroy());
    down.on('error', () => up.destroy());
    up.on('close', () => down.destroy());
    down.on('close', () => up.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    arm: (line: string) => (armed = line),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

async function documentOf(url: string): Promise<ClientDocument> {
  const res = await fetch(`${url}/openapi.json`);
  return (await res.json()) as ClientDocument;
}

describe('the typed client against the sample', () => {
  let sample: Started;
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
  let client: Client;
  let document: ClientDocument;
  const open = (base: string): OpenTarget =>
    Target('shop').open(client, { base, authorization: 'Bearer alice-token' });

  beforeAll(async () => {
    sample = await start({ PORT: '0' }, () => {});
    proxy = await cuttingProxy(new URL(sample.url));
    document = await documentOf(sample.url);
    client = new Client({ timeoutMs: 20_000 });
    client.start();
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await sample?.stop();
  });

  it('the document names each handler and where its arguments go (x-fw-handler)', () => {
    expect(document.paths['/orders']!.post!['x-fw-handler']).toEqual({
      controller: 'OrdersController',
      method: 'create',
      args: [{ in: 'body' }, null, null],
      idempotent: true,
      answers: [201],
    });
    expect(document.paths['/orders/{id}/cancel']!.post!['x-fw-handler']).toMatchObject({
      args: [{ in: 'path', name: 'id' }, null],
      answers: [200, 409],
    });
  });

  it('a @Query(schema) argument goes in the query (a merge once left it out of x-fw-handler)', async () => {
    expect(document.paths['/quote/{sku}']!.get!['x-fw-handler']).toMatchObject({
      args: [{ in: 'path', name: 'sku' }, { in: 'query' }, null],
    });
    const quotes = clientOf<QuoteController>(open(sample.url), {
      document,
      controller: 'QuoteController',
    });
    const r = await quotes.quote(run, 'abc', { qty: 3 });
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status}`);
    expect(r.value).toMatchObject({ sku: 'abc', qty: 3 });
  });

  it('places an order: 201 with the Order, its Location, and the key it was sent under', async () => {
    const orders = clientOf<OrdersController>(open(sample.url), {
      document,
      controller: 'OrdersController',
    });
    const r = await orders.create(run, { sku: 'i27-typed', qty: 2 });
    if (r.status !== 201) throw new Error(`expected 201, got ${r.status}`);
    expect(r.value).toMatchObject({ sku: 'i27-typed', qty: 2, account: 'alice', status: 'placed' });
    expect(r.response.header('location')).toBe(`/orders/${r.value.id}`);
    expect(r.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.attempts).toBe(1);
    const one = await orders.one(run, r.value.id);
    expect(one.status === 200 && one.value.id).toBe(r.value.id);
  });

  it('the connection cut after the handler ran: the retry carries the same key, gets the replay, and the order exists once', async () => {
    const orders = clientOf<OrdersController>(open(proxy.url), {
      document,
      controller: 'OrdersController',
    });
    const sku = `i27-cut-${process.pid}`;
    proxy.arm('POST /orders ');
    const r = await orders.create(run, { sku, qty: 1 });
    if (r.status !== 201) throw new Error(`expected 201, got ${r.status}`);
    expect(r.attempts).toBeGreaterThanOrEqual(2);
    expect(r.response.header('idempotent-replayed')).toBe('true');
    expect(proxy.seen.filter((l) => l.startsWith('POST /orders ')).length).toBe(r.attempts);
    const list = await orders.list(run, {});
    if (list.status !== 200) throw new Error(`expected 200, got ${list.status}`);
    expect(list.value.filter((o) => o.sku === sku).length).toBe(1);
  });

  it("a declared 409 is the route's own answer (typed, never retried); an unknown order is a failure", async () => {
    const orders = clientOf<OrdersController>(open(sample.url), {
      document,
      controller: 'OrdersController',
    });
    const placed = await orders.create(run, { sku: 'i27-cancel', qty: 1 });
    if (placed.status !== 201) throw new Error(`expected 201, got ${placed.status}`);
    expect((await orders.cancel(run, placed.value.id)).status).toBe(200);
    const again = await orders.cancel(run, placed.value.id);
    if (again.status !== 409) throw new Error(`expected 409, got ${again.status}`);
    expect(again.value).toEqual({ reason: 'already cancelled', orderId: placed.value.id });
    expect(again.attempts).toBe(1);
    const missing = await orders.one(run, 'no-such-order');
    expect(missing.status).toBe(404);
    expect(missing.failure).toMatchObject({ code: null, error: 'no order no-such-order' });
  });

  it('a call with more arguments than the route reads is refused before anything is sent', async () => {
    const orders = clientOf<OrdersController>(open(sample.url), {
      document,
      controller: 'OrdersController',
    });
    const call = orders.one as unknown as (...a: unknown[]) => Promise<unknown>;
    await expect(call(run, 'x', { id: 'alice' }, {})).rejects.toMatchObject({
      code: 'BadArguments',
    });
    await expect(call(run, 'x', { id: 'alice' })).rejects.toMatchObject({ code: 'BadArguments' });
    expect(() =>
      clientOf<OrdersController>(open(sample.url), { document, controller: 'Nope' }),
    ).toThrow(FetchError);
  });
});

class Made {
  @IsString() name!: string;
  @IsInt() run!: number;
}

/** An app whose idempotent POST /jobs/{name} is busy (503, Retry-After: 0) or slow (1.5 s) on its first run. */
function jobsApp(runs: Map<string, number>, keys: string[]) {
  const Jobs = Space('jobs', { ttlSeconds: 60, maxBytes: 4096 });
  @Controller('/jobs')
  class JobsController {
    @Post('/{name}')
    @Idempotent(Jobs)
    @Returns(Status(201, Made))
    async start(@Param('name') name: string, c: Ctx): Promise<Made> {
      return this.#run(name, c);
    }

    @Post('/plain/{name}')
    @Returns(Status(201, Made))
    async plain(@Param('name') name: string, c: Ctx): Promise<Made> {
      return this.#run(name, c);
    }

    async #run(name: string, c: Ctx): Promise<Made> {
      const n = (runs.get(name) ?? 0) + 1;
      runs.set(name, n);
      keys.push(`${name} ${c.header('idempotency-key') ?? '-'}`);
      if (name.startsWith('busy') && n === 1) {
        c.setHeader('retry-after', name.startsWith('busy-long') ? '5' : '0');
        throw fail.status(503, 'busy');
      }
      if (name.startsWith('slow') && n === 1) await sleep(1_500);
      if (name.startsWith('poor'))
        throw fail.unprocessable({ code: 'InsufficientFunds', message: 'balance too low' });
      return Object.assign(new Made(), { name, run: n });
    }
  }
  return {
    app: new App({ log: () => {} })
      .failures(Problem)
      .controllers(JobsController)
      .provide(Jobs.open(new MemoryStore({ bytes: 1 << 20 }))),
    JobsController,
  };
}

describe('the typed client of an idempotent route that misbehaves', () => {
  const runs = new Map<string, number>();
  const keys: string[] = [];
  const { app } = jobsApp(runs, keys);
  type Jobs = InstanceType<ReturnType<typeof jobsApp>['JobsController']>;
  let url: string;
  let client: Client;
  let jobs: ReturnType<typeof clientOf<Jobs>>;
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;

  beforeAll(async () => {
    ({ url } = await app.listen({ host: '127.0.0.1', port: 0 }));
    proxy = await cuttingProxy(new URL(url));
    client = new Client({ timeoutMs: 20_000 });
    client.start();
    jobs = clientOf<Jobs>(Target('jobs').open(client, { base: url }), {
      document: app.document(),
      controller: 'JobsController',
    });
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await app.close();
  });

  const keysOf = (name: string) => keys.filter((k) => k.startsWith(`${name} `));

  it('a 503 with Retry-After is retried under the same key', async () => {
    const r = await jobs.start(run, 'busy-1');
    if (r.status !== 201) throw new Error(`expected 201, got ${r.status}`);
    expect(r.value).toEqual({ name: 'busy-1', run: 2 });
    expect(r.attempts).toBe(2);
    expect(keysOf('busy-1')).toEqual([`busy-1 ${r.idempotencyKey}`, `busy-1 ${r.idempotencyKey}`]);
  });

  it('a retry whose Retry-After wait would end past the deadline is not made: the 503 is the result', async () => {
    const r = await jobs.start(run, 'busy-long', { timeoutMs: 2_000 });
    expect(r.status).toBe(503);
    expect(r.response.header('retry-after')).toBe('5');
    expect(r.attempts).toBe(1);
    expect(runs.get('busy-long')).toBe(1);
  });

  it("fw's failures are told apart by code (RFC 9457 problem bodies), and not retried", async () => {
    const r = await jobs.start(run, 'poor-1');
    expect(r.status).toBe(422);
    expect(r.failure).toMatchObject({ code: 'InsufficientFunds', error: 'balance too low' });
    expect(r.attempts).toBe(1);
    expect(runs.get('poor-1')).toBe(1);
  });

  it('a duplicate in flight gets 409 with Retry-After, waits, and is answered with the replay', async () => {
    const first = jobs.start(run, 'slow-dup', { idempotencyKey: 'dup-key' });
    await sleep(300);
    const second = await jobs.start(run, 'slow-dup', { idempotencyKey: 'dup-key' });
    const one = await first;
    expect(one.status === 201 && one.value).toEqual({ name: 'slow-dup', run: 1 });
    expect(second.status === 201 && second.value).toEqual({ name: 'slow-dup', run: 1 });
    expect(second.attempts).toBeGreaterThanOrEqual(2);
    expect(second.response.header('idempotent-replayed')).toBe('true');
    expect(runs.get('slow-dup')).toBe(1);
  });

  it('a try that times out is retried with the same key within the deadline, and the handler runs once', async () => {
    const r = await jobs.start(run, 'slow-timeout', { tryTimeoutMs: 500, timeoutMs: 15_000 });
    if (r.status !== 201)
      throw new Error(`expected 201, got ${r.status}: ${JSON.stringify(r.failure)}`);
    expect(r.value).toEqual({ name: 'slow-timeout', run: 1 });
    expect(r.attempts).toBeGreaterThanOrEqual(2);
    expect(new Set(keysOf('slow-timeout')).size).toBe(1);
    expect(runs.get('slow-timeout')).toBe(1);
  });

  it('a non-idempotent route is not retried when its connection is cut after the request went out', async () => {
    const plain = clientOf<Jobs>(Target('jobs').open(client, { base: proxy.url }), {
      document: app.document(),
      controller: 'JobsController',
    });
    proxy.arm('POST /jobs/plain/cut');
    await expect(plain.plain(run, 'cut')).rejects.toThrow();
    expect(runs.get('cut')).toBe(1);
    expect(proxy.seen.filter((l) => l.startsWith('POST /jobs/plain/cut')).length).toBe(1);
  });

  it('attempts: 1 never retries, even an idempotent route; 0 is refused before anything is sent', async () => {
    const r = await jobs.start(run, 'busy-2', { attempts: 1 });
    expect(r.status).toBe(503);
    expect(r.attempts).toBe(1);
    expect(runs.get('busy-2')).toBe(1);
    await expect(jobs.start(run, 'busy-3', { attempts: 0 })).rejects.toMatchObject({
      code: 'BadSettings',
    });
    expect(runs.get('busy-3')).toBeUndefined();
  });
});
