import 'reflect-metadata';
import {
  IsBoolean,
  IsEnum,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  Min,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import { compileReader } from '../../../lib/http/schema';
import type { Read } from '../../../lib/http/schema';

enum Level {
  Low = 1,
  High = 2,
}

class Search {
  @IsString() @MaxLength(10) q!: string;
  @IsOptional() @IsInt() @Min(1) @Max(100) qty?: number;
  @IsOptional() @IsNumber() price?: number;
  @IsOptional() @IsBoolean() inStock?: boolean;
  @IsOptional() @IsInt({ each: true }) ids?: number[];
  @IsOptional() @IsString({ each: true }) tags?: string[];
  @IsOptional() @IsEnum(Level) level?: Level;
  @IsOptional() @IsIn(['asc', 'desc']) order?: string;
  @IsOptional() @IsInt() page: number = 1;
}

const read = compileReader(Search, { source: 'query' });

function value(r: Read): Record<string, unknown> {
  if (!r.ok) throw new Error(r.message);
  return { ...r.value };
}

function message(r: Read): string {
  if (r.ok) throw new Error('expected a refusal');
  return r.message;
}

describe('compileReader (query)', () => {
  it('converts each value by its declared kind', () => {
    const v = value(
      read({
        q: 'shoe',
        qty: '3',
        price: '9.5',
        inStock: 'true',
        ids: ['1', '22'],
        tags: 'a',
        level: '2',
        order: 'desc',
      }),
    );
    expect(v).toEqual({
      q: 'shoe',
      qty: 3,
      price: 9.5,
      inStock: true,
      ids: [1, 22],
      tags: ['a'],
      level: Level.High,
      order: 'desc',
      page: 1,
    });
  });

  it('reads booleans from true/false/1/0', () => {
    expect(value(read({ q: 'x', inStock: '1' })).inStock).toBe(true);
    expect(value(read({ q: 'x', inStock: '0' })).inStock).toBe(false);
    expect(value(read({ q: 'x', inStock: 'false' })).inStock).toBe(false);
  });

  it.each([
    ['qty', 'abc', 'must be an integer'],
    ['qty', '1.5', 'must be an integer'],
    ['qty', '', 'must be an integer'],
    ['qty', ' 1', 'must be an integer'],
    ['qty', '9007199254740993', 'must be an integer'],
    ['price', '0x10', 'must be a number'],
    ['price', 'Infinity', 'must be a number'],
    ['price', '1e999', 'must be a number'],
    ['inStock', 'yes', 'must be a boolean'],
    ['level', '3', 'must be one of the following values: 1, 2'],
    ['order', 'up', 'must be one of the following values: asc, desc'],
  ])(
    'CORE-23 a query value that does not fit its declared type is refused (%s=%j)',
    (name, raw, why) => {
      expect(read({ q: 'x', [name]: raw })).toEqual({
        ok: false,
        field: `query.${name}`,
        message: `query.${name}: ${why}`,
      });
    },
  );

  it('CORE-23 names the element of a repeated parameter that does not fit', () => {
    expect(message(read({ q: 'x', ids: ['1', 'two'] }))).toBe('query.ids[1]: must be an integer');
  });

  it('checks constraints after conversion', () => {
    expect(message(read({ q: 'x', qty: '101' }))).toBe('query.qty: must not be greater than 100');
    expect(message(read({ q: 'x'.repeat(11) }))).toBe(
      'query.q: must be shorter than or equal to 10 characters',
    );
  });

  it('refuses a scalar parameter given more than once, and takes a list of one', () => {
    expect(message(read({ q: ['a', 'b'] }))).toBe('query.q: must be a single value');
    expect(value(read({ q: ['a'] })).q).toBe('a');
  });

  it('names a missing required parameter and ignores unknown ones', () => {
    expect(read({ qty: '1' })).toEqual({
      ok: false,
      field: 'query.q',
      message: 'query.q: is required',
    });
    expect(value(read({ q: 'x', other: '1' }))).toEqual({ q: 'x', page: 1 });
  });

  it('is refused at compile time for a nested class, which a query string cannot carry', () => {
    class Inner {
      @IsString() a!: string;
    }
    class Nested {
      @ValidateNested() @Type(() => Inner) inner!: Inner;
    }
    expect(() => compileReader(Nested, { source: 'query' })).toThrow(
      /Nested\.inner: a query string carries only scalars/,
    );
  });
});
