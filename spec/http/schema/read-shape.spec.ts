import 'reflect-metadata';
import {
  Allow,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import { readShape } from '../../../lib/http/schema';

class Address {
  @IsString() city!: string;
}

class Customer {
  @IsString() @MinLength(1) @MaxLength(20) name!: string;
  @IsNumber() @IsInt() @Min(0) age!: number;
  @IsOptional() @IsIn(['a', 'b']) tier?: string;
  @ValidateNested() @Type(() => Address) address!: Address;
  @ValidateNested({ each: true }) @Type(() => Address) others!: Address[];
  @Allow() extra!: unknown;
}

describe('readShape', () => {
  const shape = readShape(Customer);

  it('lists declared properties in declaration order with their kinds', () => {
    expect(shape.name).toBe('Customer');
    expect(shape.fallback).toBeNull();
    expect(shape.properties.map((p) => [p.name, p.value.kind, p.required])).toEqual([
      ['name', 'string', true],
      ['age', 'integer', true],
      ['tier', 'enum', false],
      ['address', 'object', true],
      ['others', 'array', true],
      ['extra', 'any', true],
    ]);
  });

  it('keeps constraints in source order, each with the decorator it came from', () => {
    expect(shape.properties[0].value.constraints.map((c) => [c.check, c.decorator])).toEqual([
      ['minLength', 'minLength'],
      ['maxLength', 'maxLength'],
    ]);
    expect(shape.properties[2].value.constraints[0]).toMatchObject({
      check: 'enum',
      values: ['a', 'b'],
    });
  });

  it('points nested properties at their class, for arrays through items', () => {
    expect(shape.properties[3].value.ref).toBe(Address);
    expect(shape.properties[4].value.items).toMatchObject({ kind: 'object', ref: Address });
  });

  it('is read once per class', () => {
    expect(readShape(Customer)).toBe(shape);
    expect(Object.isFrozen(shape.properties)).toBe(true);
  });
});
