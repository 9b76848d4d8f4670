import {
  App,
  Controller,
  Get,
  Idempotent,
  Post,
  RefusalError,
  Returns,
  Status,
  type AnswerOf,
  type Contract,
  type ContractLike,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import {
  OWN_CONTRACT,
  ownContract,
  toContract,
  type Capability,
  type OwnEncoder,
  type RouteRecord,
  type OperationSink,
} from 'fw-http/capabilities';

// A contract kind fw does not know, made by a program through the public doors only, as fw's own
// Versioned and FileBody are: `Signed(T)` wraps T's answer and adds a signature header, with a
// capability that encodes it and describes it; `Ping` is a leaf class standing for its own contract.

const quiet = { log: () => {} };

interface SignedValue<T> {
  readonly value: T;
  readonly signature: string;
}
const Signed = <C extends ContractLike>(inner: C): Contract<SignedValue<AnswerOf<C>>> =>
  ownContract({ name: 'Signed', inner: toContract(inner), statuses: [203], replayable: true });
const sign = <T>(value: T, signature: string): SignedValue<T> => ({ value, signature });

class Ping {
  static readonly [OWN_CONTRACT] = ownContract<Ping>({ name: 'Ping' });
  constructor(readonly word: string) {}
}

const signedEncoder: OwnEncoder = (contract, label, compile) => {
  const inner = compile(contract.inner!);
  return (c, v, status, own) => {
    const s = v as SignedValue<unknown>;
    if (typeof s?.signature !== 'string') throw new TypeError(`${label}: not a Signed value`);
    c.setHeader('x-signature', s.signature);
    return inner(c, s.value, status, own);
  };
};

const signing: Capability = {
  name: 'signing',
  encoders: {
    Signed: signedEncoder,
    Ping: () => (c, v, status) => c.send(status, 'text/plain', (v as Ping).word),
  },
  describe: (record: RouteRecord, op: OperationSink) => {
    if (record.contract?.kind === 'own' && record.contract.name === 'Signed')
      for (const status of op.answerStatuses)
        op.header(status, 'X-Signature', { schema: { type: 'string' } });
  },
};

class Order {
  id = '';
}
const Orders = Space('signed-orders', { ttlSeconds: 60, maxBytes: 4096 });
let runs = 0;

@Controller('/signed')
class SignedController {
  @Get('/order')
  @Returns(Signed(Order))
  one(): SignedValue<Order> {
    return sign({ id: 'o1' }, 'sig-1');
  }

  @Post('/orders')
  @Idempotent(Orders, { by: () => 'one' })
  @Returns(Signed(Status(201, Order)))
  place(): SignedValue<Order> {
    runs++;
    return sign({ id: `o${runs}` }, `sig-${runs}`);
  }
}

@Controller('/leaf')
class PingController {
  @Get('/ping')
  @Returns(Ping)
  ping(): Ping {
    return new Ping('pong');
  }
}

describe('a contract kind of a program’s own (ownContract, OWN_CONTRACT, Capability.encoders)', () => {
  const app = new App(quiet)
    .controllers(SignedController, PingController)
    .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })))
    .use(signing)
    .openapi();
  let url = '';
  beforeAll(async () => {
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  it("answers through the capability's encoder, which wraps the inner contract's", async () => {
    const res = await fetch(`${url}/signed/order`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-signature')).toBe('sig-1');
    expect(await res.json()).toEqual({ id: 'o1' });
  });

  it('keeps the inner status, and an idempotent route replays it when the kind says it is replayable', async () => {
    const post = () =>
      fetch(`${url}/signed/orders`, { method: 'POST', headers: { 'idempotency-key': 'k1' } });
    const first = await post();
    const again = await post();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(await first.json());
    expect(again.headers.get('x-signature')).toBe(first.headers.get('x-signature'));
    expect(runs).toBe(1);
  });

  it('a leaf class carrying its own contract under OWN_CONTRACT is answered by its encoder', async () => {
    const res = await fetch(`${url}/leaf/ping`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('pong');
  });

  it("the document describes the inner contract, the kind's declared statuses and the capability's header", () => {
    const doc = app.document() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const op = doc.paths['/signed/order']!['get']!;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200']));
    expect(op.responses['200']!.headers).toHaveProperty('X-Signature');
    expect(Object.keys(doc.paths['/signed/orders']!['post']!.responses)).toContain('201');
  });

  it('a route answering a kind no capability encodes is refused at build, naming the route and the kind', () => {
    const bare = new App(quiet).controllers(PingController);
    expect(() => bare.build()).toThrow(RefusalError);
    expect(() => new App(quiet).controllers(PingController).build()).toThrow(
      /GET \/leaf\/ping \(PingController\.ping\): Ping answers are not available: no capability added with app\.use\(\) encodes them/,
    );
  });

  it('two capabilities encoding one kind are refused at build, naming both', () => {
    const again: Capability = { name: 'signing-again', encoders: { Signed: signedEncoder } };
    const build = () =>
      new App(quiet)
        .controllers(SignedController)
        .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })))
        .use(signing)
        .use(again)
        .build();
    expect(build).toThrow(RefusalError);
    expect(build).toThrow(/two capabilities encode Signed answers: signing and signing-again/);
  });

  it('an idempotent route refuses a kind that is not replayable, by its name', () => {
    const Kept = Space('unreplayable', { ttlSeconds: 60, maxBytes: 1024 });
    @Controller('/p')
    class Keeps {
      @Post('/ping') @Idempotent(Kept, { by: () => 'one' }) @Returns(Ping) ping(): Ping {
        return new Ping('x');
      }
    }
    const build = () =>
      new App(quiet)
        .controllers(Keeps)
        .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
        .use(signing)
        .build();
    expect(build).toThrow(/POST \/p\/ping \(Keeps\.ping\): @Idempotent cannot keep a Ping answer/);
  });
});
