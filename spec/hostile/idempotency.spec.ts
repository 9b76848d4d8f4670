import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
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
