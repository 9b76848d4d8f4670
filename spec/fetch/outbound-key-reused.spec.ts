import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { App, Controller, Ctx, Idempotent, Post, Problem, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import {
  Client,
  FetchError,
  isFetchError,
  Target,
  type KeyReusedAnswer,
  type OpenTarget,
} from 'fw-http/fetch';

// A rerun that sends another request under a derived key: the upstream refuses
// it forever, so the call fails OutboundKeyReused, logged, and the incoming request gets a 500
// that is not kept, never the upstream's 422.

const Charges = Space('charges', { ttlSeconds: 60, maxBytes: 4096 });
const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096 });

/** The bank: fw's idempotent POST /charges, and a Stripe-like route answering 400 `idempotency_error`. */
async function bankApp(problem = false): Promise<{ app: App; url: string; charged: string[] }> {
  const charged: string[] = [];
  @Controller()
  class Bank {
    @Post('/charges') @Idempotent(Charges) @Returns(Status(201, Object)) charge(c: Ctx) {
      charged.push(c.idempotency!.key);
      return { id: charged.length };
    }
    @Post('/stripe') @Returns(Status(400, Object)) stripe() {
      return { error: { type: 'idempotency_error', message: 'Keys for idempotent requests…' } };
    }
    @Post('/refused') @Returns(Status(400, Object)) refused() {
      return { error: { type: 'card_error' } };
    }
  }
  const app = new App({ log: () => {} })
    .controllers(Bank)
    .provide(Charges.open(new MemoryStore({ bytes: 1 << 20 })));
  if (problem) app.failures(Problem);
  const { url } = await app.listen({ port: 0 });
  return { app, url, charged };
}

/** A shop whose idempotent POST /pay calls `pay(c, target)` and answers 201 with what it returns. */
async function withShop(
  options: { base: string; keyReused?: KeyReusedAnswer },
  pay: (c: Ctx, bank: OpenTarget) => Promise<unknown>,
  run: (post: () => Promise<{ status: number; body: string }>, lines: string[]) => Promise<void>,
): Promise<void> {
  const lines: string[] = [];
  const client = new Client();
  const Bank = Target('bank', {
    idempotencyKeys: true,
    ...(options.keyReused ? { keyReused: options.keyReused } : {}),
  });
  const bank = Bank.open(client, { base: options.base });
  @Controller()
  class Shop {
    @Post('/pay') @Idempotent(Payments) @Returns(Status(201, Object)) async handle(c: Ctx) {
      return { got: await pay(c, bank) };
    }
  }
  const shop = new App({ log: (l) => lines.push(l) })
    .controllers(Shop)
    .provide(client)
    .provide(Payments.open(new MemoryStore({ bytes: 1 << 20 })));
  try {
    const post = async () => {
      const r = await shop.inject({
        method: 'POST',
        url: '/pay',
        headers: { 'idempotency-key': 'order-1' },
      });
      return { status: r.status, body: r.body };
    };
    await run(post, lines);
  } finally {
    await shop.close();
  }
}

function raw(
  url: string,
  path: string,
  key: string,
  body: string,
): Promise<{ status: number; mismatch: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (b: Buffer) => (text += b.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            mismatch: res.headers['idempotency-key-mismatch'] as string | undefined,
            body: text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('an outbound request that differs on a rerun', () => {
  it("fw's 422 for a key sent with another request carries Idempotency-Key-Mismatch: true in every failure shape; its first answer and a replay do not", async () => {
    for (const problem of [false, true]) {
      const bank = await bankApp(problem);
      try {
        const first = await raw(bank.url, '/charges', 'k', '{"amount":1}');
        const replay = await raw(bank.url, '/charges', 'k', '{"amount":1}');
        const other = await raw(bank.url, '/charges', 'k', '{"amount":2}');
        expect([first.status, replay.status, other.status]).toEqual([201, 201, 422]);
        expect([first.mismatch, replay.mismatch, other.mismatch]).toEqual([
          undefined,
          undefined,
          'true',
        ]);
        expect(other.body).toContain('Idempotency-Key was used for a different request');
      } finally {
        await bank.app.close();
      }
    }
  });

  it("an fw upstream's mismatch fails the call OutboundKeyReused: the incoming request gets a 500 that is not kept, and an error line names the target and the call", async () => {
    const bank = await bankApp();
    let crash = true;
    try {
      await withShop(
        { base: bank.url },
        async (c, target) => {
          // A fresh value in the body: the rerun's request is not the first run's.
          const res = await target.postJson(c, '/charges', {}, { amount: 5, nonce: randomUUID() });
          if (crash) throw new Error('crashed after the charge');
          return res.status;
        },
        async (post, lines) => {
          expect((await post()).status).toBe(500);
          crash = false;
          const second = await post();
          expect(second.status).toBe(500);
          expect(second.body).not.toContain('422');
          const third = await post(); // not kept: the handler runs again, and fails again
          expect(third.status).toBe(500);
          expect(bank.charged).toHaveLength(1);
          const errors = lines.filter((l) => l.includes('OutboundKeyReused'));
          expect(errors.length).toBeGreaterThanOrEqual(2);
          expect(errors.join('\n')).toContain(
            "target bank: POST /charges answered 422: its derived Idempotency-Key was used for another request: the request differs from the first run's",
          );
        },
      );
    } finally {
      await bank.app.close();
    }
  });

  it('a handler can catch OutboundKeyReused by its code', async () => {
    const bank = await bankApp();
    let run = 0;
    try {
      await withShop(
        { base: bank.url },
        async (c, target) => {
          run++;
          try {
            await target.postJson(c, '/charges', {}, { run });
          } catch (e) {
            return isFetchError(e, 'OutboundKeyReused') ? 'reused' : 'other';
          }
          if (run === 1) throw new Error('crashed after the charge');
          return 'charged';
        },
        async (post) => {
          expect((await post()).status).toBe(500);
          const second = await post();
          expect(second.status).toBe(201);
          expect(JSON.parse(second.body)).toEqual({ got: 'reused' });
        },
      );
    } finally {
      await bank.app.close();
    }
  });

  it("a Target's keyReused names another upstream's answer for a reused key (Stripe's 400 idempotency_error): it fails the call; other 400s, and the same answer without the option, are the call's answer", async () => {
    const bank = await bankApp();
    const stripe = { status: 400, code: 'idempotency_error' };
    const send = (path: string) => async (c: Ctx, target: OpenTarget) => {
      try {
        return (await target.postJson(c, path, {}, {})).status;
      } catch (e) {
        return e instanceof FetchError ? e.code : 'other';
      }
    };
    try {
      const cases: [string, KeyReusedAnswer | undefined, unknown][] = [
        ['/stripe', stripe, 'OutboundKeyReused'],
        ['/refused', stripe, 400],
        ['/stripe', undefined, 400],
        ['/stripe', { status: 409, code: 'idempotency_error' }, 400],
      ];
      for (const [path, keyReused, expected] of cases)
        await withShop(
          { base: bank.url, ...(keyReused ? { keyReused } : {}) },
          send(path),
          async (post) => {
            const r = await post();
            expect([path, keyReused, JSON.parse(r.body)]).toEqual([
              path,
              keyReused,
              { got: expected },
            ]);
          },
        );
    } finally {
      await bank.app.close();
    }
  });

  it('a call that names its own Idempotency-Key gets the upstream mismatch as its answer (only derived keys are judged)', async () => {
    const bank = await bankApp();
    let run = 0;
    try {
      await withShop(
        { base: bank.url },
        async (c, target) => {
          run++;
          const res = await target.postJson(
            c,
            '/charges',
            {},
            { run },
            { headers: [{ name: 'Idempotency-Key', value: 'mine' }] },
          );
          if (run === 1) throw new Error('crashed after the charge');
          return res.status;
        },
        async (post) => {
          expect((await post()).status).toBe(500);
          expect(JSON.parse((await post()).body)).toEqual({ got: 422 });
        },
      );
    } finally {
      await bank.app.close();
    }
  });

  it('Target refuses a keyReused that is not { status, code } or is given without idempotencyKeys', () => {
    const bad: unknown[] = [
      null,
      { status: 200, code: 'x' },
      { status: 400.5, code: 'x' },
      { status: 400, code: '' },
      { status: 400 },
    ];
    for (const keyReused of bad)
      expect(() =>
        Target('t', { idempotencyKeys: true, keyReused: keyReused as KeyReusedAnswer }),
      ).toThrow(/BadSettings: target t keyReused/);
    expect(() => Target('t', { keyReused: { status: 400, code: 'x' } })).toThrow(
      /needs idempotencyKeys: true/,
    );
  });
});
