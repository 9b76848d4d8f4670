import { IsDateString, IsISO8601, IsOptional, isISO8601 } from 'class-validator';
import { App, Body, Controller, Ctx, Get, Param, Post, Query, Returns, fail } from 'fw-http';
import { type OpenApiDocument } from 'fw-http/openapi';

/** The document says what the wire does: a client built from it accepts and expects what the server does. */

type Operation = {
  security?: Record<string, string[]>[];
  responses: Record<
    string,
    { description: string; headers?: Record<string, { schema: unknown; example?: unknown }> }
  >;
};
const op = (doc: OpenApiDocument, path: string, method: string): Operation => {
  const o = doc.paths[path]?.[method];
  if (!o) throw new Error(`no ${method} ${path} in the document`);
  return o as unknown as Operation;
};
type Schema = { type?: unknown; format?: string; pattern?: string };
const property = (doc: OpenApiDocument, cls: string, name: string): Schema =>
  (doc.components.schemas[cls] as { properties: Record<string, Schema> }).properties[name];

// ---- OAS-20: dates

class Booking {
  @IsISO8601() day!: string;
  @IsDateString() at!: string;
  @IsISO8601({ strictSeparator: true }) strict!: string;
}

class Window {
  @IsOptional() @IsISO8601() from?: string;
}

@Controller('/bookings')
class BookingsController {
  @Post()
  @Returns(Booking)
  create(@Body() b: Booking): Booking {
    return b;
  }

  @Get()
  @Returns(String)
  list(@Query() w: Window): string {
    return w.from ?? 'any';
  }
}

/** Every shape of ISO 8601 validator.js knows, and near misses, combined piece by piece. */
function isoCorpus(): string[] {
  const years = ['2024', '+2024', '-0001', '0000', '20245', '202'];
  const dates = ['', '-05', '05', '-05-01', '0501', '-0501', '05-01', '-13', '-05-32', '-02-30'];
  const weeks = ['-W01', 'W01', '-W53-7', 'W537', '-W54', '-W01-8', '-060', '060', '-366', '-367'];
  const seps = ['', 'T', ' ', 't', '\t'];
  const times = [
    '',
    '10',
    '1030',
    '10:30',
    '10:30:15',
    '103015',
    '10:3015',
    '24:00',
    '25:00',
    '10:30:15.123',
    '10,5',
    '10:30.5:15',
    '10:60',
  ];
  const zones = ['', 'Z', 'z', '+02', '+0200', '+02:00', '-1130', '+24', '+02:0'];
  const out = ['', 'yesterday', '2024-05-01T10:30:00Z ', ' 2024'];
  for (const y of years)
    for (const d of [...dates, ...weeks])
      for (const s of seps)
        for (const t of s === '' ? [''] : times)
          for (const z of s === '' ? [''] : zones) out.push(`${y}${d}${s}${t}${z}`);
  return out;
}

describe('OAS-20 @IsISO8601() and @IsDateString() are documented as what the reader takes', () => {
  const app = new App().controllers(BookingsController);
  const doc = app.document();

  it('as a string with a pattern, never format: date-time (the reader takes a date or a year alone)', () => {
    for (const name of ['day', 'at', 'strict']) {
      const s = property(doc, 'Booking', name);
      expect(s.type).toBe('string');
      expect(s).not.toHaveProperty('format');
      expect(typeof s.pattern).toBe('string');
    }
    const from = (doc.paths['/bookings'].get as { parameters: { name: string; schema: Schema }[] })
      .parameters[0];
    expect(from).toMatchObject({ name: 'from', schema: { type: 'string' } });
    expect(from.schema).not.toHaveProperty('format');
    expect(from.schema.pattern).toBe(property(doc, 'Booking', 'day').pattern);
  });

  it('the pattern takes every text the reader takes (a JSON Schema pattern, unicode mode)', () => {
    const loose = new RegExp(property(doc, 'Booking', 'day').pattern!, 'u');
    const strict = new RegExp(property(doc, 'Booking', 'strict').pattern!, 'u');
    const corpus = isoCorpus();
    let taken = 0;
    for (const text of corpus) {
      if (isISO8601(text)) {
        taken++;
        expect([text, loose.test(text)]).toEqual([text, true]);
      }
      if (isISO8601(text, { strictSeparator: true }))
        expect([text, strict.test(text)]).toEqual([text, true]);
    }
    // The corpus reaches the interesting cases, and the pattern still refuses what is not a date.
    expect(taken).toBeGreaterThan(1000);
    expect([loose.test('2024-05-01 10:00'), strict.test('2024-05-01 10:00')]).toEqual([
      true,
      false,
    ]);
    for (const text of ['yesterday', '', '2024-13-01', '2024-05-01T25:00', '24'])
      expect([text, loose.test(text)]).toEqual([text, false]);
  });

  it('a date without time passes the document and the server alike', async () => {
    const pattern = new RegExp(property(doc, 'Booking', 'day').pattern!, 'u');
    const sent = { day: '2024-05-01', at: '2024-05', strict: '2024-05-01T10:30Z' };
    for (const v of Object.values(sent)) expect(pattern.test(v)).toBe(true);
    const res = await app.inject({ method: 'POST', url: '/bookings', body: sent });
    expect(res.status).toBe(200);
    expect((await app.inject({ url: '/bookings?from=2024-05-01' })).body).toBe('2024-05-01');
    const refused = await app.inject({
      method: 'POST',
      url: '/bookings',
      body: { ...sent, day: 'May 1st' },
    });
    expect(refused.status).toBe(400);
    expect(pattern.test('May 1st')).toBe(false);
  });
});

// ---- OAS-21: 400 only where it can come

@Controller('/shelves')
class ShelvesController {
  @Get('/{shelf}/books/{title}')
  @Returns(String)
  book(@Param('shelf') shelf: string, @Param('title') title: string): string {
    return `${shelf}/${title}`;
  }

  @Get('/{n}')
  @Returns(String)
  numbered(@Param('n') n: number): string {
    return String(n);
  }

  @Get('/{shelf}/open')
  @Returns(String)
  open(@Param('shelf') shelf: string, @Query('as') as: string | null): string {
    return `${shelf}:${as ?? ''}`;
  }

  @Get('/{shelf}/flag')
  @Returns(String)
  flag(@Param('shelf') shelf: string, @Query('on') on: boolean): string {
    return `${shelf}:${on}`;
  }
}

describe('OAS-21 a 400 is listed only when an argument can be refused, with why', () => {
  const app = new App({ maxParams: 4 }).controllers(ShelvesController);
  const doc = app.document();

  it('a GET whose only parameters are text path parameters lists no 400, and none comes', async () => {
    expect(op(doc, '/shelves/{shelf}/books/{title}', 'get').responses).not.toHaveProperty('400');
    for (const path of [
      '/shelves/a/books/b',
      '/shelves/%E2%82%AC/books/%20',
      '/shelves/1.5/books/true',
      '/shelves/a/books/b?x=1&x=2&y&z=%zz&w=5&v=6',
    ])
      expect([path, (await app.inject({ url: path })).status]).toEqual([path, 200]);
  });

  it('a number path parameter lists 400 saying so, and the wire agrees', async () => {
    expect(op(doc, '/shelves/{n}', 'get').responses['400'].description).toBe(
      'Bad Request: path param "n" is not a number',
    );
    expect((await app.inject({ url: '/shelves/abc' })).status).toBe(400);
  });

  it('a query parameter lists 400 for too many parameters (maxParams), and for a type it converts to', async () => {
    expect(op(doc, '/shelves/{shelf}/open', 'get').responses['400'].description).toBe(
      'Bad Request: the query has more parameters than the app allows (maxParams)',
    );
    expect((await app.inject({ url: '/shelves/a/open?as=x' })).status).toBe(200);
    expect((await app.inject({ url: '/shelves/a/open?as=x&b&c&d&e' })).status).toBe(400);
    expect(op(doc, '/shelves/{shelf}/flag', 'get').responses['400'].description).toBe(
      'Bad Request: query param "on" is not a boolean (true or false); the query has more parameters than the app allows (maxParams)',
    );
    expect((await app.inject({ url: '/shelves/a/flag?on=maybe' })).status).toBe(400);
  });
});

// ---- OAS-22: who may call

class Member {
  static authorization = 'bearer' as const;
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Member {
    const token = c.authorization('bearer').value;
    if (token !== 'good') throw fail.challenge('bearer', 'unknown bearer token');
    return new Member(token);
  }
}

/** Inherits the scheme with the resolver. */
class Staff extends Member {}

class Operator {
  static authorization = 'basic';
  static resolve(c: Ctx): Operator {
    c.authorization('basic');
    return new Operator();
  }
}

class Guest {
  static resolve(): Guest {
    return new Guest();
  }
}

@Controller('/club')
class ClubController {
  @Get('/me')
  @Returns(String)
  me(member: Member): string {
    return member.id;
  }

  @Get('/staff')
  @Returns(String)
  staff(s: Staff, o: Operator): string {
    void o;
    return s.id;
  }

  @Get('/guest')
  @Returns(String)
  guest(g: Guest): string {
    void g;
    return 'hi';
  }
}

describe('OAS-22 a resolved class with static authorization is documented as needing that scheme', () => {
  const app = new App().controllers(ClubController);
  const doc = app.document();

  it('lists the security scheme, the requirement and the 401 with WWW-Authenticate, as @Authorization does', () => {
    expect(doc.components.securitySchemes).toEqual({
      basic: { type: 'http', scheme: 'basic' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    const me = op(doc, '/club/me', 'get');
    expect(me.security).toEqual([{ bearer: [] }]);
    expect(me.responses['401'].description).toBe(
      'Unauthorized: the Authorization header is missing or not Bearer; the caller could not be worked out',
    );
    expect(me.responses['401'].headers!['WWW-Authenticate']).toMatchObject({ example: 'Bearer' });
    // Both schemes must be sent: one requirement object (AND); a subclass keeps its parent's scheme.
    expect(op(doc, '/club/staff', 'get').security).toEqual([{ bearer: [], basic: [] }]);
  });

  it('a resolved class that names no scheme claims none, but may still answer 401', () => {
    const guest = op(doc, '/club/guest', 'get');
    expect(guest).not.toHaveProperty('security');
    expect(guest.responses['401'].headers).toBeUndefined();
  });

  it('the wire says the same: no token → 401 with WWW-Authenticate: Bearer; a good token → 200', async () => {
    const none = await app.inject({ url: '/club/me' });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const ok = await app.inject({ url: '/club/me', headers: { authorization: 'Bearer good' } });
    expect([ok.status, ok.body]).toEqual([200, 'good']);
  });

  it('a scheme other than bearer or basic is named when the document is built', () => {
    class Odd {
      static authorization = 'Bearer';
      static resolve(): Odd {
        return new Odd();
      }
    }
    @Controller()
    class OddController {
      @Get('/odd')
      @Returns(String)
      odd(o: Odd): string {
        void o;
        return 'x';
      }
    }
    expect(() => new App().controllers(OddController).document()).toThrow(
      `Odd.authorization must be 'bearer' or 'basic' (the scheme its resolve reads), got "Bearer"`,
    );
  });
});
