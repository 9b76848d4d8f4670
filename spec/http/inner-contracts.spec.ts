import { MemoryStore, Space } from 'fw-http/cache';
import {
  App,
  Bytes,
  Controller,
  EventStream,
  Get,
  Idempotent,
  Optional,
  Post,
  Redirect,
  Reply,
  Returns,
  Status,
  Versioned,
  type Contract,
} from 'fw-http';
import { FileBody } from 'fw-http/files';
import { z } from 'zod';
import { innerContracts, toContract } from '../../lib/http/core/answers';

// The one walk over the contract type: innerContracts gives the contracts nested
// directly in one, and every check that only has to reach them all recurses through it.

class Order {
  id = '';
}
class Conflict {
  reason = '';
}
class Csv {
  static readonly contentType = 'text/csv';
  write(): void {}
}

/** Every contract reachable from `c`, itself first, depth first. */
function everyContract(c: Contract): Contract[] {
  return [c, ...innerContracts(c).flatMap(everyContract)];
}

describe('innerContracts', () => {
  // One of each kind; a Record over the kinds, so a kind added to Contract fails tsc here until it has a row.
  const order = toContract(Order);
  const leaves: Record<
    Exclude<Contract['kind'], 'status' | 'optional' | 'reply' | 'own'>,
    Contract
  > = {
    json: order,
    schema: toContract(z.object({ id: z.string() })),
    text: toContract(String),
    void: { kind: 'void' },
    bytes: toContract(Bytes),
    redirect: Redirect(303),
    events: toContract(EventStream),
    self: toContract(Csv),
  };

  it.each(Object.entries(leaves))('a %s contract is a leaf: nothing nested', (kind, c) => {
    expect(c.kind).toBe(kind);
    expect(innerContracts(c)).toEqual([]);
  });

  it("a contract of a capability's own kind without an inner one (FileBody) is a leaf", () => {
    expect(toContract(FileBody)).toMatchObject({ kind: 'own', name: 'FileBody', inner: null });
    expect(innerContracts(toContract(FileBody))).toEqual([]);
  });

  it('Status, Optional and Versioned give their one inner contract, the very object', () => {
    for (const wrap of [
      (c: Contract) => Status(201, c),
      (c: Contract) => Optional(c),
      (c: Contract) => Versioned(c),
    ]) {
      const inner = innerContracts(wrap(order));
      expect(inner).toHaveLength(1);
      expect(inner[0]).toBe(order);
    }
  });

  it('Reply of one contract gives it; a Reply map gives every variant, not only the first', () => {
    expect(innerContracts(Reply(order, { statuses: [200, 202] }))).toEqual([order]);
    const map = Reply({ 200: Order, 409: Conflict, 303: Redirect(303) });
    expect(innerContracts(map).map((c) => c.kind)).toEqual(['json', 'redirect', 'json']);
    expect(innerContracts(map).map((c) => (c.kind === 'json' ? c.type : c.kind))).toEqual([
      Order,
      'redirect',
      Conflict,
    ]);
  });

  it('a walk through it reaches every nested contract of every kind, however deep', () => {
    const deep = Optional(
      Versioned(
        Reply({
          200: Status(200, Order),
          206: Optional(FileBody),
          409: Reply({ 409: Conflict, 410: String }),
        }),
      ),
    );
    expect(everyContract(deep).map((c) => (c.kind === 'own' ? c.name : c.kind))).toEqual([
      'optional',
      'Versioned',
      'reply',
      'status',
      'json',
      'optional',
      'FileBody',
      'reply',
      'json',
      'text',
    ]);
  });
});

describe('the checks that walk a contract reach every Reply variant', () => {
  const Kept = Space('kept', { ttlSeconds: 60, maxBytes: 1024 });

  function problemsOf(controller: Function): string[] {
    try {
      new App()
        .controllers(controller)
        .provide(Kept.open(new MemoryStore({ bytes: 4096 })))
        .build();
    } catch (e) {
      return (e as { problems: string[] }).problems;
    }
    return [];
  }

  it('REF-17 a FileBody as a later variant of a Reply map is refused like one as the first', () => {
    @Controller()
    class Later {
      @Get('/f')
      @Returns(Reply({ 200: Order, 206: FileBody }))
      f() {
        return null as never; // refused before it runs
      }
    }
    expect(problemsOf(Later)).toEqual([
      expect.stringMatching(/^GET \/f \(Later\.f\): FileBody cannot sit inside Reply/),
    ]);
  });

  it('REF-11 @Idempotent on a Reply map with a FileBody or Redirect variant is refused naming the kind', () => {
    @Controller()
    class Keeps {
      @Post('/file')
      @Idempotent(Kept, { by: () => 'x' })
      @Returns(Reply({ 200: Order, 206: FileBody }))
      file() {
        return null as never; // refused before it runs
      }
      @Post('/redirect')
      @Idempotent(Kept, { by: () => 'x' })
      @Returns(Reply({ 201: Order, 303: Redirect(303) }))
      redirect() {
        return null as never; // refused before it runs
      }
      @Post('/plain')
      @Idempotent(Kept, { by: () => 'x' })
      @Returns(Reply({ 201: Order, 409: Conflict }))
      plain() {
        return null as never; // refused before it runs
      }
    }
    const problems = problemsOf(Keeps);
    expect(problems).toContain(
      'POST /file (Keeps.file): @Idempotent cannot keep a FileBody answer',
    );
    expect(problems).toContain(
      'POST /redirect (Keeps.redirect): @Idempotent cannot keep a Redirect answer',
    );
    expect(problems.filter((p) => p.startsWith('POST /plain'))).toEqual([]);
  });
});
