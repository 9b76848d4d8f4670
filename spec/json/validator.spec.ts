import 'reflect-metadata';
import * as cv from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { IsString, ValidationTypes as TheirTypes } from 'class-validator';
import * as names from '../../lib/json/validator-names';
import { validationRecords } from '../../lib/json/validator';
import { Page, Problem } from '../../lib/http';
import { readShape } from '../../lib/http/schema';

describe("fw's own reading of class-validator records", () => {
  it('names every constraint and record type as the installed class-validator does', () => {
    const { ValidationTypes, ...constants } = names;
    for (const [name, value] of Object.entries(constants))
      expect([name, value]).toEqual([name, (cv as unknown as Record<string, unknown>)[name]]);
    for (const [name, value] of Object.entries(ValidationTypes))
      expect([name, value]).toEqual([
        name,
        (TheirTypes as unknown as Record<string, unknown>)[name],
      ]);
  });

  it("a class extending fw's Problem has its own decorated fields first, then Problem's", () => {
    class Refusal extends Problem {
      @IsString() reason!: string;
      // Redeclared: the subclass's record stands, Problem's is not read twice.
      @IsString() override detail = '';
    }
    expect(validationRecords(Refusal).map((r) => r.propertyName)).toEqual([
      'reason',
      'detail',
      'type',
      'title',
      'status',
      'instance',
      'code',
      'requestId',
    ]);
    const shape = readShape(Refusal);
    expect(shape.fallback).toBeNull();
    expect(shape.properties.find((p) => p.name === 'status')?.value.kind).toBe('integer');
    expect(shape.properties.find((p) => p.name === 'reason')?.value.kind).toBe('string');
  });

  it("a Page declared with class-transformer loaded gives it the items' type, as @Type(() => Item) would", () => {
    class Line {
      sku = '';
    }
    const page = plainToInstance(Page(Line), { items: [{ sku: 'a' }], total: 1 });
    expect(page.items[0]).toBeInstanceOf(Line);
    expect(readShape(Page(Line)).properties.map((p) => [p.name, p.value.kind])).toEqual([
      ['items', 'array'],
      ['total', 'integer'],
      ['next', 'string'],
    ]);
  });

  it('a class no decorator touched has no records', () => {
    class Plain {
      a = 1;
    }
    expect(validationRecords(Plain)).toEqual([]);
  });
});
