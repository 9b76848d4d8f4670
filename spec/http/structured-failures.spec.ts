import { IsInt, IsString } from 'class-validator';
import {
  App,
  Body,
  Controller,
  fail,
  Get,
  HttpError,
  Idempotent,
  Post,
  Problem,
  Reply,
  reply,
  Returns,
  type FailureFacts,
} from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

// failures carry a stable code and details; the Problem shape (RFC 9457); a custom
// shape's factory gets the whole failure; the default `{ error, status }` stays as it was.

class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

class Receipt {
  @IsString() id!: string;
}

@Controller('/transfers')
class TransfersController {
  @Post()
  @Returns(Receipt)
  create(@Body() t: Transfer): Receipt {
    if (t.amount > 10)
      throw fail.unprocessable({
        code: 'InsufficientFunds',
        message: 'the balance is too low',
        details: { balance: 10, asked: t.amount, status: 999 },
      });
    if (t.amount < 0) throw fail.badRequest('amount %d is negative', t.amount);
    if (t.amount === 0)
      throw new HttpError('Timeout', 'the ledger took too long', { ledger: 'main' });
    return { id: 't1' };
  }

  @Get('/boom')
  @Returns(Receipt)
  boom(): Receipt {
    throw new Error('secret internals');
  }
}

const post = (app: App, body: object) =>
  app.inject({
    method: 'POST',
    url: '/transfers',
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-42' },
    body: JSON.stringify(body),
  });

describe('errors clients can act on', () => {
  it('the default shape stays exactly { error, status }, whatever the code and details', async () => {
    const app = new App({ log: () => {} }).controllers(TransfersController);
    const r = await post(app, { to: 'bob', amount: 11 });
    expect(r.status).toBe(422);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toBe('{"error":"the balance is too low","status":422}');
  });

  it('fail.* keeps its message form and gets a code from its status', () => {
    const f = fail.notFound('order %s', 'o1');
    expect([f.message, f.status, f.code, f.details]).toEqual(['order o1', 404, 'NotFound', null]);
    expect(fail.unprocessable().code).toBe('UnprocessableEntity');
    const g = fail.status(409, { code: 'AlreadyPaid', details: { at: 1 } });
    expect([g.status, g.code, g.details, g.message]).toEqual([409, 'AlreadyPaid', { at: 1 }, '']);
  });

  it('app.failures(Problem) answers application/problem+json with RFC 9457 members and extensions', async () => {
    const app = new App({ log: () => {} }).controllers(TransfersController).failures(Problem);
    const r = await post(app, { to: 'bob', amount: 11 });
    expect(r.status).toBe(422);
    expect(r.headers['content-type']).toBe('application/problem+json');
    expect(r.json()).toEqual({
      type: 'about:blank',
      title: 'Unprocessable Entity',
      status: 422, // a detail named like a member never replaces it
      detail: 'the balance is too low',
      instance: '/transfers',
      code: 'InsufficientFunds',
      requestId: 'req-42',
      balance: 10,
      asked: 11,
    });
    // RFC 9457 §3.1: the members have these JSON types.
    const p = r.json<Record<string, unknown>>();
    for (const k of ['type', 'title', 'detail', 'instance']) expect(typeof p[k]).toBe('string');
    expect(Number.isInteger(p.status)).toBe(true);
  });

  it("fw's own failures carry their codes: validation, HttpError with details, a 500, no route", async () => {
    const app = new App({ log: () => {} }).controllers(TransfersController).failures(Problem);
    const bad = (await post(app, { to: 'bob', amount: 'x' })).json<Record<string, unknown>>();
    expect([bad.status, bad.code]).toEqual([400, 'BadRequest']);
    expect(bad.detail).toContain('amount');
    const timeout = (await post(app, { to: 'bob', amount: 0 })).json<Record<string, unknown>>();
    expect(timeout).toMatchObject({ status: 503, code: 'Timeout', ledger: 'main' });
    const boom = await app.inject({ url: '/transfers/boom' });
    expect(boom.json()).toMatchObject({
      status: 500,
      code: 'InternalServerError',
      detail: 'internal server error',
      instance: '/transfers/boom',
    });
    expect(boom.body).not.toContain('secret');
    const none = (await app.inject({ url: '/nowhere' })).json<Record<string, unknown>>();
    expect(none).toMatchObject({ status: 404, code: 'NotFound', instance: '/nowhere' });
  });

  it("a custom shape's factory receives the whole failure; a (status, message) one still works", async () => {
    const seen: FailureFacts[] = [];
    class Whole {
      static failure(status: number, message: string, f: FailureFacts) {
        seen.push(f);
        return { message, status, code: f.code, id: f.requestId, details: f.details };
      }
    }
    const app = new App({ log: () => {} }).controllers(TransfersController).failures(Whole);
    const r = await post(app, { to: 'bob', amount: 11 });
    expect(r.json()).toEqual({
      message: 'the balance is too low',
      status: 422,
      code: 'InsufficientFunds',
      id: 'req-42',
      details: { balance: 10, asked: 11, status: 999 },
    });
    expect(seen[0]).toMatchObject({ path: '/transfers', requestId: 'req-42' });

    class Old {
      static failure(status: number, message: string) {
        return { oops: message, s: status };
      }
    }
    const old = new App({ log: () => {} }).controllers(TransfersController).failures(Old);
    expect((await post(old, { to: 'bob', amount: 11 })).body).toBe(
      '{"oops":"the balance is too low","s":422}',
    );
  });

  it('the document names the Problem schema under application/problem+json', async () => {
    const app = new App({ log: () => {} }).controllers(TransfersController).failures(Problem);
    const doc = app.document() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
      components: { schemas: Record<string, { required?: string[] }> };
    };
    const r400 = doc.paths['/transfers']!.post!.responses['400']!;
    expect(r400.content).toEqual({
      'application/problem+json': { schema: { $ref: '#/components/schemas/Failure' } },
    });
    expect(doc.components.schemas.Failure!.required).toEqual([
      'type',
      'title',
      'status',
      'detail',
      'instance',
      'code',
      'requestId',
    ]);
  });
});

class Refused {
  @IsString() reason!: string;
}

const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096 });
let runs = 0;

@Controller('/pay')
class PayController {
  @Post('/failing')
  @Idempotent(Payments, { by: () => 'one' })
  @Returns(Receipt)
  failing(): Receipt {
    runs++;
    throw fail.unprocessable({ code: 'InsufficientFunds', details: { run: runs } });
  }

  @Post('/declared')
  @Idempotent(Payments, { by: () => 'one' })
  @Returns(Reply({ 201: Receipt, 422: Refused }))
  declared() {
    runs++;
    return reply(422, { reason: `run ${runs}` });
  }
}

describe('idempotency keeps declared answers, never structured failures', () => {
  it('a retry of a coded failure runs again; a declared Reply variant is replayed', async () => {
    const app = new App({ log: () => {} })
      .controllers(PayController)
      .provide(Payments.open(new MemoryStore({ bytes: 1 << 20 })))
      .failures(Problem);
    const send = (url: string) =>
      app.inject({ method: 'POST', url, headers: { 'idempotency-key': 'k1' } });
    runs = 0;
    const a = await send('/pay/failing');
    const b = await send('/pay/failing');
    expect([a.status, b.status]).toEqual([422, 422]);
    expect([a.json<{ run: number }>().run, b.json<{ run: number }>().run]).toEqual([1, 2]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const c = await send('/pay/declared');
    const d = await send('/pay/declared');
    expect([c.body, d.body]).toEqual(['{"reason":"run 3"}', '{"reason":"run 3"}']);
    expect(d.headers['idempotent-replayed']).toBe('true');
  });
});
