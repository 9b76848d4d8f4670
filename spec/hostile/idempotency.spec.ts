import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, RedisStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';
import { startRedis } from '../support/redis';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';
import { send } from '../support/post';

// An eviction flood: one caller fills the idempotency store through its own answers, over real
// sockets, to push out another caller's kept answer and in-flight claim. Bounded: 600 requests,
// 127.0.0.1 only.

class Account {
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Account {
    return new Account(c.header('authorization')?.replace(/^Bearer /, '') ?? 'nobody');
  }
}

async function post(
  port: number,
  who: string,
  key: string,
): Promise<{ status: number; replayed: boolean; body: string }> {
  const { status, headers, body } = await send(port, '/orders', {
    timeoutMs: 10_000,
    headers: { authorization: `Bearer ${who}`, 'idempotency-key': key, 'content-length': '0' },
  });
  return { status, replayed: headers['idempotent-replayed'] === 'true', body };
}

describe('hostile: idempotency eviction flood', () => {
  it("IDEM-26 IDEM-19 a flood of one caller over real sockets never evicts another caller's kept answer or claim; memory after GC stays bounded; the server answers", async () => {
    const budget = 512 * 1024;
    const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 8 * 1024 });
    const runs: Record<string, number> = {};
    let release: () => void = () => {};
    @Controller()
    class Shop {
      @Post('/orders')
      @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
      @Returns(Status(201, Object))
      async create(account: Account) {
        runs[account.id] = (runs[account.id] ?? 0) + 1;
        if (account.id === 'slow') await new Promise<void>((r) => (release = r));
        return { who: account.id, n: runs[account.id], pad: 'x'.repeat(4000) };
      }
      @Post('/ping')
      @Returns(Object)
      ping() {
        return { ok: true };
      }
    }
    const store = new MemoryStore({ bytes: budget });
    const app = new App({ log: () => {} }).controllers(Shop).provide(Orders.open(store));
    const { port } = await app.listen({ port: 0 });
    try {
      const fds = openDescriptors();
      const heap = await heapAfterGc();
      const alice = await post(port, 'alice', 'a-1');
      expect(alice.status).toBe(201);
      const slow = post(port, 'slow', 's-1');
      for (let i = 0; i < 50 && runs.slow === undefined; i++)
        await new Promise((r) => setTimeout(r, 10));
      // Many callers (a per-caller bound alone cannot stop them), ten connections at a time.
      const statuses = new Map<number, number>();
      for (let round = 0; round < 60; round++) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            post(port, `mallory-${round % 6}`, `m-${round}-${i}`),
          ),
        );
        for (const r of batch) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      expect(statuses.get(201)).toBeGreaterThan(0);
      expect([...statuses.keys()].every((s) => s === 201 || s === 503 || s === 429)).toBe(true);
      expect((statuses.get(503) ?? 0) + (statuses.get(429) ?? 0)).toBeGreaterThan(0); // the store filled: new claims refused, nothing evicted
      expect(store.bytesUsed).toBeLessThanOrEqual(budget);

      const retry = await post(port, 'alice', 'a-1');
      expect(retry).toEqual({ status: 201, replayed: true, body: alice.body });
      const dup = await post(port, 'slow', 's-1');
      expect(dup.status).toBe(409);
      release();
      expect((await slow).status).toBe(201);
      expect(runs.alice).toBe(1);
      expect(runs.slow).toBe(1);

      expect((await getOnce(port, '/nowhere')).status).toBe(404);
      expect(await settlesWithin(openDescriptors, fds + 2)).toBeLessThanOrEqual(fds + 2);
      // The store holds at most its budget (counted as it really costs); allow as much again for the rest.
      expect((await heapAfterGc()) - heap).toBeLessThan(2 * budget + 4 * 1024 * 1024);
    } finally {
      await app.close();
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `done` every 20 ms for up to `ms` (a loaded machine is slow, never wrong). */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await sleep(20);
}

describe('hostile: idempotency when the store or the client lets go', () => {
  it('Redis restarted empty while the handler runs: a retry in the same process is 409 (the key is held here), never a second run; after the run, 503 (sent, not kept)', async () => {
    const redis = await startRedis();
    const store = new RedisStore({ url: redis.url, commandTimeoutMs: 500 });
    const Lost = Space('lost', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 1_000 });
    const runs: string[] = [];
    const gates: (() => void)[] = [];
    const release = () => gates.splice(0).forEach((open) => open());
    @Controller()
    class Pay {
      @Post('/orders')
      @Idempotent(Lost, { by: () => 'one' })
      @Returns(Status(201, Object))
      async create() {
        const n = runs.length + 1;
        runs.push(`run:${n}`);
        await new Promise<void>((r) => gates.push(r));
        runs.push(`end:${n}`);
        return { n };
      }
    }
    const lines: string[] = [];
    const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
      .controllers(Pay)
      .provide(Lost.open(store));
    const { port } = await app.listen({ port: 0 });
    const post = () =>
      send(port, '/orders', {
        timeoutMs: 10_000,
        headers: { 'idempotency-key': 'pay-1', 'content-length': '0' },
      });
    try {
      const first = post();
      await until(() => runs.length === 1);
      await redis.restart(); // nothing on disk: the claim is gone
      for (
        let i = 0;
        i < 100 &&
        !(await store.ping().then(
          () => true,
          () => false,
        ));
        i++
      )
        await sleep(50);
      await sleep(1_500); // past the lease: a renewal has found the claim gone
      const during = await post();
      expect(during.status).toBe(409);
      expect(runs).toEqual(['run:1']);
      release();
      expect((await first).status).toBe(201);
      const after = await post();
      expect(after.status).toBe(503);
      expect(runs).toEqual(['run:1', 'end:1']);
      // The lease-loss line, once however many renewals came after it.
      const lost = lines.filter((l) => l.includes('was lost while the handler ran'));
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatch(/^error: POST \/orders \(Pay\.create\): claim on Idempotency-Key /);
      expect(lines.some((l) => l.includes('sent but not kept'))).toBe(true);
    } finally {
      release();
      await app.close();
      await store.close();
      await redis.stop();
    }
  });

  it('a client that gives up on a handler calling a slow upstream: the run finishes, the upstream is called once, the retry replays', async () => {
    let upstreamCalls = 0;
    // The upstream answers only once the test has seen the client give up and the handler start:
    // a fixed delay raced the client's 100 ms on a loaded machine.
    let answerUpstream = () => {};
    const upstreamMayAnswer = new Promise<void>((r) => (answerUpstream = r));
    const upstream: Server = createServer((_req, res) => {
      upstreamCalls++;
      void upstreamMayAnswer.then(() =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
      );
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const client = new Client();
    const payments = Target('payments').open(client, { base });
    const Charges = Space('charges', { ttlSeconds: 60, maxBytes: 4096 });
    let runs = 0;
    let ended = 0;
    @Controller()
    class Pay {
      @Post('/charges')
      @Idempotent(Charges, { by: () => 'one' })
      @Returns(Status(201, Object))
      async charge(c: Ctx) {
        runs++;
        const res = await payments.post(c, '/charge', {}, '');
        await c.sleep(10);
        ended++;
        return { upstream: res.status, runs };
      }
    }
    const app = new App({ log: () => {} })
      .controllers(Pay)
      .provide(client)
      .provide(Charges.open(new MemoryStore({ bytes: 1 << 20 })));
    const { port } = await app.listen({ port: 0 });
    const post = (timeoutMs: number) =>
      send(port, '/charges', {
        timeoutMs,
        headers: { 'idempotency-key': 'ch-1', 'content-length': '0' },
      });
    try {
      // The client gives up once the handler is waiting on the upstream (a fixed 100 ms raced the
      // handler's start on a loaded machine: gone before the run, there is no run to finish).
      const gone = connect(port, '127.0.0.1');
      gone.on('error', () => {});
      gone.write(
        'POST /charges HTTP/1.1\r\nhost: x\r\nidempotency-key: ch-1\r\ncontent-length: 0\r\n\r\n',
      );
      await until(() => upstreamCalls === 1);
      expect(runs).toBe(1);
      gone.destroy();
      await sleep(50);
      answerUpstream();
      await until(() => ended === 1);
      const retry = await post(10_000);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(JSON.parse(retry.body)).toEqual({ upstream: 200, runs: 1 });
      expect(upstreamCalls).toBe(1);
      expect(runs).toBe(1);
    } finally {
      answerUpstream();
      await app.close();
      await new Promise((r) => upstream.close(r));
    }
  });
});
