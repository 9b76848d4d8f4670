// The idempotency step's less travelled paths, each through a store that fails or answers in a
// given way on purpose: a store that claims and reads in one round trip (as RedisStore does),
// stores failing synchronously or with a rejection, a renewal the store cannot confirm, a claim
// that cannot be given back. The mutation run found these paths untested.
import { IsInt, IsString } from 'class-validator';
import {
  App,
  Body,
  Controller,
  Ctx,
  fail,
  Idempotent,
  Post,
  Reply,
  reply,
  Returns,
  Status,
} from 'fw-http';
import { MemoryStore, Space, type Store } from 'fw-http/cache';

class Line {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

type Op = 'get' | 'putIfAbsent' | 'put' | 'del' | 'putIfAbsentOrGet';
/** How an operation fails: thrown at once, or a promise that rejects. */
type Failure = 'throw' | 'reject';

/**
 * A MemoryStore behind the `Store` contract, with each operation failing on demand (`fail`), or
 * answering as `answer` says; `oneTrip` adds `putIfAbsentOrGet` (claim, or read what is there).
 */
class Faulty {
  readonly inner = new MemoryStore({ bytes: 1 << 20 });
  readonly fail = new Map<Op, Failure>();
  readonly answer = new Map<Op, () => unknown>();
  readonly calls: Op[] = [];
  readonly store: Store;

  constructor(oneTrip = false) {
    const inner = this.inner;
    const store: Store = {
      get: (k) => this.#do('get', () => inner.get(k)),
      putIfAbsent: (k, v, t) => this.#do('putIfAbsent', () => inner.putIfAbsent(k, v, t)),
      put: (k, v, t, o) => this.#do('put', () => inner.put(k, v, t, o)),
      del: (k, o) => this.#do('del', () => inner.del(k, o)),
      close: () => inner.close(),
    };
    if (oneTrip)
      store.putIfAbsentOrGet = (k, v, t) =>
        this.#do('putIfAbsentOrGet', () => (inner.putIfAbsent(k, v, t) ? null : inner.get(k)));
    this.store = store;
  }

  #do<T>(op: Op, run: () => T): T {
    this.calls.push(op);
    const failure = this.fail.get(op);
    if (failure === 'throw') throw new Error(`${op} failed (on purpose)`);
    if (failure === 'reject') return Promise.reject(new Error(`${op} failed (on purpose)`)) as T;
    const answer = this.answer.get(op);
    return answer === undefined ? run() : (answer() as T);
  }
}

const Orders = Space('step-paths', { ttlSeconds: 60, maxBytes: 4096, maxBytesPerCaller: 300 });

let runs = 0;
@Controller()
class Shop {
  @Post('/orders')
  @Idempotent(Orders, { by: (c) => c.header('x-caller') ?? null })
  @Returns(Status(201, Line))
  order(@Body() line: Line) {
    runs++;
    if (line.sku === 'boom') throw fail.conflict('out of stock');
    return line;
  }
}

/**
 * The messages of the lines an app logged (`log` receives pino-shaped JSON, batched): read after
 * the batch is out.
 */
function logged() {
  const lines: string[] = [];
  return {
    log: (l: string) => void lines.push(l),
    msgs: async (): Promise<string[]> => {
      await new Promise((r) => setTimeout(r, 20));
      return lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
    },
  };
}

function shop(faulty: Faulty) {
  const { log, msgs } = logged();
  const app = new App({ log }).controllers(Shop).provide(Orders.open(faulty.store));
  const send = (key: string, sku = 'a', caller = 'ann') =>
    app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'idempotency-key': key, 'x-caller': caller },
      body: { sku, qty: 1 },
    });
  return { app, msgs, send };
}

beforeEach(() => {
  runs = 0;
});

describe('a store that claims and reads in one round trip', () => {
  it('IDEM-07 claims with one call: the first request runs, the retry replays from what the claim call found', async () => {
    const f = new Faulty(true);
    const { send } = shop(f);
    expect((await send('k1')).status).toBe(201);
    const again = await send('k1');
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(runs).toBe(1);
    expect(f.calls).toEqual(['putIfAbsentOrGet', 'put', 'putIfAbsentOrGet']);
  });

  it('a caller over its share asks for the record first: a retry of a kept answer still replays, a new key is 429 with Retry-After', async () => {
    const f = new Faulty(true);
    const { send } = shop(f);
    expect((await send('k1')).status).toBe(201);
    expect((await send('k2')).status).toBe(201);
    // Two kept answers (about 175 bytes each) fill ann's 300 bytes: a third key is refused, a retry is not.
    const over = await send('k3');
    expect(over.status).toBe(429);
    expect(over.json()).toMatchObject({ error: expect.stringMatching(/already holds 300 bytes/) });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    f.calls.length = 0;
    const retry = await send('k1');
    expect([retry.status, retry.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(f.calls).toEqual(['get']);
    // Another caller has a share of its own.
    expect((await send('k3', 'a', 'bob')).status).toBe(201);
    expect(runs).toBe(3);
    // Over its share, the look-up failing is the store being down, not a new claim.
    f.fail.set('get', 'reject');
    expect((await send('k1')).status).toBe(503);
  });

  it('IDEM-21 the claim call failing at once or later is 503 store unavailable, the handler not run; the store answering again is logged', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const f = new Faulty(true);
      const { send, msgs } = shop(f);
      f.fail.set('putIfAbsentOrGet', failure);
      const down = await send('k1');
      expect([down.status, (down.json() as { error: string }).error]).toEqual([
        503,
        'idempotency store unavailable',
      ]);
      expect(runs).toBe(0);
      expect((await msgs()).filter((l) => /store answers again$/.test(l))).toEqual([]);
      f.fail.clear();
      // A new key claimed: the first sign the store is back.
      expect((await send('k2')).status).toBe(201);
      expect((await msgs()).filter((l) => /store answers again$/.test(l))).toHaveLength(1);
      runs = 0;
    }
  });

  it('the outage ends on a replay as well: a store back with the key already kept says so once', async () => {
    const f = new Faulty(true);
    const { send, msgs } = shop(f);
    expect((await send('k1')).status).toBe(201);
    f.fail.set('putIfAbsentOrGet', 'throw');
    expect((await send('k1')).status).toBe(503);
    f.fail.clear();
    const replay = await send('k1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await msgs()).filter((l) => /step-paths.*store answers again$/.test(l))).toHaveLength(
      1,
    );
  });
});

describe('a claim found taken', () => {
  it('IDEM-19 taken, then gone before it could be read: 409 with Retry-After, not run', async () => {
    const f = new Faulty();
    const { send } = shop(f);
    f.answer.set('putIfAbsent', () => false);
    const res = await send('k1');
    expect([res.status, res.headers['retry-after']]).toEqual([409, '1']);
    expect(runs).toBe(0);
    expect(f.calls).toEqual(['get', 'putIfAbsent', 'get']);
  });

  it('IDEM-21 taken, and the read after it fails at once or later: 503, not run', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const f = new Faulty();
      const { send } = shop(f);
      f.answer.set('putIfAbsent', () => {
        f.fail.set('get', failure);
        return false;
      });
      const res = await send('k1');
      expect([res.status, (res.json() as { error: string }).error]).toEqual([
        503,
        'idempotency store unavailable',
      ]);
      expect(runs).toBe(0);
    }
  });

  it('the claim written after an outage ends it: logged when the first claim goes through, before any replay', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const f = new Faulty();
      const { send, msgs } = shop(f);
      f.fail.set('get', failure);
      expect((await send('k1')).status).toBe(503);
      f.fail.clear();
      expect((await send('k2')).status).toBe(201);
      expect((await msgs()).filter((l) => /store answers again$/.test(l))).toHaveLength(1);
    }
  });
});

describe('a claim that cannot be given back', () => {
  it('IDEM-06 the handler fails and the store cannot delete the claim (at once or later): the failure is answered, and the log says the claim lapses with its lease', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const f = new Faulty();
      const { send, msgs } = shop(f);
      f.fail.set('del', failure);
      const res = await send('k1', 'boom');
      expect([res.status, (res.json() as { error: string }).error]).toEqual([409, 'out of stock']);
      expect(await msgs()).toContainEqual(
        `POST /orders (Shop.order): idempotency claim not released (store unavailable); it lapses in ${Math.ceil(Orders.leaseMs / 1000)} s`,
      );
    }
  });

  it('IDEM-06 a claim the store did delete is not logged', async () => {
    const f = new Faulty();
    const { send, msgs } = shop(f);
    expect((await send('k1', 'boom')).status).toBe(409);
    expect((await msgs()).filter((l) => /not released/.test(l))).toEqual([]);
    expect((await send('k1', 'boom')).status).toBe(409);
    expect(runs).toBe(2);
  });
});

describe('the claim renewed while the handler runs', () => {
  const Leased = Space('step-renew', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });

  function slowApp(faulty: Faulty, ms: number) {
    let aborted: unknown = null;
    @Controller()
    class Slow {
      @Post('/slow')
      @Idempotent(Leased)
      @Returns(Status(201, Object))
      async slow(c: Ctx) {
        await new Promise((r) => setTimeout(r, ms));
        aborted = c.signal.aborted ? c.signal.reason : null;
        return { ok: true };
      }
    }
    const { log, msgs } = logged();
    const app = new App({ log }).controllers(Slow).provide(Leased.open(faulty.store));
    const send = () =>
      app.inject({ method: 'POST', url: '/slow', headers: { 'idempotency-key': 'r1' } });
    return { send, msgs, aborted: () => aborted };
  }

  it('IDEM-26 a renewal that fails (at once or later) is logged as not renewed, and the run goes on within the lease', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const f = new Faulty();
      // Renewals every 100 ms of a 300 ms lease, the handler done at 150: one renewal, failed.
      // (The keep fails too: the answer is sent, not kept.)
      const { send, msgs, aborted } = slowApp(f, 150);
      f.fail.set('put', failure);
      const res = await send();
      expect(res.status).toBe(201);
      expect(aborted()).toBeNull();
      expect(await msgs()).toContainEqual(
        `warning: POST /slow (Slow.slow): claim on Idempotency-Key "r1" not renewed (store unavailable)`,
      );
      expect((await msgs()).filter((l) => /was lost/.test(l))).toEqual([]);
    }
  });

  it('IDEM-26 no renewal confirmed for a whole lease: the claim is lost, said once, and the handler signal aborted', async () => {
    const f = new Faulty();
    // No renewal confirmed at 100, 200 and 300 ms: lost at the third tick.
    const { send, msgs, aborted } = slowApp(f, 450);
    f.fail.set('put', 'reject');
    const res = await send();
    expect(res.status).toBe(201);
    expect(String(aborted())).toMatch(
      /claim on Idempotency-Key "r1" was lost while the handler ran/,
    );
    const lost = (await msgs()).filter((l) => /was lost/.test(l));
    expect(lost).toEqual([
      `error: POST /slow (Slow.slow): claim on Idempotency-Key "r1" was lost while the handler ran (stalled or cut off from the store past its lease of 300 ms): its signal is aborted, and another instance may run the request`,
    ]);
  });
});

describe('the caller named by an async resolver', () => {
  class Account {
    constructor(readonly id: string) {}
    static async resolve(c: Ctx): Promise<Account> {
      await new Promise((r) => setTimeout(r, 1));
      const token = c.header('authorization');
      if (token !== 'Bearer ann' && token !== 'Bearer bob')
        throw fail.challenge('bearer', 'unknown bearer token');
      return new Account(token.slice(7));
    }
  }
  const Accounts = Space('step-accounts', { ttlSeconds: 60, maxBytes: 4096 });
  let paid = 0;
  @Controller()
  class Payments {
    @Post('/pay')
    @Idempotent(Accounts, { by: (c) => c.resolve(Account).id })
    @Returns(Status(201, Object))
    pay(account: Account) {
      return { account: account.id, n: ++paid };
    }
  }

  it('IDEM-11 REF-32 the resolver is awaited before the key: 401 for no caller, each caller its own answers', async () => {
    const f = new Faulty();
    const app = new App({ log: () => {} }).controllers(Payments).provide(Accounts.open(f.store));
    const pay = (token: string) =>
      app.inject({
        method: 'POST',
        url: '/pay',
        headers: { 'idempotency-key': 'p1', authorization: token },
      });
    expect((await pay('Bearer eve')).status).toBe(401);
    expect(f.calls).toEqual([]);
    const ann = await pay('Bearer ann');
    expect([ann.status, ann.json()]).toEqual([201, { account: 'ann', n: 1 }]);
    const again = await pay('Bearer ann');
    expect([again.headers['idempotent-replayed'], again.body]).toEqual(['true', ann.body]);
    // The same key from another caller is another request.
    expect((await pay('Bearer bob')).json()).toEqual({ account: 'bob', n: 2 });
  });
});

describe('an answer sent but not kept', () => {
  const Brief = Space('step-brief', { ttlSeconds: 3, maxBytes: 4096 });
  @Controller()
  class Once {
    @Post('/once') @Idempotent(Brief) @Returns(Status(201, Object)) once() {
      return { n: ++runs };
    }
  }

  it('the keep refused (the claim lapsed) or failing: the log says which, and the retry is 503 with the whole seconds left', async () => {
    const reasons: string[] = [];
    for (const how of ['refused', 'throw', 'reject'] as const) {
      const f = new Faulty();
      const { log, msgs } = logged();
      const app = new App({ log }).controllers(Once).provide(Brief.open(f.store));
      if (how === 'refused') f.answer.set('put', () => false);
      else f.fail.set('put', how);
      const send = () =>
        app.inject({ method: 'POST', url: '/once', headers: { 'idempotency-key': `n-${how}` } });
      const first = await send();
      expect(first.status).toBe(201);
      const retry = await send();
      expect(retry.status).toBe(503);
      expect((retry.json() as { error: string }).error).toBe(
        'Idempotency-Key was answered, but the answer could not be kept: retry later',
      );
      expect(retry.headers['retry-after']).toBe('3');
      const line = (await msgs()).find((l) => l.includes('sent but not kept'))!;
      expect(line).toMatch(
        new RegExp(
          `^error: POST /once \\(Once\\.once\\): answer to Idempotency-Key "n-${how}" sent but not kept \\((.+)\\); retries to this process are refused 503 for 3 s$`,
        ),
      );
      reasons.push(/not kept \((.+)\); retries/.exec(line)![1]!);
    }
    expect(reasons[0]).toBe('the claim lapsed');
    expect(reasons[1]).toMatch(
      /^Space "step-brief": put ".*n-throw" failed: put failed \(on purpose\)$/,
    );
    expect(reasons[2]).toMatch(
      /^Space "step-brief": put ".*n-reject" failed: put failed \(on purpose\)$/,
    );
    expect(runs).toBe(3);
  });
});

describe('a caller holding claims in flight', () => {
  // One claim in flight fits each budget, two do not: a MemoryStore counts 384 bytes per entry
  // beside the key and the claim (about 60 bytes); a store of the program's own counts no overhead.
  const OnMemory = Space('step-held-memory', {
    ttlSeconds: 60,
    maxBytes: 4096,
    maxBytesPerCaller: 500,
  });
  const OnOwn = Space('step-held-own', { ttlSeconds: 60, maxBytes: 4096, maxBytesPerCaller: 100 });

  function heldApp(open: () => ReturnType<typeof OnMemory.open>, S: typeof OnMemory) {
    let release: () => void = () => {};
    @Controller()
    class Held {
      @Post('/held')
      @Idempotent(S, { by: () => 'ann' })
      @Returns(Status(201, Object))
      async held() {
        await new Promise<void>((r) => (release = r));
        return { ok: true };
      }
    }
    const app = new App({ log: () => {} }).controllers(Held).provide(open());
    const send = (key: string) =>
      app.inject({ method: 'POST', url: '/held', headers: { 'idempotency-key': key } });
    return { send, release: () => release() };
  }

  it.each([
    ['a MemoryStore', () => OnMemory.open(new MemoryStore({ bytes: 1 << 20 })), OnMemory],
    ['a store claiming in one round trip', () => OnOwn.open(new Faulty(true).store), OnOwn],
  ] as const)(
    'on %s: a second claim while the first runs is 429, Retry-After the lease left',
    async (_, open, S) => {
      const { send, release } = heldApp(open as () => ReturnType<typeof OnMemory.open>, S);
      const first = send('h1');
      await new Promise((r) => setTimeout(r, 10));
      const second = await send('h2');
      expect(second.status).toBe(429);
      // The first claim lapses with its lease (30 s) unless renewed or kept.
      expect(second.headers['retry-after']).toBe(String(Math.ceil(S.leaseMs / 1000)));
      release();
      expect((await first).status).toBe(201);
    },
  );
});

describe('a space too small for a claim', () => {
  const Tiny = Space('step-tiny', { ttlSeconds: 60, maxBytes: 16 });
  @Controller()
  class TinyRoutes {
    @Post('/tiny') @Idempotent(Tiny) @Returns(Status(201, Object)) tiny() {
      return { n: ++runs };
    }
  }

  it.each([
    ['a MemoryStore', () => new MemoryStore({ bytes: 1 << 20 })],
    ['a store claiming in one round trip', () => new Faulty(true).store],
  ] as const)(
    'IDEM-19 on %s: the claim is not written, so the handler never runs: 409 with Retry-After',
    async (_, store) => {
      const app = new App({ log: () => {} }).controllers(TinyRoutes).provide(Tiny.open(store()));
      const res = await app.inject({
        method: 'POST',
        url: '/tiny',
        headers: { 'idempotency-key': 't1' },
      });
      expect([res.status, res.headers['retry-after']]).toEqual([409, '1']);
      expect(runs).toBe(0);
    },
  );
});

describe('an answer an async handler returns, at the edges of keep', () => {
  class Asked {
    @IsInt() n!: number;
  }

  function asyncApp(keep: 'success' | 'declared') {
    const S = Space(`step-keep-${keep}`, { ttlSeconds: 60, maxBytes: 4096, keep });
    let ran = 0;
    @Controller()
    class Answers {
      @Post('/answer')
      @Idempotent(S)
      @Returns(Reply({ 201: Object, 400: Object, 500: Object }))
      async answer(@Body() asked: Asked) {
        await new Promise((r) => setTimeout(r, 1));
        ran++;
        return reply(asked.n as 201 | 400 | 500, { ran });
      }
    }
    const app = new App({ log: () => {} })
      .controllers(Answers)
      .provide(S.open(new MemoryStore({ bytes: 1 << 20 })));
    return async (key: string, n: number) => {
      const send = () =>
        app.inject({
          method: 'POST',
          url: '/answer',
          headers: { 'idempotency-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ n }),
        });
      const first = await send();
      const again = await send();
      return [first.status, again.status, again.headers['idempotent-replayed'] ?? 'ran again', ran];
    };
  }

  it("keep: 'success' keeps a 201 and gives a returned 400 back; 'declared' keeps the 400 and gives a returned 500 back", async () => {
    const success = asyncApp('success');
    expect(await success('s201', 201)).toEqual([201, 201, 'true', 1]);
    expect(await success('s400', 400)).toEqual([400, 400, 'ran again', 3]);
    const declared = asyncApp('declared');
    expect(await declared('d400', 400)).toEqual([400, 400, 'true', 1]);
    expect(await declared('d500', 500)).toEqual([500, 500, 'ran again', 3]);
  });
});
