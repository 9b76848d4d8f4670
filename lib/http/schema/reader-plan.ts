import { classValidator } from '../../json/validator';
import { IS_ENUM } from '../../json/validator-names';
import { classSpelling, enumSpelling, unionOf, type UnionSpelling } from '../../json';
import {
  KIND_WHY,
  REQUIRED,
  SINGLE_VALUE,
  classTagWhy,
  constraintWhy,
  oneOfWhy,
  oneVariantWhy,
  pathPart,
} from './messages';
import { readShape } from './read-shape';
import type {
  ClassShape,
  Constraint,
  CustomMessage,
  PropertyShape,
  ValueKind,
  ValueShape,
} from './read-shape';

export type ReadSource = 'body' | 'query';

// Kinds and checks are small integers so that the hot loop is one switch, not a call through
// a different closure per constraint.
export const K_STRING = 0;
export const K_NUMBER = 1;
export const K_INTEGER = 2;
export const K_BOOLEAN = 3;
export const K_ARRAY = 4;
export const K_OBJECT = 5;
export const K_ANY_OBJECT = 6;
export const K_ANY = 7;
/** A union declared with `Union(...)`: the variant is told by its tag. */
export const K_UNION = 8;

export const C_MIN_LENGTH = 0;
export const C_MAX_LENGTH = 1;
export const C_MINIMUM = 2;
export const C_MAXIMUM = 3;
export const C_EXCLUSIVE_MINIMUM = 4;
export const C_EXCLUSIVE_MAXIMUM = 5;
export const C_DECIMALS = 6;
export const C_PATTERN = 7;
export const C_EMAIL = 8;
export const C_UUID = 9;
export const C_DATE_TIME = 10;
export const C_ENUM = 11;
export const C_MIN_ITEMS = 12;
export const C_MAX_ITEMS = 13;
export const C_NOT_EMPTY = 14;
export const C_DEFINED = 15;
export const C_NEVER = 16;
/** A value nested deeper than the reader follows (`maxDepth`). */
export const C_TOO_DEEP = 17;

export interface Check {
  readonly code: number;
  readonly n: number;
  readonly re: RegExp | null;
  readonly values: readonly unknown[] | null;
  readonly options: unknown;
  /** A `format` check's test (class-validator's `isEmail`...), found when the plan is made. */
  readonly test: FormatTest | null;
  /** Default wording, ready at startup. */
  readonly why: string;
  readonly message: CustomMessage | undefined;
  readonly constraints: readonly unknown[];
  readonly property: string;
  readonly target: string;
}

export interface ValuePlan {
  readonly kind: number;
  readonly kindName: ValueKind;
  readonly kindCheck: Check;
  /** Query only: a scalar parameter given more than once. */
  readonly singleCheck: Check;
  readonly checks: readonly Check[];
  /** Element plan, or `null` when elements need neither a check nor a conversion. */
  items: ValuePlan | null;
  /** Elements become new values (instances, converted query strings): build a new array. */
  copyItems: boolean;
  object: ObjectPlan | null;
  readonly query: boolean;
  readonly members: readonly unknown[] | null;
  /** A union's variants, when `kind` is `K_UNION`. */
  union: UnionPlan | null;
  /** An enum marked with `jsonEnum`: spelled member name → value; anything else is refused with `namesCheck`. */
  readonly names: ReadonlyMap<string, unknown> | null;
  readonly namesCheck: Check | null;
}

/** One variant of a union being read: its class's plan, or its constant when it has no payload. */
export interface VariantPlan {
  readonly plan: ObjectPlan | null;
  readonly unit: unknown;
  /** `.circle`: where an externally tagged payload sits, for failure paths. */
  readonly path: string;
}

export interface UnionPlan {
  /** The key an internally tagged union keeps its variant name under, or null (externally tagged). */
  readonly tag: string | null;
  readonly tagPath: string;
  readonly variants: ReadonlyMap<string, VariantPlan>;
  /** Externally tagged: not exactly one key naming a variant. */
  readonly shapeCheck: Check;
  /** Internally tagged: the tag is missing / names no variant. */
  readonly tagRequired: Check;
  readonly tagCheck: Check;
  /** Externally tagged: the payload is not an object. */
  readonly payloadCheck: Check;
}

/** A class marked `@Json({ tag })` reads its own name under the tag (body only). */
export interface ClassTagPlan {
  readonly key: string;
  readonly value: string;
  readonly path: string;
  readonly requiredCheck: Check;
  readonly valueCheck: Check;
}

export interface FieldPlan {
  readonly name: string;
  readonly path: string;
  /** The name is also on Object.prototype (`toString`...): read own properties only. */
  readonly guarded: boolean;
  /** `__proto__`: assign with defineProperty so the instance keeps its prototype. */
  readonly special: boolean;
  readonly optional: boolean;
  readonly hasDefault: boolean;
  readonly def: unknown;
  readonly cloneDefault: boolean;
  readonly requiredCheck: Check;
  readonly value: ValuePlan;
}

export interface ObjectPlan {
  readonly shape: ClassShape;
  readonly proto: object;
  fields: readonly FieldPlan[];
  readonly fallback: boolean;
  readonly source: ReadSource;
  readonly tag: ClassTagPlan | null;
}

const KIND_CODES: Record<ValueKind, number> = {
  string: K_STRING,
  number: K_NUMBER,
  integer: K_INTEGER,
  boolean: K_BOOLEAN,
  array: K_ARRAY,
  object: K_OBJECT,
  enum: K_ANY,
  any: K_ANY,
};

const plans = {
  body: new WeakMap<Function, ObjectPlan>(),
  query: new WeakMap<Function, ObjectPlan>(),
};

export function objectPlan(cls: Function, source: ReadSource): ObjectPlan {
  const cache = plans[source];
  let plan = cache.get(cls);
  if (plan !== undefined) return plan;
  const shape = readShape(cls);
  const building: ObjectPlan = {
    shape,
    proto: cls.prototype as object,
    fields: [],
    fallback: shape.fallback !== null,
    source,
    tag: classTag(cls, shape, source),
  };
  // Cached before its fields are compiled, so a class that refers to itself compiles.
  cache.set(cls, building);
  // Read through class-validator: loaded now (the program has, if it declared the class with it),
  // not by the first request.
  if (building.fallback) classValidator();
  if (source === 'query') refuseNestedInQuery(shape);
  building.fields = Object.freeze(shape.properties.map((p) => fieldPlan(shape, p, source)));
  plan = building;
  return plan;
}

// A tag is JSON's: a query string or a form carries no class name, so there it is not read.
function classTag(cls: Function, shape: ClassShape, source: ReadSource): ClassTagPlan | null {
  const key = source === 'body' ? (classSpelling(cls)?.tag ?? null) : null;
  if (key === null) return null;
  return {
    key,
    value: cls.name,
    path: pathPart(key),
    requiredCheck: makeCheck(C_NEVER, REQUIRED, key, shape.name),
    valueCheck: makeCheck(C_NEVER, classTagWhy(cls.name), key, shape.name),
  };
}

function refuseNestedInQuery(shape: ClassShape): void {
  for (const p of shape.properties) {
    const v = p.value.kind === 'array' ? p.value.items : p.value;
    if (v !== undefined && (v.kind === 'object' || v.kind === 'array')) {
      throw new TypeError(
        `${shape.name}.${p.name}: a query string carries only scalars and lists of scalars, not ${v.kind === 'object' ? 'objects' : 'nested lists'}`,
      );
    }
  }
}

function fieldPlan(shape: ClassShape, p: PropertyShape, source: ReadSource): FieldPlan {
  const def = p.default;
  return {
    name: p.name,
    path: pathPart(p.name),
    guarded: p.name in Object.prototype,
    special: p.name === '__proto__',
    optional: p.optional,
    hasDefault: p.hasDefault,
    def,
    cloneDefault: def !== null && typeof def === 'object',
    requiredCheck: makeCheck(C_NEVER, REQUIRED, p.name, shape.name),
    value: valuePlan(shape, p.name, p.value, source),
  };
}

function valuePlan(
  shape: ClassShape,
  property: string,
  v: ValueShape,
  source: ReadSource,
): ValuePlan {
  let kind = KIND_CODES[v.kind];
  if (v.kind === 'object' && v.ref === undefined) kind = K_ANY_OBJECT;
  const union = v.kind === 'object' ? unionOf(v.ref) : null;
  if (union !== null) kind = K_UNION;
  const enumC = v.constraints.find((c) => c.check === 'enum');
  // `@IsEnum(E)` keeps E as its first argument; a marked E is read by its spelled member names.
  const spelled =
    enumC !== undefined && enumC.decorator === IS_ENUM
      ? enumSpelling(enumC.constraints?.[0])
      : null;
  const plan: ValuePlan = {
    kind,
    kindName: v.kind,
    kindCheck: {
      ...makeCheck(C_NEVER, KIND_WHY[v.kind], property, shape.name),
      message: v.kindMessage,
    },
    singleCheck: makeCheck(C_NEVER, SINGLE_VALUE, property, shape.name),
    checks: Object.freeze(v.constraints.map((c) => constraintCheck(c, property, shape.name))),
    items: null,
    copyItems: false,
    object: null,
    query: source === 'query',
    members: enumC !== undefined && enumC.check === 'enum' ? enumC.values : null,
    union: null,
    names: spelled === null ? null : spelled.toValue,
    namesCheck:
      spelled === null
        ? null
        : {
            ...makeCheck(C_NEVER, oneOfWhy(spelled.names), property, shape.name),
            message: enumC!.message,
            constraints: enumC!.constraints ?? [],
          },
  };
  if (kind === K_OBJECT) plan.object = objectPlan(v.ref!, source);
  if (union !== null) plan.union = unionPlan(union, shape, property, source);
  if (kind === K_ARRAY && v.items !== undefined) {
    const items = valuePlan(shape, property, v.items, source);
    const converts = source === 'query' && items.kind !== K_STRING && items.kind !== K_ANY;
    const materializes = items.kind === K_OBJECT || items.kind === K_UNION || items.names !== null;
    if (items.checks.length > 0 || items.kind !== K_ANY || converts) {
      plan.items = items;
      plan.copyItems = converts || materializes || (source === 'query' && items.members !== null);
    }
  }
  return plan;
}

function unionPlan(
  u: UnionSpelling,
  shape: ClassShape,
  property: string,
  source: ReadSource,
): UnionPlan {
  const variants = new Map<string, VariantPlan>();
  for (const v of u.variants)
    variants.set(v.name, {
      plan: v.type === null ? null : objectPlan(v.type, source),
      unit: v.unit,
      path: pathPart(v.name),
    });
  const names = u.variants.map((v) => v.name);
  const check = (why: string) => makeCheck(C_NEVER, why, property, shape.name);
  return {
    tag: u.tag,
    tagPath: u.tag === null ? '' : pathPart(u.tag),
    variants,
    shapeCheck: check(oneVariantWhy(names)),
    tagRequired: check(REQUIRED),
    tagCheck: check(oneOfWhy(names)),
    payloadCheck: check(KIND_WHY.object),
  };
}

const CHECK_CODES: Record<Constraint['check'], number> = {
  minLength: C_MIN_LENGTH,
  maxLength: C_MAX_LENGTH,
  minimum: C_MINIMUM,
  maximum: C_MAXIMUM,
  exclusiveMinimum: C_EXCLUSIVE_MINIMUM,
  exclusiveMaximum: C_EXCLUSIVE_MAXIMUM,
  maxDecimalPlaces: C_DECIMALS,
  pattern: C_PATTERN,
  format: C_EMAIL,
  enum: C_ENUM,
  minItems: C_MIN_ITEMS,
  maxItems: C_MAX_ITEMS,
  notEmpty: C_NOT_EMPTY,
  defined: C_DEFINED,
};

/** A format test: class-validator's own, so both readers accept the same values. */
export type FormatTest = (value: unknown, options: unknown) => boolean;

// A format constraint comes only from a class-validator decorator (`@IsEmail`...), so the program
// has loaded class-validator by then: asking for it here costs no load, and no request waits.
function formatTest(format: 'email' | 'uuid' | 'date-time'): FormatTest {
  const cv = classValidator();
  const test = format === 'email' ? cv.isEmail : format === 'uuid' ? cv.isUUID : cv.isISO8601;
  return test as FormatTest;
}

function constraintCheck(c: Constraint, property: string, target: string): Check {
  let code = CHECK_CODES[c.check];
  if (c.check === 'format')
    code = c.value === 'email' ? C_EMAIL : c.value === 'uuid' ? C_UUID : C_DATE_TIME;
  return {
    code,
    n: 'value' in c && typeof c.value === 'number' ? c.value : 0,
    re: c.check === 'pattern' ? c.value : null,
    values: c.check === 'enum' ? c.values : null,
    options: c.check === 'format' ? c.options : undefined,
    test: c.check === 'format' ? formatTest(c.value) : null,
    why: constraintWhy(c),
    message: c.message,
    constraints: c.constraints ?? [],
    property,
    target,
  };
}

/**
 * A check with its default wording only; one that carries a decorator's own `message` and
 * arguments spreads this and sets them (the keys keep their order, so every check has one shape).
 */
export function makeCheck(code: number, why: string, property: string, target: string): Check {
  return {
    code,
    n: 0,
    re: null,
    values: null,
    options: undefined,
    test: null,
    why,
    message: undefined,
    constraints: [],
    property,
    target,
  };
}
