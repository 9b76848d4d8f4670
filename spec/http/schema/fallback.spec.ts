import 'reflect-metadata';
import {
  Allow,
  IsHexColor,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  validateSync,
} from 'class-validator';
import type { ValidationArguments, ValidatorConstraintInterface } from 'class-validator';
import { Transform, Type, plainToInstance } from 'class-transformer';
import { compileReader, readShape } from '../../../lib/http/schema';
import type { Read } from '../../../lib/http/schema';

@ValidatorConstraint({ name: 'isEven' })
class IsEven implements ValidatorConstraintInterface {
  validate(v: unknown): boolean {
    return typeof v === 'number' && v % 2 === 0;
  }
  defaultMessage(a: ValidationArguments): string {
    return `${a.property} must be even`;
  }
}

class Pack {
  @IsString() @Length(1, 8) sku!: string;
  @IsInt() @Validate(IsEven) qty!: number;
}

class Payment {
  @IsIn(['card', 'cash']) kind!: string;
  @ValidateIf((o: Payment) => o.kind === 'card') @IsString() @Length(16, 16) cardNo?: string;
}

class Coloured {
  @IsHexColor() colour!: string;
  @Allow() note?: unknown;
}

class Grouped {
  @IsString({ groups: ['admin'] }) secret!: string;
}

class Trimmed {
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Length(1, 4)
  name!: string;
}

class Box {
  @IsString() label!: string;
  @ValidateNested({ each: true }) @Type(() => Pack) packs!: Pack[];
}

class Paged {
  @IsInt() @Min(1) @Validate(IsEven) size!: number;
  @IsOptional() @IsInt({ each: true }) ids?: number[];
}

function message(r: Read): string {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.value)}`);
  return r.message;
}

function value<T>(r: Read): T {
  if (!r.ok) throw new Error(`expected a value, got ${r.message}`);
  return r.value as T;
}

describe('fallback to class-transformer + class-validator', () => {
  it('says why a class cannot be compiled', () => {
    expect(readShape(Pack).fallback).toMatch(/custom constraint isEven on qty/);
    expect(readShape(Payment).fallback).toMatch(/@ValidateIf on cardNo/);
    expect(readShape(Coloured).fallback).toMatch(/custom constraint isHexColor on colour/);
    expect(readShape(Grouped).fallback).toMatch(/groups on secret/);
    expect(readShape(Trimmed).fallback).toMatch(/@Transform on name/);
    expect(readShape(Box).fallback).toBeNull();
  });

  it('CORE-25 runs a custom @Validate and names the first failing field in the same format', () => {
    const read = compileReader(Pack, { source: 'body' });
    expect(read({ sku: 'A', qty: 3 })).toEqual({
      ok: false,
      field: 'body.qty',
      message: 'body.qty: must be even',
    });
    expect(message(read({ sku: 5, qty: 2 }))).toBe('body.sku: must be a string');
    expect(message(read({ sku: '', qty: 2 }))).toBe(
      'body.sku: must be longer than or equal to 1 characters',
    );
    const v = value<Pack>(read({ sku: 'A', qty: 2 }));
    expect(v).toBeInstanceOf(Pack);
  });

  it('OPEN-62 ignores unknown fields on the fallback path too', () => {
    const v = value<Pack>(
      compileReader(Pack, { source: 'body' })({ sku: 'A', qty: 2, admin: true }),
    );
    expect({ ...v }).toEqual({ sku: 'A', qty: 2 });
  });

  it('a missing required field reads "is required" on the fallback path too', () => {
    const read = compileReader(Pack, { source: 'body' });
    expect(message(read({ qty: 2 }))).toBe('body.sku: is required');
    expect(message(compileReader(Coloured, { source: 'body' })({ colour: '#fff' }))).toBe(
      'body.note: is required',
    );
  });

  it('refuses JSON null at the top on the fallback path too', () => {
    expect(message(compileReader(Pack, { source: 'body' })(null))).toBe(
      'body: must be a JSON object',
    );
  });

  it('honours @ValidateIf, unknown decorators and @Transform', () => {
    const pay = compileReader(Payment, { source: 'body' });
    expect(pay({ kind: 'cash' }).ok).toBe(true);
    expect(message(pay({ kind: 'card', cardNo: '1' }))).toBe(
      'body.cardNo: must be longer than or equal to 16 characters',
    );
    expect(message(compileReader(Coloured, { source: 'body' })({ colour: 'red', note: 1 }))).toBe(
      'body.colour: must be a hexadecimal color',
    );
    expect(
      value<Trimmed>(compileReader(Trimmed, { source: 'body' })({ name: '  ab  ' })).name,
    ).toBe('ab');
  });

  it('a fallback class nested in a compiled class keeps the full path', () => {
    const read = compileReader(Box, { source: 'body' });
    const packs = [
      { sku: 'A', qty: 2 },
      { sku: 'B', qty: 5 },
    ];
    expect(read({ label: 'x', packs })).toEqual({
      ok: false,
      field: 'body.packs[1].qty',
      message: 'body.packs[1].qty: must be even',
    });
    const v = value<Box>(read({ label: 'x', packs: [{ sku: 'A', qty: 2 }] }));
    expect(v.packs[0]).toBeInstanceOf(Pack);
  });

  it('CORE-23 converts query values by their declared kind before class-validator runs', () => {
    const read = compileReader(Paged, { source: 'query' });
    expect(value<Paged>(read({ size: '4', ids: ['1', '2'] }))).toEqual(
      expect.objectContaining({ size: 4, ids: [1, 2] }),
    );
    expect(message(read({ size: 'four' }))).toBe('query.size: must be an integer');
    expect(message(read({ size: '3' }))).toBe('query.size: must be even');
    expect(message(read({ size: '4', ids: ['1', 'x'] }))).toBe('query.ids[1]: must be an integer');
  });
});

describe('the compiled reader agrees with class-validator', () => {
  class Item {
    @IsString() @Length(1, 32) sku!: string;
    @IsInt() @Min(1) @Max(100) qty!: number;
    @IsOptional() @IsIn(['a', 'b']) mode?: string;
  }
  const read = compileReader(Item, { source: 'body' });
  const inputs: object[] = [
    { sku: 'A', qty: 1 },
    { sku: 'A', qty: 100, mode: 'b' },
    { sku: 'A', qty: 100, mode: null },
    { sku: '', qty: 1 },
    { sku: 'x'.repeat(33), qty: 1 },
    { sku: 'A', qty: 0 },
    { sku: 'A', qty: 101 },
    { sku: 'A', qty: 1.5 },
    { sku: 'A', qty: '1' },
    { sku: 1, qty: 1 },
    { qty: 1 },
    { sku: 'A' },
    { sku: 'A', qty: 1, mode: 'c' },
    { sku: 'A', qty: 1, extra: [1, 2] },
  ];
  it.each(inputs.map((i) => [JSON.stringify(i), i]))(
    'accepts and refuses as validateSync does: %s',
    (_, input) => {
      const errors = validateSync(plainToInstance(Item, input), {
        whitelist: true,
        forbidUnknownValues: false,
      });
      const r = read(input);
      expect(r.ok).toBe(errors.length === 0);
      if (!r.ok) expect(r.field).toBe(`body.${errors[0].property}`);
    },
  );
});
