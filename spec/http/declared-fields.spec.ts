import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsISO8601,
  IsNumber,
  IsOptional,
  IsString,
  ValidateNested,
} from 'class-validator';
import { request } from 'undici';
import { App, Controller, Get, Json, Optional, Param, Returns, Status, Union } from 'fw-http';

// the writer of a @Returns(Class) answer writes the class's declared fields, in
// declaration order, and nothing else.

class Address {
  @IsString() city!: string;
}

class Line {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

class Circle {
  @IsNumber() radius!: number;
  constructor(radius = 0) {
    this.radius = radius;
  }
}
class Square {
  @IsNumber() side!: number;
  constructor(side = 0) {
    this.side = side;
  }
}
const Shape = Union('Shape', { circle: Circle, square: Square }, { tag: 'kind' });
type Shape = InstanceType<typeof Shape>;

class PublicUser {
  @IsString() id!: string;
  @IsString() name!: string;
  @IsString() fullName!: string;
  @IsISO8601() createdAt!: string;
  @ValidateNested() @Type(() => Address) address!: Address;
  @ValidateNested({ each: true }) @Type(() => Line) lines!: Line[];
  @ValidateNested() @Type(() => Shape) shape!: Shape;
  @IsOptional() @IsString() nickname?: string | null;
}

/** What the database gives: more than the class declares. */
class UserRow {
  id = 'u1';
  name = 'Ada';
  passwordHash = '$argon2id$secret';
  createdAt = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  address = Object.assign(new Address(), { city: 'Paris', zip: '75001' });
  lines = [
    { sku: 'a', qty: 1, cost: 5 },
    { sku: 'b', qty: 2, cost: 7 },
  ];
  shape: unknown = Object.assign(new Circle(2), { secret: true });
  internalNotes = ['x'];
  get fullName(): string {
    return `${this.name} Lovelace`;
  }
  get token(): string {
    return 'getter-not-declared';
  }
  toJSON(): object {
    return { everything: this.passwordHash };
  }
}

@Json({ renameAll: 'kebab-case' })
class Spelled {
  @IsString() firstName!: string;
  @IsBoolean() isAdmin!: boolean;
}

class Strict {
  @IsInt() count!: number;
  @IsString() label!: string;
}

/** A class with no decorators: its fields are those `new Plain()` has. */
class Plain {
  constructor(
    readonly id: number = 0,
    readonly name: string = '',
  ) {}
}

@Controller()
class UsersController {
  @Get('/users/u1')
  @Returns(PublicUser)
  one() {
    return new UserRow() as unknown as PublicUser;
  }

  @Get('/users')
  @Returns([PublicUser])
  all() {
    return [new UserRow(), new UserRow()] as unknown as PublicUser[];
  }

  @Get('/maybe/{id}')
  @Returns(Optional(Status(201, PublicUser)))
  maybe(@Param('id') id: string) {
    return id === 'none' ? null : (new UserRow() as unknown as PublicUser);
  }

  @Get('/spelled')
  @Returns(Spelled)
  spelled() {
    return { firstName: 'Ada', isAdmin: false, lastName: 'L' };
  }

  @Get('/strict/{what}')
  @Returns(Strict)
  strict(@Param('what') what: string) {
    if (what === 'missing') return { count: 1 } as Strict;
    if (what === 'string') return { count: '1', label: 'x' } as unknown as Strict;
    if (what === 'null') return { count: 1, label: null } as unknown as Strict;
    return { count: 1, label: 'ünï' };
  }

  @Get('/deep')
  @Returns(PublicUser)
  deep() {
    const row = new UserRow();
    row.lines = [row.lines[0]!, { sku: 'b', qty: '2' as unknown as number, cost: 7 }];
    return row as unknown as PublicUser;
  }

  @Get('/plain')
  @Returns(Plain)
  plain() {
    return Object.assign(new Plain(7, 'p'), { hidden: 1 });
  }

  @Get('/shape/{k}')
  @Returns(Shape)
  shape(@Param('k') k: string) {
    return (k === 'plain' ? { kind: 'square', side: 3, extra: 1 } : new Circle(1)) as Shape;
  }
}

const EXPECTED = {
  id: 'u1',
  name: 'Ada',
  fullName: 'Ada Lovelace',
  createdAt: '2026-01-02T03:04:05.000Z',
  address: { city: 'Paris' },
  lines: [
    { sku: 'a', qty: 1 },
    { sku: 'b', qty: 2 },
  ],
  shape: { kind: 'circle', radius: 2 },
};

describe('only declared fields leave the server', () => {
  let app: App;
  let base: string;
  const lines: string[] = [];
  beforeAll(async () => {
    app = new App({ log: (l) => void lines.push(l), logDroppedFields: true }).controllers(
      UsersController,
    );
    base = `http://127.0.0.1:${(await app.listen({ port: 0 })).port}`;
  });
  afterAll(() => app.close());

  const get = async (path: string) => {
    const res = await request(base + path);
    const text = await res.body.text();
    return { status: res.statusCode, text, length: res.headers['content-length'] };
  };

  it('writes the declared fields of a returned entity in declaration order, nothing else', async () => {
    const { status, text, length } = await get('/users/u1');
    expect(status).toBe(200);
    expect(text).toBe(JSON.stringify(EXPECTED));
    expect(length).toBe(String(Buffer.byteLength(text)));
    expect(text).not.toContain('argon2');
    expect(text).not.toContain('getter-not-declared');
    expect(text).not.toContain('everything');
  });

  it('writes an array of classes, and through Optional and Status', async () => {
    expect(JSON.parse((await get('/users')).text)).toEqual([EXPECTED, EXPECTED]);
    const some = await get('/maybe/u1');
    expect(some.status).toBe(201);
    expect(some.text).toBe(JSON.stringify(EXPECTED));
    expect((await get('/maybe/none')).status).toBe(404);
  });

  it('logs each dropped field once per route and field, naming both', async () => {
    await get('/users/u1');
    await get('/users/u1');
    const dropped = lines.filter(
      (l) => l.includes('left') && l.includes('GET /users/u1 (UsersController.one)'),
    );
    const fields = dropped.map((l) => /left (\S+) out/.exec(l)?.[1]).sort();
    expect(fields).toEqual([
      'Address.zip',
      'Circle.secret',
      'Line.cost',
      'PublicUser.internalNotes',
      'PublicUser.passwordHash',
    ]);
  });

  it('spells @Json names and leaves out what the marked class does not declare', async () => {
    expect((await get('/spelled')).text).toBe('{"first-name":"Ada","is-admin":false}');
  });

  it('a tagged union at the top: by class, or a plain object by its tag', async () => {
    expect((await get('/shape/c')).text).toBe('{"kind":"circle","radius":1}');
    expect((await get('/shape/plain')).text).toBe('{"kind":"square","side":3}');
  });

  it('a class without decorators writes the fields new Class() has', async () => {
    expect((await get('/plain')).text).toBe('{"id":7,"name":"p"}');
  });

  it('a required field missing, of another kind or null is a 500 naming route and field', async () => {
    for (const [what, said] of [
      ['missing', 'Strict.label is missing'],
      ['string', 'Strict.count is a string, declared an integer'],
      ['null', 'Strict.label is null'],
    ] as const) {
      const before = lines.length;
      const r = await get(`/strict/${what}`);
      expect(r.status).toBe(500);
      // A 5xx body says nothing of the server; the log names the route and the field.
      expect(JSON.parse(r.text)).toEqual({ error: 'internal server error', status: 500 });
      await new Promise((f) => setImmediate(f));
      const logged = lines.slice(before).join('\n');
      expect(logged).toContain('GET /strict/{what} (UsersController.strict)');
      expect(logged).toContain(said);
      expect(logged).toContain('AnswerMismatch');
    }
    const before = lines.length;
    const deep = await get('/deep');
    expect(deep.status).toBe(500);
    expect(JSON.parse(deep.text).error).toBe('internal server error');
    await new Promise((f) => setImmediate(f));
    expect(lines.slice(before).join('\n')).toContain(
      "GET /deep (UsersController.deep): the answer's PublicUser.lines[1].qty is a string, declared an integer",
    );
    const ok = await get('/strict/ok');
    expect(ok.text).toBe('{"count":1,"label":"ünï"}');
    expect(ok.length).toBe(String(Buffer.byteLength(ok.text)));
  });
});

describe('in production nothing is logged, and the field is still dropped', () => {
  it('logDroppedFields: false drops silently', async () => {
    const lines: string[] = [];
    const app = new App({ log: (l) => void lines.push(l), logDroppedFields: false }).controllers(
      UsersController,
    );
    const res = await app.inject({ url: '/users/u1' });
    expect(res.body).toBe(JSON.stringify(EXPECTED));
    await new Promise((f) => setImmediate(f));
    expect(lines.filter((l) => l.includes('left'))).toEqual([]);
  });
});
