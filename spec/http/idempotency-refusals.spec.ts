// The Refusals of @Idempotent word for word, those of atomic routes included, without a database:
// a PgStore is only constructed (its pool connects on first use), so this file runs where
// Postgres is not installed. The mutation run of the step found these unchecked.
import {
  App,
  Controller,
  Ctx,
  EventStream,
  Idempotent,
  Post,
  Redirect,
  RefusalError,
  Returns,
  Status,
} from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { MemoryStore, PgStore, Space, type SpaceDecl } from 'fw-http/cache';

const Orders = Space('refused-orders', { ttlSeconds: 60, maxBytes: 1024 });
const pg = new PgStore({ connectionString: 'postgres://127.0.0.1:1/none', sweepEveryMs: 0 });
afterAll(() => pg.close());

/** The Refusal lines of an app of `controller`, `Orders` opened on `store`. */
function refusals(controller: Function, store: 'memory' | 'pg' = 'memory'): readonly string[] {
  const opened = Orders.open(store === 'pg' ? pg : new MemoryStore({ bytes: 1 << 16 }));
  try {
    new App({ log: () => {} }).controllers(controller).provide(opened).build();
  } catch (e) {
    expect(e).toBeInstanceOf(RefusalError);
    return (e as RefusalError).problems;
  }
  throw new Error('the app was built');
}

const TAKES = `it takes the Space declaration (const Orders = Space('orders', { … }); @Idempotent(Orders)) and the opened space is provided (app.provide(Orders.open(store)))`;

describe('REF-44 what @Idempotent was given instead of a Space declaration', () => {
  it('REF-44 null, undefined, an anonymous class, an object, a number and a string are each named', () => {
    const anonymous = (() => class {})();
    @Controller()
    class Given {
      @Post('/null') @Idempotent(null as unknown as SpaceDecl) @Returns(Object) a() {
        return {};
      }
      @Post('/undefined') @Idempotent(undefined as unknown as SpaceDecl) @Returns(Object) b() {
        return {};
      }
      @Post('/anonymous') @Idempotent(anonymous as unknown as SpaceDecl) @Returns(Object) c() {
        return {};
      }
      @Post('/object')
      @Idempotent({ name: 'orders', ttl: 60, a: 1, b: 2, c: 3 } as unknown as SpaceDecl)
      @Returns(Object)
      d() {
        return {};
      }
      @Post('/empty') @Idempotent({} as unknown as SpaceDecl) @Returns(Object) e() {
        return {};
      }
      @Post('/number') @Idempotent(7 as unknown as SpaceDecl) @Returns(Object) f() {
        return {};
      }
      @Post('/string') @Idempotent('orders' as unknown as SpaceDecl) @Returns(Object) g() {
        return {};
      }
    }
    expect(refusals(Given)).toEqual([
      `POST /null (Given.a): @Idempotent was given null; ${TAKES}`,
      `POST /undefined (Given.b): @Idempotent was given undefined; ${TAKES}`,
      `POST /anonymous (Given.c): @Idempotent was given the class anonymous; ${TAKES}`,
      `POST /object (Given.d): @Idempotent was given an object that is not a Space (name, ttl, a, b); ${TAKES}`,
      `POST /empty (Given.e): @Idempotent was given an object that is not a Space (no keys); ${TAKES}`,
      `POST /number (Given.f): @Idempotent was given number 7; ${TAKES}`,
      `POST /string (Given.g): @Idempotent was given string "orders"; ${TAKES}`,
    ]);
  });

  it('REF-44 an object shaped like a Space but missing one of name, open and ttlSeconds is not taken for one', () => {
    const like = { name: 'orders', open: () => null, ttlSeconds: 60 };
    const { ttlSeconds: _t, ...noTtl } = like;
    const { open: _o, ...noOpen } = like;
    @Controller()
    class Shaped {
      @Post('/ttl') @Idempotent(noTtl as unknown as SpaceDecl) @Returns(Object) a() {
        return {};
      }
      @Post('/open') @Idempotent(noOpen as unknown as SpaceDecl) @Returns(Object) b() {
        return {};
      }
      @Post('/name')
      @Idempotent({ ...like, name: 7 } as unknown as SpaceDecl)
      @Returns(Object)
      c() {
        return {};
      }
    }
    expect(refusals(Shaped)).toEqual([
      `POST /ttl (Shaped.a): @Idempotent was given an object that is not a Space (name, open); ${TAKES}`,
      `POST /open (Shaped.b): @Idempotent was given an object that is not a Space (name, ttlSeconds); ${TAKES}`,
      `POST /name (Shaped.c): @Idempotent was given an object that is not a Space (name, open, ttlSeconds); ${TAKES}`,
    ]);
  });

  it('REF-44 a Space declaration whose opened space is not provided names the space and the fix', () => {
    const Other = Space('other-orders', { ttlSeconds: 60, maxBytes: 1024 });
    @Controller()
    class Unprovided {
      @Post('/o') @Idempotent(Other) @Returns(Object) o() {
        return {};
      }
    }
    expect(refusals(Unprovided)).toEqual([
      'POST /o (Unprovided.o): @Idempotent space "other-orders" is not provided: app.provide(other-orders.open(store))',
    ]);
  });
});

describe('the Refusals of atomic routes, word for word', () => {
  it('a Tx parameter needs atomic: true (not false, not absent, not on a plain route)', () => {
    @Controller()
    class Txs {
      @Post('/absent') @Idempotent(Orders) @Returns(Object) a(tx: Tx) {
        return { tx: String(tx) };
      }
      @Post('/false') @Idempotent(Orders, { atomic: false }) @Returns(Object) b(tx: Tx) {
        return { tx: String(tx) };
      }
      @Post('/plain') @Returns(Object) c(tx: Tx) {
        return { tx: String(tx) };
      }
    }
    const needs =
      'a Tx parameter needs an atomic route: @Idempotent(Space, { atomic: true }) on a space opened on a PgStore';
    expect(refusals(Txs)).toEqual([
      `POST /absent (Txs.a): ${needs}`,
      `POST /false (Txs.b): ${needs}`,
      `POST /plain (Txs.c): ${needs}`,
    ]);
  });

  it('atomic must be a boolean and isolation one of the three levels', () => {
    @Controller()
    class Settings {
      @Post('/atomic')
      @Idempotent(Orders, { atomic: 'yes' as unknown as boolean })
      @Returns(Object)
      a() {
        return {};
      }
      @Post('/isolation')
      @Idempotent(Orders, { atomic: true, isolation: 'snapshot' as never })
      @Returns(Object)
      b() {
        return {};
      }
      @Post('/fine')
      @Idempotent(Orders, { atomic: true, isolation: 'serializable' })
      @Returns(Object)
      c() {
        return {};
      }
    }
    expect(refusals(Settings, 'pg')).toEqual([
      'POST /atomic (Settings.a): @Idempotent: atomic must be true or false, got "yes"',
      `POST /isolation (Settings.b): @Idempotent: isolation must be one of 'read committed', 'repeatable read', 'serializable', got "snapshot"`,
    ]);
  });

  it('atomic: true on a MemoryStore names the space and the store', () => {
    @Controller()
    class OnMemory {
      @Post('/m') @Idempotent(Orders, { atomic: true }) @Returns(Object) m() {
        return {};
      }
    }
    expect(refusals(OnMemory)).toEqual([
      'POST /m (OnMemory.m): @Idempotent atomic: true needs a space opened on a PgStore (space "refused-orders" is on MemoryStore): only Postgres can commit the claim, the handler\'s writes and the answer together',
    ]);
  });

  it('REF-10 atomic: true cannot stream: an event stream and a redirect are refused, a kept status is not', () => {
    const stream =
      'cannot stream its answer: the answer commits with the transaction, so it is whole before it is sent';
    @Controller()
    class Streams {
      @Post('/events') @Idempotent(Orders, { atomic: true }) @Returns(EventStream) e(c: Ctx): void {
        c.events().close();
      }
      @Post('/redirect') @Idempotent(Orders, { atomic: true }) @Returns(Redirect(303)) r() {
        return Redirect.to('/there');
      }
      @Post('/created') @Idempotent(Orders, { atomic: true }) @Returns(Status(201, Object)) k() {
        return {};
      }
    }
    expect(refusals(Streams, 'pg')).toEqual([
      `POST /events (Streams.e): @Idempotent atomic: true ${stream}`,
      'POST /events (Streams.e): @Idempotent cannot keep an EventStream answer',
      `POST /redirect (Streams.r): @Idempotent atomic: true ${stream}`,
      'POST /redirect (Streams.r): @Idempotent cannot keep a Redirect answer',
    ]);
  });
});
