import 'reflect-metadata';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsDateString,
  IsDefined,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsISO8601,
  IsNegative,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import { compileReader, readShape } from '../../../lib/http/schema';
import type { Read } from '../../../lib/http/schema';

class Line {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

function message(r: Read): string {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.value)}`);
  return r.message;
}

function value<T>(r: Read): T {
  if (!r.ok) throw new Error(`expected a value, got ${r.message}`);
  return r.value as T;
}

describe('compileReader (body)', () => {
  const read = compileReader(Line, { source: 'body' });

  it('builds an instance of the class from a valid body', () => {
    const v = value<Line>(read({ sku: 'A-1', qty: 3 }));
    expect(v).toBeInstanceOf(Line);
    expect({ ...v }).toEqual({ sku: 'A-1', qty: 3 });
  });

  it('OPEN-62 ignores unknown fields: not copied, not refused', () => {
    const v = value<Line>(read({ sku: 'A-1', qty: 3, admin: true, __proto__x: 1 }));
    expect(Object.keys(v)).toEqual(['sku', 'qty']);
  });

  it('CORE-25 names the first failing field in declaration order', () => {
    const r = read({ sku: 5, qty: 'x' });
    expect(r).toEqual({ ok: false, field: 'body.sku', message: 'body.sku: must be a string' });
    expect(message(read({ sku: 'A', qty: 1.5 }))).toBe('body.qty: must be an integer');
    expect(message(read({ sku: 'A', qty: 500 }))).toBe('body.qty: must not be greater than 100');
    expect(message(read({ sku: 'A', qty: 0 }))).toBe('body.qty: must not be less than 1');
    expect(message(read({ sku: '', qty: 1 }))).toBe(
      'body.sku: must be longer than or equal to 1 characters',
    );
    expect(message(read({ sku: 'x'.repeat(33), qty: 1 }))).toBe(
      'body.sku: must be shorter than or equal to 32 characters',
    );
  });

  it('CORE-25 a missing required field is named as required', () => {
    expect(read({ qty: 1 })).toEqual({
      ok: false,
      field: 'body.sku',
      message: 'body.sku: is required',
    });
  });

  it('refuses JSON null, an array or a scalar at the top as not a JSON object', () => {
    for (const input of [null, [], 'x', 3, true, undefined]) {
      expect(read(input)).toEqual({
        ok: false,
        field: 'body',
        message: 'body: must be a JSON object',
      });
    }
  });

  it('refuses null for a required field with the kind message', () => {
    expect(message(read({ sku: null, qty: 1 }))).toBe('body.sku: must be a string');
  });

  it('counts characters as class-validator does (a surrogate pair is one)', () => {
    expect(value<Line>(read({ sku: '😀'.repeat(32), qty: 1 })).sku).toHaveLength(64);
    expect(message(read({ sku: '😀'.repeat(33), qty: 1 }))).toBe(
      'body.sku: must be shorter than or equal to 32 characters',
    );
  });
});

describe('compileReader checks every supported decorator', () => {
  enum Colour {
    Red = 'red',
    Blue = 'blue',
  }
  enum Level {
    Low,
    High,
  }
  class All {
    @IsOptional() @IsEmail() email?: string;
    @IsOptional() @IsUUID('4') id?: string;
    @IsOptional() @IsISO8601() at?: string;
    @IsOptional() @IsDateString() on?: string;
    @IsOptional() @IsPositive() pos?: number;
    @IsOptional() @IsNegative() neg?: number;
    @IsOptional() @IsNumber({ maxDecimalPlaces: 2 }) price?: number;
    @IsOptional() @IsBoolean() flag?: boolean;
    @IsOptional() @IsIn(['a', 'b']) mode?: string;
    @IsOptional() @IsEnum(Colour) colour?: Colour;
    @IsOptional() @IsEnum(Level) level?: Level;
    @IsOptional() @Matches(/^[A-Z]{3}$/) code?: string;
    @IsOptional() @MinLength(2) @MaxLength(4) word?: string;
    @IsOptional() @IsNotEmpty() name?: string;
    @IsOptional() @IsArray() @ArrayMinSize(2) @ArrayMaxSize(3) pair?: unknown[];
    @IsOptional() @ArrayNotEmpty() list?: string[];
    @IsOptional() @IsString({ each: true }) @MaxLength(3, { each: true }) tags?: string[];
    @IsOptional() @IsObject() meta?: Record<string, unknown>;
    @IsOptional() @IsDefined() anything?: unknown;
    @IsOptional() @Allow() free?: unknown;
  }
  const read = compileReader(All, { source: 'body' });

  it('compiles all of them (no fallback)', () => {
    expect(readShape(All).fallback).toBeNull();
  });
  const cases: [string, unknown, string | null][] = [
    ['email', 'a@b.co', null],
    ['email', 'a@b', 'must be an email'],
    ['id', '3b241101-e2bb-4255-8caf-4136c566a962', null],
    ['id', 'nope', 'must be a UUID'],
    ['at', '2024-05-01T10:00:00Z', null],
    ['at', 'yesterday', 'must be a valid ISO 8601 date string'],
    ['on', '2024-05-01', null],
    ['on', '01/05/2024', 'must be a valid ISO 8601 date string'],
    ['pos', 1, null],
    ['pos', 0, 'must be a positive number'],
    ['neg', -1, null],
    ['neg', 0, 'must be a negative number'],
    ['price', 1.25, null],
    ['price', 1.255, 'must have at most 2 decimal places'],
    ['price', '1', 'must be a number'],
    ['flag', false, null],
    ['flag', 'false', 'must be a boolean'],
    ['mode', 'b', null],
    ['mode', 'c', 'must be one of the following values: a, b'],
    ['colour', 'red', null],
    ['colour', 'Red', 'must be one of the following values: red, blue'],
    ['level', 1, null],
    ['level', 'High', 'must be one of the following values: 0, 1'],
    ['code', 'EUR', null],
    ['code', 'eur', 'must match /^[A-Z]{3}$/ regular expression'],
    ['word', 'abc', null],
    ['word', 'a', 'must be longer than or equal to 2 characters'],
    ['word', 'abcde', 'must be shorter than or equal to 4 characters'],
    ['name', 'x', null],
    ['name', '', 'should not be empty'],
    ['pair', [1, 'x'], null],
    ['pair', [1], 'must contain at least 2 elements'],
    ['pair', [1, 2, 3, 4], 'must contain no more than 3 elements'],
    ['pair', 'ab', 'must be an array'],
    ['list', ['x'], null],
    ['list', [], 'should not be empty'],
    ['tags', ['a', 'bc'], null],
    ['meta', { a: 1 }, null],
    ['meta', [1], 'must be an object'],
    ['anything', 0, null],
    ['free', { any: ['thing'] }, null],
  ];
  it.each(cases)('%s = %j → %s', (field, input, why) => {
    const r = read({ [field]: input });
    if (why === null)
      expect(r).toEqual({ ok: true, value: expect.objectContaining({ [field]: input }) });
    else expect(r).toEqual({ ok: false, field: `body.${field}`, message: `body.${field}: ${why}` });
  });

  it('checks each element of an `each` list and names its index', () => {
    expect(message(read({ tags: ['a', 5] }))).toBe('body.tags[1]: must be a string');
    expect(message(read({ tags: ['a', 'long'] }))).toBe(
      'body.tags[1]: must be shorter than or equal to 3 characters',
    );
  });

  it('@IsOptional accepts a missing value and null, and keeps null', () => {
    expect(value<All>(read({}))).toEqual({});
    const v = value<All>(read({ email: null }));
    expect(v.email).toBeNull();
  });
});

describe('compileReader nested classes and arrays', () => {
  class Address {
    @IsString() city!: string;
    @IsOptional() @IsString() zip?: string;
  }
  class Order {
    @ValidateNested({ each: true }) @Type(() => Line) @ArrayMinSize(1) items!: Line[];
    @ValidateNested() address!: Address;
    @IsOptional() @ValidateNested() @Type(() => Address) billing?: Address;
  }
  const read = compileReader(Order, { source: 'body' });
  const good = {
    items: [
      { sku: 'A', qty: 1 },
      { sku: 'B', qty: 2, extra: 1 },
    ],
    address: { city: 'Oslo', street: 'x' },
  };

  it('instantiates nested classes recursively and ignores their unknown fields', () => {
    const v = value<Order>(read(good));
    expect(v).toBeInstanceOf(Order);
    expect(v.items[1]).toBeInstanceOf(Line);
    expect({ ...v.items[1] }).toEqual({ sku: 'B', qty: 2 });
    expect(v.address).toBeInstanceOf(Address);
    expect({ ...v.address }).toEqual({ city: 'Oslo' });
    expect('billing' in v).toBe(false);
  });

  it('CORE-25 names the path of the first failing nested field', () => {
    const items = [
      { sku: 'A', qty: 1 },
      { sku: 'B', qty: 1 },
      { sku: 7, qty: 1 },
    ];
    expect(read({ ...good, items })).toEqual({
      ok: false,
      field: 'body.items[2].sku',
      message: 'body.items[2].sku: must be a string',
    });
    expect(message(read({ ...good, items: [{ sku: 'A' }] }))).toBe(
      'body.items[0].qty: is required',
    );
    expect(message(read({ ...good, address: { zip: '1' } }))).toBe(
      'body.address.city: is required',
    );
    expect(message(read({ ...good, address: 'Oslo' }))).toBe('body.address: must be an object');
    expect(message(read({ ...good, items: {} }))).toBe('body.items: must be an array');
    expect(message(read({ ...good, items: [] }))).toBe(
      'body.items: must contain at least 1 elements',
    );
    expect(message(read({ ...good, items: [{ sku: 'A', qty: 1 }], address: undefined }))).toBe(
      'body.address: is required',
    );
    expect(message(read({ ...good, items: [null] }))).toBe('body.items[0]: must be an object');
    expect(message(read({ ...good, billing: { city: 1 } }))).toBe(
      'body.billing.city: must be a string',
    );
  });

  it('a nested class without @ValidateNested is still read and checked', () => {
    class Holder {
      @IsNotEmpty() address!: Address;
    }
    const r = compileReader(Holder, { source: 'body' });
    expect(message(r({ address: { city: 3 } }))).toBe('body.address.city: must be a string');
    expect(value<Holder>(r({ address: { city: 'Oslo' } })).address).toBeInstanceOf(Address);
  });

  it('reads a class that refers to itself', () => {
    class Node {
      @IsString() name!: string;
      @IsOptional() @ValidateNested({ each: true }) @Type(() => Node) children?: Node[];
    }
    const r = compileReader(Node, { source: 'body' });
    const v = value<Node>(r({ name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }));
    expect(v.children![0].children![0]).toBeInstanceOf(Node);
    expect(message(r({ name: 'a', children: [{ name: 'b', children: [{}] }] }))).toBe(
      'body.children[0].children[0].name: is required',
    );
  });
});

describe('compileReader details', () => {
  it('uses field initializers as defaults for missing values', () => {
    class Page {
      @IsOptional() @IsInt() @Min(1) page: number = 1;
      @IsInt() size: number = 20;
      @IsOptional() @IsString({ each: true }) sort: string[] = ['id'];
    }
    const read = compileReader(Page, { source: 'body' });
    const a = value<Page>(read({}));
    expect({ ...a }).toEqual({ page: 1, size: 20, sort: ['id'] });
    const b = value<Page>(read({}));
    expect(b.sort).not.toBe(a.sort);
    expect(message(read({ page: 0 }))).toBe('body.page: must not be less than 1');
  });

  it('takes the kind from design:type when no type decorator is given', () => {
    class Typed {
      @IsNotEmpty() name!: string;
      @Min(0) count!: number;
      @Allow() on!: boolean;
    }
    const read = compileReader(Typed, { source: 'body' });
    expect(message(read({ name: 5, count: 1, on: true }))).toBe('body.name: must be a string');
    expect(message(read({ name: 'a', count: '1', on: true }))).toBe('body.count: must be a number');
    expect(message(read({ name: 'a', count: 1, on: 'yes' }))).toBe('body.on: must be a boolean');
    expect(message(read({ name: 'a', count: 1 }))).toBe('body.on: is required');
  });

  it('uses a decorator’s own message, without a leading property name', () => {
    class Custom {
      @IsString({ message: '$property must be text' }) sku!: string;
      @Max(10, { message: (a) => `${a.property} is over $constraint1 (got ${String(a.value)})` })
      qty!: number;
    }
    const read = compileReader(Custom, { source: 'body' });
    expect(message(read({ sku: 1, qty: 1 }))).toBe('body.sku: must be text');
    expect(message(read({ sku: 'a', qty: 11 }))).toBe('body.qty: is over 10 (got 11)');
  });

  it('reads inherited declarations', () => {
    class Base {
      @IsString() id!: string;
    }
    class Child extends Base {
      @IsInt() n!: number;
    }
    const read = compileReader(Child, { source: 'body' });
    const v = value<Child>(read({ id: 'a', n: 1 }));
    expect(v).toBeInstanceOf(Child);
    expect({ ...v }).toEqual({ id: 'a', n: 1 });
    expect(message(read({ n: 1 }))).toBe('body.id: is required');
  });

  it('does not read inherited Object.prototype members as input values, nor let __proto__ swap the prototype', () => {
    class Odd {
      @IsOptional() @IsString() __lookupGetter__?: string;
      @IsOptional() @IsString() ['__proto__']?: string;
    }
    const read = compileReader(Odd, { source: 'body' });
    expect({ ...value<Odd>(read({})) }).toEqual({});
    const v = value<Odd>(read(JSON.parse('{"__lookupGetter__":"x","__proto__":"y"}')));
    expect(v).toBeInstanceOf(Odd);
    expect(Object.getOwnPropertyDescriptor(v, '__lookupGetter__')?.value).toBe('x');
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toBe('y');
    expect(message(read(JSON.parse('{"__proto__":5}')))).toBe('body.__proto__: must be a string');
  });

  it('compiles a class once: the same reader behaviour for a second compile', () => {
    const a = compileReader(Line, { source: 'body' });
    const b = compileReader(Line, { source: 'body' });
    expect(a({ sku: 'x', qty: 1 })).toEqual(b({ sku: 'x', qty: 1 }));
  });
});
