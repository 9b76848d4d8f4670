import {
  App,
  Controller,
  Ctx,
  Get,
  Inject,
  Post,
  RefusalError,
  Returns,
  type AppOptions,
} from 'fw-http';
import { MemoryStore, OpenSpace, Space } from 'fw-http/cache';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

// CORE-08: constructor parameters and undecorated handler parameters are filled by type from the
// provided services. A type two provided instances would fill is a Refusal naming both; two of a
// kind are provided under keys (`app.provide(x, { as: Key })`) and asked for with `@Inject(Key)`.

/** The Refusal lines of building `app`. */
function refusals(app: App): readonly string[] {
  try {
    app.build();
  } catch (e) {
    expect(e).toBeInstanceOf(RefusalError);
    return (e as RefusalError).problems;
  }
  throw new Error('the app was built');
}

const quiet: AppOptions = { log: () => {} };
const Bank = Target('bank');
const Fraud = Target('fraud');

/** An upstream fw app answering `GET /who` with its own name, on a real socket. */
async function upstream(name: string) {
  @Controller()
  class Who {
    @Get('/who') @Returns(String) who() {
      return name;
    }
  }
  const app = new App(quiet).controllers(Who);
  const { url } = await app.listen({ port: 0 });
  return { app, url };
}

describe('CORE-08 two provided instances that fill one parameter', () => {
  const client = new Client();
  const bank = Bank.open(client, { base: 'http://127.0.0.1:9' });
  const fraud = Fraud.open(client, { base: 'http://127.0.0.1:9' });

  it('CORE-08 a constructor parameter typed OpenTarget with two opened targets provided is refused naming the type and both', () => {
    @Controller('/pay')
    class Payments {
      constructor(readonly target: OpenTarget) {}
      @Post() @Returns(String) pay() {
        return this.target.name;
      }
    }
    const app = new App(quiet).provide(client).provide(bank).provide(fraud).controllers(Payments);
    expect(refusals(app)).toEqual([
      'Payments: constructor parameter 0 (OpenTarget) matches 2 provided instances: OpenTarget "bank" (app.provide #2), OpenTarget "fraud" (app.provide #3): provide each under a key of its own (app.provide(x, { as: Key })) and ask for it with @Inject(Key), or provide only one',
    ]);
  });

  it('CORE-08 a handler parameter filled by type is refused the same way', () => {
    @Controller('/pay')
    class Payments {
      @Post() @Returns(String) pay(target: OpenTarget) {
        return target.name;
      }
    }
    const app = new App(quiet).provide(bank).provide(fraud).controllers(Payments);
    expect(refusals(app)).toEqual([
      expect.stringMatching(
        /^POST \/pay \(Payments\.pay\): parameter 0 \(OpenTarget\) matches 2 provided instances: OpenTarget "bank" \(app\.provide #1\), OpenTarget "fraud" \(app\.provide #2\): /,
      ),
    ]);
  });

  it('CORE-08 two instances of one class, or two subclasses of a base class asked for, are refused; the subclass itself is not', () => {
    class Ledger {}
    class CardLedger extends Ledger {}
    class CashLedger extends Ledger {}
    class Db {}
    @Controller('/l')
    class Books {
      constructor(
        readonly ledger: Ledger,
        readonly db: Db,
        readonly card: CardLedger,
      ) {}
      @Get() @Returns(String) one() {
        return 'ok';
      }
    }
    const app = new App(quiet)
      .provide(new CardLedger())
      .provide(new CashLedger())
      .provide(new Db())
      .provide(new Db())
      .controllers(Books);
    expect(refusals(app)).toEqual([
      expect.stringContaining(
        'Books: constructor parameter 0 (Ledger) matches 2 provided instances: CardLedger (app.provide #1), CashLedger (app.provide #2)',
      ),
      expect.stringContaining(
        'Books: constructor parameter 1 (Db) matches 2 provided instances: Db (app.provide #3), Db (app.provide #4)',
      ),
    ]);
  });

  it('CORE-08 opened spaces are provided instances too: two of them asked for by type are refused', () => {
    const store = new MemoryStore({ bytes: 1 << 20 });
    const orders = Space('orders', { ttlSeconds: 60, maxBytes: 1024 }).open(store);
    const carts = Space('carts', { ttlSeconds: 60, maxBytes: 1024 }).open(store);
    @Controller('/s')
    class Spaces {
      @Get() @Returns(String) one(space: OpenSpace) {
        return space.space.name;
      }
    }
    const app = new App(quiet).provide(orders).provide(carts).controllers(Spaces);
    expect(refusals(app)).toEqual([
      expect.stringContaining(
        '(OpenSpace) matches 2 provided instances: OpenSpace "space:orders" (app.provide #1), OpenSpace "space:carts" (app.provide #2)',
      ),
    ]);
  });

  it('CORE-08 one instance provided twice is still one: not refused', () => {
    class Db {}
    const db = new Db();
    @Controller('/d')
    class D {
      constructor(readonly db: Db) {}
      @Get() @Returns(String) one() {
        return 'ok';
      }
    }
    expect(() => new App(quiet).provide(db).provide(db).controllers(D).build()).not.toThrow();
  });

  it('@Inject(key) with nothing provided as key is refused saying how to provide it', () => {
    @Controller('/k')
    class K {
      constructor(@Inject(Bank) readonly bank: OpenTarget) {}
      @Get() @Returns(String) one(@Inject(Fraud) fraud: OpenTarget) {
        return fraud.name;
      }
    }
    expect(refusals(new App(quiet).provide(bank).controllers(K))).toEqual([
      'K: constructor parameter 0: @Inject(TargetType "bank"): nothing is provided as it: app.provide(instance, { as: TargetType "bank" })',
      'GET /k (K.one): parameter 0: @Inject(TargetType "fraud"): nothing is provided as it: app.provide(instance, { as: TargetType "fraud" })',
    ]);
  });
});

describe('two of a kind: app.provide(x, { as: Key }) and @Inject(Key)', () => {
  let bankSide: Awaited<ReturnType<typeof upstream>>;
  let fraudSide: Awaited<ReturnType<typeof upstream>>;
  beforeAll(async () => {
    bankSide = await upstream('the bank');
    fraudSide = await upstream('the fraud check');
  });
  afterAll(async () => {
    await bankSide.app.close();
    await fraudSide.app.close();
  });

  it('each parameter gets the target provided under its key, in a constructor and in a handler, over real sockets', async () => {
    const client = new Client();
    @Controller('/pay')
    class Payments {
      constructor(@Inject(Bank) readonly bank: OpenTarget) {}
      @Post() @Returns(Object) async pay(c: Ctx, @Inject(Fraud) fraud: OpenTarget) {
        const checked = await (await fraud.get(c, '/who')).bytes;
        const charged = await (await this.bank.get(c, '/who')).bytes;
        return { checked: checked.toString(), charged: charged.toString() };
      }
    }
    // The client is not provided itself: its targets' keys are enough for the app to start it.
    const app = new App(quiet)
      .provide(Bank.open(client, { base: bankSide.url }), { as: Bank })
      .provide(Fraud.open(client, { base: fraudSide.url }), { as: Fraud })
      .controllers(Payments);
    const { url } = await app.listen({ port: 0 });
    try {
      const res = await fetch(`${url}/pay`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ checked: 'the fraud check', charged: 'the bank' });
    } finally {
      await app.close();
    }
  });

  it('a target provided under a key is probed by the health route like any other', async () => {
    const Ledger = Target('ledger', { ready: '/ready' });
    const app = new App(quiet)
      .provide(Ledger.open(new Client(), { base: 'http://127.0.0.1:9' }), { as: Ledger })
      .health();
    try {
      const down = await app.inject({ url: '/healthz' });
      expect([down.status, down.json()]).toEqual([
        503,
        { error: 'not ready: ledger', status: 503 },
      ]);
    } finally {
      await app.close();
    }
  });

  it('an instance provided under a key is not found by its class: a parameter typed OpenTarget gets the one provided plainly', () => {
    const client = new Client();
    const plain = Target('plain').open(client, { base: 'http://127.0.0.1:9' });
    @Controller('/p')
    class P {
      constructor(readonly target: OpenTarget) {}
      @Get() @Returns(String) one() {
        return this.target.name;
      }
    }
    const app = new App(quiet)
      .provide(Bank.open(client, { base: 'http://127.0.0.1:9' }), { as: Bank })
      .provide(plain)
      .controllers(P);
    expect(() => app.build()).not.toThrow();
  });
});
