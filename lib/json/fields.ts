import 'reflect-metadata';
import {
  classSpelling,
  enumSpelling,
  unionOf,
  type EnumSpelling,
  type UnionSpelling,
} from './marks';
import { transformerStorage } from './transformer';
import { validationRecords, ownType, type ValidationRecord } from './validator';
import { IS_ARRAY, IS_ENUM, ValidationTypes } from './validator-names';

/** What a property holds, as far as its declaration tells. `null`: nothing the spelling cares about. */
export type FieldType =
  | { readonly kind: 'class'; readonly type: Function }
  | { readonly kind: 'union'; readonly union: UnionSpelling }
  | { readonly kind: 'enum'; readonly spelling: EnumSpelling }
  | { readonly kind: 'array'; readonly items: FieldType | null }
  | { readonly kind: 'date' };

const NOT_CLASSES: readonly unknown[] = [
  Object,
  Array,
  Function,
  String,
  Number,
  Boolean,
  BigInt,
  Symbol,
  Promise,
  Map,
  Set,
  RegExp,
  Error,
];

const cache = new WeakMap<Function, ReadonlyMap<string, FieldType | null>>();

/**
 * A class's properties and what each holds, from the same declarations the validators and the
 * API description read: the fields a `new T()` has (class fields exist from the start), the
 * class-validator decorators (`@IsEnum(E)`, `@ValidateNested({ each })`), class-transformer's
 * `@Type(() => X)` and TypeScript's `design:type`.
 */
export function declaredFields(cls: Function): ReadonlyMap<string, FieldType | null> {
  let fields = cache.get(cls);
  if (fields === undefined) {
    fields = readFields(cls);
    cache.set(cls, fields);
  }
  return fields;
}

/** A `new T()` with no arguments, or null when the constructor refuses that. */
export function blank(cls: Function): Record<string, unknown> | null {
  try {
    const v: unknown = new (cls as new () => unknown)();
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function readFields(cls: Function): ReadonlyMap<string, FieldType | null> {
  const byName = new Map<string, ValidationRecord[]>();
  for (const k of Object.keys(blank(cls) ?? {})) byName.set(k, []);
  for (const m of validationRecords(cls)) {
    const list = byName.get(m.propertyName);
    if (list === undefined) byName.set(m.propertyName, [m]);
    else list.push(m);
  }
  const out = new Map<string, FieldType | null>();
  for (const [name, metas] of byName) out.set(name, fieldType(cls, name, metas));
  return out;
}

function fieldType(
  cls: Function,
  name: string,
  metas: readonly ValidationRecord[],
): FieldType | null {
  const design = Reflect.getMetadata('design:type', cls.prototype as object, name) as unknown;
  let declared: unknown;
  try {
    declared =
      ownType(cls, name) ?? transformerStorage().findTypeMetadata(cls, name)?.typeFunction();
  } catch {
    declared = undefined;
  }
  const isEnum = metas.find((m) => m.name === IS_ENUM);
  const each = metas.some(
    (m) => m.each === true && (m.type === ValidationTypes.NESTED_VALIDATION || m.name === IS_ENUM),
  );
  const isArray = design === Array || each || metas.some((m) => m.name === IS_ARRAY);
  let item: FieldType | null = null;
  const marked =
    isEnum === undefined ? null : enumSpelling((isEnum.constraints as unknown[] | undefined)?.[0]);
  if (marked !== null) item = { kind: 'enum', spelling: marked };
  else item = typeOf(declared ?? (isArray ? undefined : design));
  if (isArray)
    return item === null ? { kind: 'array', items: null } : { kind: 'array', items: item };
  return item;
}

function typeOf(t: unknown): FieldType | null {
  const union = unionOf(t);
  if (union !== null) return { kind: 'union', union };
  if (t === Date) return { kind: 'date' };
  if (typeof t !== 'function' || NOT_CLASSES.includes(t)) return null;
  return { kind: 'class', type: t };
}

const reaching = new WeakMap<Function, boolean>();
const visiting = new Set<Function>();

/**
 * Whether writing or reading a value of this type has anything to spell: the class is marked, or a
 * property declared on it (at any depth) holds a marked class, a union or a marked enum. A type
 * that reaches none is written by `JSON.stringify` alone.
 */
export function reachesMarker(type: unknown): boolean {
  if (Array.isArray(type)) return reachesMarker(type[0]);
  if (unionOf(type) !== null) return true;
  if (typeof type !== 'function' || NOT_CLASSES.includes(type) || type === Date) return false;
  const known = reaching.get(type);
  if (known !== undefined) return known;
  // A class already being looked at answers false, so a class that refers to itself ends. A
  // `false` found under such an assumption may be wrong, so only the outermost one is kept;
  // a `true` always is right.
  if (visiting.has(type)) return false;
  visiting.add(type);
  let r: boolean;
  try {
    r = classSpelling(type) !== null || [...declaredFields(type).values()].some(fieldReaches);
  } finally {
    visiting.delete(type);
  }
  if (r || visiting.size === 0) reaching.set(type, r);
  return r;
}

function fieldReaches(t: FieldType | null): boolean {
  if (t === null) return false;
  switch (t.kind) {
    case 'union':
    case 'enum':
      return true;
    case 'class':
      return reachesMarker(t.type);
    case 'array':
      return fieldReaches(t.items);
    case 'date':
      return false;
  }
}
