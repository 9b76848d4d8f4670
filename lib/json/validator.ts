import type * as ClassValidator from 'class-validator';
import type { MetadataStorage, ValidationArguments } from 'class-validator';
import { declareType } from './transformer';
import { ValidationTypes } from './validator-names';

/** What fw reads of one class-validator record (its `ValidationMetadata`), or of one of fw's own. */
export interface ValidationRecord {
  readonly type: string;
  readonly name?: string | undefined;
  readonly target: Function | string;
  readonly propertyName: string;
  readonly constraints?: readonly unknown[] | undefined;
  readonly constraintCls?: Function | undefined;
  readonly message?: string | ((args: ValidationArguments) => string) | undefined;
  readonly groups?: readonly string[] | undefined;
  readonly each?: boolean | undefined;
  readonly validateIf?: ((object: unknown, value: unknown) => boolean) | undefined;
}

// class-validator keeps every record, whichever copy of the package made it, in one storage under
// this global (its `getMetadataStorage()`), created when the first decorator is applied. While it
// is absent no class carries a class-validator decorator, so reading it needs no class-validator
// loaded: an app that validates with Standard Schema alone never loads the package.
const STORAGE = 'classValidatorMetadataStorage';

function storage(): MetadataStorage | undefined {
  return (globalThis as Record<string, unknown>)[STORAGE] as MetadataStorage | undefined;
}

// fw's own classes (Problem, HealthStatus, a Page) declare their fields here rather than with
// class-validator's decorators, which would load it with fw.
const ownRecords = new WeakMap<Function, readonly ValidationRecord[]>();
const ownTypes = new WeakMap<Function, ReadonlyMap<string, Function>>();

/**
 * A class's validation records, inherited ones included, in class-validator's order: its own
 * first, then those of the classes it extends that it does not redeclare.
 */
export function validationRecords(cls: Function): readonly ValidationRecord[] {
  const theirs: readonly ValidationRecord[] =
    storage()?.getTargetValidationMetadatas(cls, '', true, false) ?? [];
  const ours: ValidationRecord[] = [];
  for (let c: unknown = cls; typeof c === 'function'; c = Object.getPrototypeOf(c))
    ours.push(...(ownRecords.get(c) ?? []));
  if (ours.length === 0) return theirs;
  const redeclared = (o: ValidationRecord) =>
    theirs.some((t) => t.propertyName === o.propertyName && t.type === o.type);
  return [...theirs, ...ours.filter((o) => !redeclared(o))];
}

/** The name a custom constraint class (`@Validate(Cls)`) registered, else the class's own name. */
export function constraintClassName(cls: Function): string {
  return storage()?.getTargetValidatorConstraints(cls)[0]?.name ?? cls.name;
}

/** One check of one of fw's own fields, as a class-validator decorator would record it. */
export interface OwnCheck {
  /** A `ValidationTypes` value; default `customValidation` (the `@IsString()` kind). */
  readonly type?: string;
  readonly name?: string;
  readonly constraints?: readonly unknown[];
  readonly each?: boolean;
}

/** One field of one of fw's own classes: its checks top to bottom, and the class it holds. */
export interface OwnField {
  readonly checks: readonly OwnCheck[];
  /** What class-transformer's `@Type(() => T)` would name: the class of a nested value. */
  readonly type?: Function;
}

/**
 * Declares the fields of one of fw's own classes in class-validator's terms, so reading them
 * (the reader, the JSON Schema, the declared writer) needs no class-validator loaded.
 *
 * @example
 * declareOwn(HealthStatus, { status: { checks: [{ name: IS_IN, constraints: [['ok']] }] } });
 */
export function declareOwn(cls: Function, fields: Readonly<Record<string, OwnField>>): void {
  const records: ValidationRecord[] = [];
  const types = new Map<string, Function>();
  for (const [propertyName, field] of Object.entries(fields)) {
    // Decorators apply bottom-up: class-validator stores a property's records in that order.
    for (const c of [...field.checks].reverse())
      records.push({
        type: c.type ?? ValidationTypes.CUSTOM_VALIDATION,
        name: c.name,
        target: cls,
        propertyName,
        constraints: c.constraints,
        each: c.each ?? false,
        groups: [],
      });
    if (field.type !== undefined) {
      types.set(propertyName, field.type);
      declareType(cls, propertyName, field.type);
    }
  }
  ownRecords.set(cls, Object.freeze(records));
  if (types.size > 0) ownTypes.set(cls, types);
}

/** The class one of fw's own fields holds (its `type`), or undefined. */
export function ownType(cls: Function, property: string): Function | undefined {
  for (let c: unknown = cls; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    const t = ownTypes.get(c)?.get(property);
    if (t !== undefined) return t;
  }
  return undefined;
}

let loaded: typeof ClassValidator | null = null;

/**
 * class-validator itself: its format checks (`isEmail`...) and `validateSync`, asked for when a
 * reader is compiled for a class that declares with it, so the program has loaded it already.
 */
export function classValidator(): typeof ClassValidator {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the first class that needs it, not with fw
  return (loaded ??= require('class-validator') as typeof ClassValidator);
}
