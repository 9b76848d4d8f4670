import 'reflect-metadata';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  IsBoolean,
  IsDateString,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsISO8601,
  IsNegative,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  Min,
  Validate,
  ValidateNested,
  ValidatorConstraint,
} from 'class-validator';
import type { ValidatorConstraintInterface } from 'class-validator';
import { Type } from 'class-transformer';
import { readShape, scalarSchema, schemaOf, valueSchema } from '../../../lib/http/schema';

class Line {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

enum Status {
  Open = 'open',
  Closed = 'closed',
}

class Order {
  @IsEmail() email!: string;
  @ValidateNested({ each: true })
  @Type(() => Line)
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  lines!: Line[];
  @IsOptional() @IsString() note?: string;
  @IsEnum(Status) status!: Status;
  @IsOptional() @ValidateNested() @Type(() => Line) gift?: Line;
  @IsOptional() @IsInt() page: number = 1;
}

function components(...classes: Function[]): Map<string, object> {
  const m = new Map<string, object>();
  for (const c of classes) schemaOf(c, m);
  return m;
}

describe('schemaOf', () => {
  it('OAS-10 schema from class-validator metadata: a $ref and its component', () => {
    const m = new Map<string, object>();
    expect(schemaOf(Line, m)).toEqual({ $ref: '#/components/schemas/Line' });
    expect(m.get('Line')).toEqual({
      type: 'object',
      properties: {
        sku: { type: 'string', minLength: 1, maxLength: 32 },
        qty: { type: 'integer', minimum: 1, maximum: 100 },
      },
      required: ['sku', 'qty'],
    });
  });

  it('OAS-10 describes nested classes by $ref, arrays with items, optional fields as nullable and not required', () => {
    const m = components(Order);
    expect([...m.keys()]).toEqual(['Order', 'Line']);
    expect(m.get('Order')).toEqual({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        lines: {
          type: 'array',
          items: { $ref: '#/components/schemas/Line' },
          minItems: 1,
          maxItems: 50,
        },
        note: { type: ['string', 'null'] },
        status: { type: 'string', enum: ['open', 'closed'] },
        gift: { anyOf: [{ $ref: '#/components/schemas/Line' }, { type: 'null' }] },
        page: { type: ['integer', 'null'], default: 1 },
      },
      required: ['email', 'lines', 'status'],
    });
    expect(m.get('Order')).not.toHaveProperty('additionalProperties');
  });

  it('OAS-10 maps each supported decorator to its keywords', () => {
    enum Level {
      Low = 1,
      High = 2,
    }
    class Keywords {
      @IsUUID() id!: string;
      @IsISO8601() at!: string;
      @IsDateString() on!: string;
      @IsPositive() pos!: number;
      @IsNegative() neg!: number;
      @IsNumber() price!: number;
      @IsBoolean() flag!: boolean;
      @IsIn(['a', 'b']) mode!: string;
      @IsEnum(Level) level!: Level;
      @Matches(/^[A-Z]+$/) code!: string;
      @Matches(/^[a-z]+$/i) word!: string;
      @IsNotEmpty() name!: string;
      @ArrayNotEmpty() @IsString({ each: true }) tags!: string[];
      @Allow() free!: unknown;
    }
    expect(components(Keywords).get('Keywords')).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        // What isISO8601 takes (a date alone too), not format: date-time (OAS-20).
        at: { type: 'string', pattern: expect.stringMatching(/^\^\[\+-\]\?\\d\{4\}/) },
        on: { type: 'string', pattern: expect.stringMatching(/^\^\[\+-\]\?\\d\{4\}/) },
        pos: { type: 'number', exclusiveMinimum: 0 },
        neg: { type: 'number', exclusiveMaximum: 0 },
        price: { type: 'number' },
        flag: { type: 'boolean' },
        mode: { type: 'string', enum: ['a', 'b'] },
        level: { type: 'integer', enum: [1, 2] },
        code: { type: 'string', pattern: '^[A-Z]+$' },
        // A pattern that needs flags cannot be said in JSON Schema; it is left out.
        word: { type: 'string' },
        name: { type: 'string', minLength: 1 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        free: {},
      },
      required: [
        'id',
        'at',
        'on',
        'pos',
        'neg',
        'price',
        'flag',
        'mode',
        'level',
        'code',
        'word',
        'name',
        'tags',
        'free',
      ],
    });
  });

  it('gives a second class with a taken name a numbered suffix, deterministically', () => {
    const first = (() => {
      class Item {
        @IsString() a!: string;
      }
      return Item;
    })();
    const second = (() => {
      class Item {
        @IsInt() b!: number;
      }
      return Item;
    })();
    const m = new Map<string, object>();
    expect(schemaOf(first, m)).toEqual({ $ref: '#/components/schemas/Item' });
    expect(schemaOf(second, m)).toEqual({ $ref: '#/components/schemas/Item_2' });
    expect(schemaOf(first, m)).toEqual({ $ref: '#/components/schemas/Item' });
    expect(m.get('Item_2')).toEqual({
      type: 'object',
      properties: { b: { type: 'integer' } },
      required: ['b'],
    });
    // A name already in the document (the framework's own Failure) is taken too.
    const other = new Map<string, object>([['Item', { type: 'string' }]]);
    expect(schemaOf(first, other)).toEqual({ $ref: '#/components/schemas/Item_2' });
  });

  it('describes a class that refers to itself', () => {
    class Tree {
      @IsString() name!: string;
      @IsOptional() @ValidateNested({ each: true }) @Type(() => Tree) children?: Tree[];
    }
    const m = components(Tree);
    expect(m.get('Tree')).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: ['array', 'null'], items: { $ref: '#/components/schemas/Tree' } },
      },
      required: ['name'],
    });
  });

  it('still describes a class that falls back, from what it can read', () => {
    @ValidatorConstraint({ name: 'isOdd' })
    class IsOdd implements ValidatorConstraintInterface {
      validate(v: unknown): boolean {
        return typeof v === 'number' && v % 2 === 1;
      }
    }
    class Odd {
      @IsInt() @Min(1) @Validate(IsOdd) n!: number;
    }
    expect(readShape(Odd).fallback).not.toBeNull();
    expect(components(Odd).get('Odd')).toEqual({
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 } },
      required: ['n'],
    });
  });

  it('gives one property’s value schema for query parameters', () => {
    const m = new Map<string, object>();
    const qty = readShape(Line).properties[1];
    expect(valueSchema(qty.value, m)).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('makes the document JSON without loss', () => {
    const m = components(Order);
    const doc = Object.fromEntries(m);
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});

describe('scalarSchema', () => {
  it('describes String, Number and Boolean parameter types', () => {
    expect(scalarSchema(String)).toEqual({ type: 'string' });
    expect(scalarSchema(Number)).toEqual({ type: 'number' });
    expect(scalarSchema(Boolean)).toEqual({ type: 'boolean' });
    expect(scalarSchema(Object)).toEqual({});
  });
});
