// The run-time checks of answers, over a real socket: what the types cannot
// see (a value cast past them, a handler compiled elsewhere) is a 500 naming the route, logged,
// and the undeclared status never goes out.
import { IsInt, IsString } from 'class-validator';
import { App, Controller, Get, NoContent, Post, Reply, Returns } from 'fw-http';

/** True once a log line holds `text` (as it is escaped inside the JSON line). 500 bodies say only `internal server error`, the detail goes to the log. */
async function logged(lines: readonly string[], text: string): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  const escaped = JSON.stringify(text).slice(1, -1);
  return lines.some((l) => l.includes(escaped));
}

class Booking {
  @IsInt() id!: number;
  @IsString() status!: string;
}
class Taken {
  @IsString() reason!: string;
}

@Controller('/b')
class Bookings {
  @Post('/declared') @Returns(Reply({ 200: Booking, 409: Taken })) declared() {
    return { status: 409 as const, value: { reason: 'taken' } };
  }
  @Post('/undeclared') @Returns(Reply({ 200: Booking, 409: Taken })) undeclared() {
    return { status: 404, value: { id: 1, status: 'gone' } } as never;
  }
  @Post('/not-a-status') @Returns(Reply({ 200: Booking })) notAStatus() {
    return { status: 999, value: null } as never;
  }
  @Post('/bare') @Returns(Reply({ 200: Booking })) async bare() {
    return { id: 7, status: 'confirmed' } as never;
  }
  @Post('/listed') @Returns(Reply(Booking, { statuses: [200, 202] })) listed() {
    return { status: 201, value: { id: 1, status: 'new' } } as never;
  }
  // Sync with an inferred type: nothing at build can see the value (an async one is refused).
  @Get('/plain') plain() {
    return { id: 7, status: 'confirmed' } as unknown as void;
  }
  @Post('/nothing') @Returns(NoContent) async nothing(): Promise<void> {}
}

describe('run-time checks of answers, over a real socket', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(Bookings);
  let url = '';
  beforeAll(async () => {
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  const send = async (method: string, path: string) => {
    const res = await fetch(url + path, { method });
    return { status: res.status, body: await res.text() };
  };
  const error = (body: string) => (JSON.parse(body) as { error: string }).error;

  it('ANS-45 a Reply status its map declares goes out as it is', async () => {
    expect(await send('POST', '/b/declared')).toEqual({
      status: 409,
      body: '{"reason":"taken"}',
    });
  });

  it('ANS-45 a Reply status its map does not declare is a 500 naming the route and the status, logged; never sent', async () => {
    const r = await send('POST', '/b/undeclared');
    expect(r.status).toBe(500);
    expect(error(r.body)).toBe('internal server error');
    expect(
      await logged(
        lines,
        'POST /b/undeclared (Bookings.undeclared): answered 404, which its @Returns(Reply(...)) does not declare (200, 409): add it to the Reply or answer a declared status',
      ),
    ).toBe(true);
    expect(lines.some((l) => l.includes('Bookings.undeclared') && l.includes('answered 404'))).toBe(
      true,
    );
  });

  it('ANS-45 a status that is no HTTP status (999) is a 500 too, never HTTP 999', async () => {
    const r = await send('POST', '/b/not-a-status');
    expect(r.status).toBe(500);
    expect(error(r.body)).toBe('internal server error');
    expect(await logged(lines, 'POST /b/not-a-status (Bookings.notAStatus): answered 999')).toBe(
      true,
    );
  });

  it('ANS-45 a Reply with a statuses list checks against the list', async () => {
    const r = await send('POST', '/b/listed');
    expect(r.status).toBe(500);
    expect(error(r.body)).toBe('internal server error');
    expect(
      await logged(
        lines,
        'answered 201, which its @Returns(Reply(...)) does not declare (200, 202)',
      ),
    ).toBe(true);
  });

  it('ANS-46 a Reply route that returns a bare value (with a status field of its own) is a 500 naming the route, not a reset connection', async () => {
    const r = await send('POST', '/b/bare');
    expect(r.status).toBe(500);
    expect(error(r.body)).toBe('internal server error');
    expect(
      await logged(
        lines,
        'POST /b/bare (Bookings.bare): a Reply route returned an object, not { status, value }: return { status: 200, value }',
      ),
    ).toBe(true);
    // The connection lived on: the next request on the same server is answered.
    expect((await send('POST', '/b/declared')).status).toBe(409);
  });

  it('REF-38 a route with no @Returns that returns a value is a 500 naming the route; one returning nothing answers 204', async () => {
    const r = await send('GET', '/b/plain');
    expect(r.status).toBe(500);
    expect(error(r.body)).toBe('internal server error');
    expect(
      await logged(
        lines,
        'GET /b/plain (Bookings.plain): returned an object but declares no @Returns, so it answers 204: declare @Returns(...) or return nothing',
      ),
    ).toBe(true);
    expect(await send('POST', '/b/nothing')).toEqual({ status: 204, body: '' });
  });
});
