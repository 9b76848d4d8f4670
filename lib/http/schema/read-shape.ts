import 'reflect-metadata';
import {
  ARRAY_MAX_SIZE,
  ARRAY_MIN_SIZE,
  ARRAY_NOT_EMPTY,
  IS_ARRAY,
  IS_BOOLEAN,
  IS_DATE_STRING,
  IS_DEFINED,
  IS_EMAIL,
  IS_ENUM,
  IS_IN,
  IS_INT,
  IS_ISO8601,
  IS_LENGTH,
  IS_NEGATIVE,
  IS_NOT_EMPTY,
  IS_NUMBER,
  IS_OBJECT,
  IS_OPTIONAL,
  IS_POSITIVE,
  IS_STRING,
  IS_UUID,
  MATCHES,
  MAX,
  MAX_LENGTH,
  MIN,
  MIN_LENGTH,
  ValidationTypes,
} from '../../json/validator-names';
import {
  constraintClassName,
  ownType,
  validationRecords,
  type ValidationRecord,
} from '../../json/validator';
import { PLAIN_TO_CLASS, transformerStorage } from '../../json/transformer';
import { readConstraints, type Constraint, type CustomMessage } from './read-constraints';

export type { Constraint, CustomMessage } from './read-constraints';

/** What a value is, before its constraints. `enum` is a value list with no single JSON type. */
export type ValueKind =
  'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'enum' | 'any';

export interface ValueShape {
  readonly kind: ValueKind;
  /** Custom message of the decorator that fixed the kind (`@IsString({ message })`). */
  readonly kindMessage?: CustomMessage;
  readonly constraints: readonly Constraint[];
  /** Element shape when `kind` is `array`. */
  readonly items?: ValueShape;
  /** Nested class when `kind` is `object`; absent means any JSON object. */
  readonly ref?: Function;
}

export interface PropertyShape {
  readonly name: string;
  /** `false` when `@IsOptional()` (then `null` is accepted too) or when the class gives a default. */
  readonly required: boolean;
  /** `true` when `@IsOptional()`: missing and `null` skip every check. */
  readonly optional: boolean;
  readonly value: ValueShape;
  /** Set when `new Class()` gives the property a value (a field initializer). */
  readonly hasDefault: boolean;
  readonly default?: unknown;
}

export interface ClassShape {
  readonly name: string;
  readonly target: Function;
  /** Declared properties in class-validator's order: own properties, then inherited ones. */
  readonly properties: readonly PropertyShape[];
  /**
   * Why this class cannot be compiled (a custom `@Validate`, `@ValidateIf`, groups, an
   * unknown decorator, a class-transformer `@Transform`/`@Expose({ name })`/`@Exclude`),
   * or `null`. When set, reading goes through class-transformer + class-validator.
   */
  readonly fallback: string | null;
  /**
   * `@ValidateNested` properties whose element class fw cannot see (no `@Type(() => T)` and no
   * class in the design type): the scanner refuses them rather than read "any object".
   */
  readonly unseenNested: readonly string[];
}

// Types that class-transformer converts (or that JSON cannot carry): the compiled reader does
// not guess their conversion, the class falls back.
const BUILTIN_CLASSES: readonly unknown[] = [
  Date,
  Map,
  Set,
  WeakMap,
  WeakSet,
  Promise,
  RegExp,
  Error,
  ArrayBuffer,
  Uint8Array,
  typeof Buffer === 'function' ? Buffer : undefined,
  BigInt,
  Symbol,
];

// The constraint names class-validator records; anything else makes the class fall back.
const TYPE_KINDS: Record<string, ValueKind> = {
  [IS_STRING]: 'string',
  [IS_EMAIL]: 'string',
  [IS_UUID]: 'string',
  [IS_ISO8601]: 'string',
  [IS_DATE_STRING]: 'string',
  [IS_INT]: 'integer',
  [IS_NUMBER]: 'number',
  [IS_BOOLEAN]: 'boolean',
  [IS_ARRAY]: 'array',
  [IS_OBJECT]: 'object',
};
const STRING_HINTS = new Set<string>([MIN_LENGTH, MAX_LENGTH, IS_LENGTH, MATCHES]);
const NUMBER_HINTS = new Set<string>([MIN, MAX, IS_POSITIVE, IS_NEGATIVE]);
const ARRAY_HINTS = new Set<string>([ARRAY_MIN_SIZE, ARRAY_MAX_SIZE, ARRAY_NOT_EMPTY]);
const KNOWN = new Set<string>([
  ...Object.keys(TYPE_KINDS),
  ...STRING_HINTS,
  ...NUMBER_HINTS,
  ...ARRAY_HINTS,
  IS_ENUM,
  IS_IN,
  IS_NOT_EMPTY,
  IS_DEFINED,
]);

const shapes = new WeakMap<Function, ClassShape>();

/**
 * Reads a class's class-validator (and class-transformer `@Type`) metadata once into a
 * neutral description that both the reader and the JSON Schema builder consume.
 *
 * @example
 * class Line { @IsString() @Length(1, 32) sku!: string; @IsInt() @Min(1) qty!: number }
 * readShape(Line).properties.map((p) => p.value.kind); // ['string', 'integer']
 */
export function readShape(cls: Function): ClassShape {
  let shape = shapes.get(cls);
  if (shape === undefined) {
    shape = buildShape(cls);
    shapes.set(cls, shape);
  }
  return shape;
}

function buildShape(cls: Function): ClassShape {
  const metas = validationRecords(cls);
  const byProperty = new Map<string, ValidationRecord[]>();
  for (const m of metas) {
    const list = byProperty.get(m.propertyName);
    if (list === undefined) byProperty.set(m.propertyName, [m]);
    else list.push(m);
  }
  const reasons: string[] = [];
  // class-transformer's decorators, when the program loaded it (none can exist otherwise).
  const transformer = transformerStorage();
  const strategy = transformer.getStrategy(cls);
  if (strategy !== 'none') reasons.push(`class-transformer strategy "${strategy}" on the class`);
  if (transformer.getExcludedMetadatas(cls).length > 0) reasons.push('@Exclude on a property');
  for (const e of transformer.getExposedMetadatas(cls)) {
    if (e.options !== undefined && Object.keys(e.options).length > 0)
      reasons.push(`@Expose with options on ${e.propertyName}`);
  }
  const defaults = readDefaults(cls);
  const properties: PropertyShape[] = [];
  const unseenNested: string[] = [];
  for (const [name, list] of byProperty) {
    // Decorators run bottom-up, so class-validator stores each property's list reversed.
    const own = list.slice().reverse();
    const property = readProperty(cls, { name, reasons }, own, defaults);
    properties.push(property);
    if (own.some((m) => m.type === ValidationTypes.NESTED_VALIDATION) && !seesClass(property.value))
      unseenNested.push(name);
  }
  return Object.freeze({
    name: cls.name,
    target: cls,
    properties: Object.freeze(properties),
    fallback: reasons.length > 0 ? [...new Set(reasons)].join('; ') : null,
    unseenNested: Object.freeze(unseenNested),
  });
}

/** Whether a nested value (or an array's elements) names the class it is read into. */
function seesClass(v: ValueShape): boolean {
  return v.kind === 'array' ? v.items !== undefined && seesClass(v.items) : v.ref !== undefined;
}

/**
 * Every `@ValidateNested` property fw cannot see the class of, in `cls` and the classes it nests,
 * as `Class.property`.
 */
export function unseenNested(cls: Function): string[] {
  const out: string[] = [];
  const seen = new Set<Function>();
  const walk = (c: Function): void => {
    if (seen.has(c)) return;
    seen.add(c);
    const shape = readShape(c);
    for (const name of shape.unseenNested) out.push(`${shape.name}.${name}`);
    for (const p of shape.properties) {
      const ref = p.value.kind === 'array' ? p.value.items?.ref : p.value.ref;
      if (ref !== undefined) walk(ref);
    }
  };
  walk(cls);
  return out;
}

function readDefaults(cls: Function): Record<string, unknown> | null {
  // Field initializers (`page = 1`) only exist on a constructed instance; class-transformer
  // constructs one per request, we construct one at startup and copy the values.
  try {
    return new (cls as new () => Record<string, unknown>)();
  } catch {
    return null;
  }
}

/**
 * A property being read: its name, and the class's list of what fw cannot compile (a class with
 * any falls back to class-validator).
 */
interface PropertySite {
  readonly name: string;
  readonly reasons: string[];
}

/** A property's class-validator decorators, sorted by what they say. */
interface PropertyMarks {
  optional: boolean;
  conditional: boolean;
  nested: boolean;
  nestedEach: boolean;
  readonly valueMetas: ValidationRecord[];
  readonly eachMetas: ValidationRecord[];
}

function readProperty(
  cls: Function,
  at: PropertySite,
  metas: ValidationRecord[],
  defaults: Record<string, unknown> | null,
): PropertyShape {
  const { name } = at;
  const marks = sortMarks(at, metas);
  const value = readPropertyValue(at, marks, typeClassOf(cls, at), designTypeOf(cls, name));
  // Own properties only: `constructor` or `toString` on the prototype is no field initializer.
  const hasDefault =
    defaults !== null &&
    Object.prototype.hasOwnProperty.call(defaults, name) &&
    defaults[name] !== undefined;
  return Object.freeze({
    name,
    // A @ValidateIf property is required only when its condition holds: not in `required`.
    required: !marks.optional && !hasDefault && !marks.conditional,
    optional: marks.optional,
    value,
    hasDefault,
    ...(hasDefault ? { default: defaults![name] } : {}),
  });
}

function sortMarks(at: PropertySite, metas: ValidationRecord[]): PropertyMarks {
  const { name, reasons } = at;
  const marks: PropertyMarks = {
    optional: false,
    conditional: false,
    nested: false,
    nestedEach: false,
    valueMetas: [],
    eachMetas: [],
  };
  for (const m of metas) {
    if (m.groups !== undefined && m.groups.length > 0) reasons.push(`groups on ${name}`);
    if (m.validateIf !== undefined) reasons.push(`validateIf option on ${name}`);
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      if (m.name === IS_OPTIONAL) marks.optional = true;
      else {
        marks.conditional = true;
        reasons.push(`@ValidateIf on ${name}`);
      }
    } else if (m.type === ValidationTypes.WHITELIST) {
      // @Allow(): declares the property, checks nothing.
    } else if (m.type === ValidationTypes.NESTED_VALIDATION) {
      marks.nested = true;
      if (m.each) marks.nestedEach = true;
    } else if (m.type === ValidationTypes.PROMISE_VALIDATION) {
      reasons.push(`@ValidatePromise on ${name}`);
    } else if (
      m.name !== undefined &&
      KNOWN.has(m.name) &&
      (m.type === ValidationTypes.CUSTOM_VALIDATION || m.type === m.name)
    ) {
      (m.each ? marks.eachMetas : marks.valueMetas).push(m);
    } else {
      reasons.push(`custom constraint ${constraintName(m)} on ${name}`);
    }
  }
  return marks;
}

/**
 * The class class-transformer's `@Type` (or one of fw's own classes) names for a property, if any
 * (and its features fw cannot read).
 */
function typeClassOf(cls: Function, at: PropertySite): Function | undefined {
  const { name, reasons } = at;
  const transformer = transformerStorage();
  for (const t of transformer.findTransformMetadatas(cls, name, PLAIN_TO_CLASS)) {
    if (t !== undefined) {
      reasons.push(`@Transform on ${name}`);
      break;
    }
  }
  const own = ownType(cls, name);
  if (own !== undefined) return own;
  const typeMeta = transformer.findTypeMetadata(cls, name);
  if (typeMeta?.options?.discriminator !== undefined)
    reasons.push(`@Type discriminator on ${name}`);
  if (typeMeta === undefined) return undefined;
  try {
    return typeMeta.typeFunction();
  } catch {
    return undefined;
  }
}

const designTypeOf = (cls: Function, name: string): Function | undefined =>
  Reflect.getMetadata('design:type', cls.prototype, name) as Function | undefined;

function readPropertyValue(
  at: PropertySite,
  marks: PropertyMarks,
  typeClass: Function | undefined,
  designType: Function | undefined,
): ValueShape {
  const { valueMetas, eachMetas, nested } = marks;
  const isArray =
    eachMetas.length > 0 ||
    marks.nestedEach ||
    designType === Array ||
    valueMetas.some((m) => m.name === IS_ARRAY || ARRAY_HINTS.has(m.name!));
  if (
    !isArray ||
    valueMetas.some(
      (m) =>
        m.name !== undefined && TYPE_KINDS[m.name] !== undefined && TYPE_KINDS[m.name] !== 'array',
    )
  )
    return readValue(at, valueMetas, typeClass ?? designType, nested);
  const items = readValue(at, eachMetas, typeClass, nested);
  const base = readValue(
    at,
    valueMetas.filter((m) => m.name !== IS_ARRAY),
    Array,
    false,
  );
  const kindMeta = valueMetas.find((m) => m.name === IS_ARRAY);
  return freezeValue({
    kind: 'array',
    kindMessage: kindMeta?.message,
    constraints: base.constraints,
    items,
  });
}

function constraintName(m: ValidationRecord): string {
  if (m.name !== undefined) return m.name;
  const cls = m.constraintCls;
  if (cls === undefined) return '?';
  return constraintClassName(cls);
}

/** Whether a class-validator constraint name checks the JSON type (`isString`, `isInt`...). */
export function isKindConstraint(name: string): boolean {
  return TYPE_KINDS[name] !== undefined;
}

function readValue(
  at: PropertySite,
  metas: ValidationRecord[],
  type: Function | undefined,
  nested: boolean,
): ValueShape {
  let kind: ValueKind | undefined;
  let kindMessage: CustomMessage | undefined;
  const constraints: Constraint[] = [];
  for (const m of metas) {
    const n = m.name!;
    const typeKind = TYPE_KINDS[n];
    // `@IsInt` beats `@IsNumber` whatever their order: an integer is the narrower reading.
    if (
      typeKind !== undefined &&
      (kind === undefined || kind === 'any' || (kind === 'number' && typeKind === 'integer'))
    ) {
      kind = typeKind;
      kindMessage = m.message;
    }
    constraints.push(...readConstraints(m));
  }
  // A value list decides the kind by itself (so `?level=1` finds the numeric member 1).
  if (kind === undefined && constraints.some((c) => c.check === 'enum')) kind = 'enum';
  let ref: Function | undefined;
  const isClass =
    type !== undefined &&
    type !== Object &&
    type !== Array &&
    type !== Function &&
    !isPrimitiveType(type);
  if (isClass && BUILTIN_CLASSES.includes(type)) {
    if (kind === undefined)
      at.reasons.push(`${type!.name} on ${at.name} is converted by class-transformer`);
  } else if (isClass && (kind === undefined || kind === 'object')) {
    kind = 'object';
    ref = type;
  }
  if (kind === undefined) {
    if (type !== undefined && isPrimitiveType(type)) kind = primitiveKind(type);
    else if (nested) kind = 'object';
    else if (metas.some((m) => STRING_HINTS.has(m.name!))) kind = 'string';
    else if (metas.some((m) => NUMBER_HINTS.has(m.name!))) kind = 'number';
    else kind = 'any';
  }
  return freezeValue({ kind, kindMessage, constraints, ref });
}

function freezeValue(v: {
  kind: ValueKind;
  kindMessage?: CustomMessage | undefined;
  constraints: Constraint[] | readonly Constraint[];
  items?: ValueShape | undefined;
  ref?: Function | undefined;
}): ValueShape {
  const out: { -readonly [K in keyof ValueShape]: ValueShape[K] } = {
    kind: v.kind,
    constraints: Object.freeze(v.constraints.slice()),
  };
  if (v.kindMessage !== undefined) out.kindMessage = v.kindMessage;
  if (v.items !== undefined) out.items = v.items;
  if (v.ref !== undefined) out.ref = v.ref;
  return Object.freeze(out);
}

function isPrimitiveType(t: Function): boolean {
  return t === String || t === Number || t === Boolean;
}

function primitiveKind(t: Function): ValueKind {
  return t === String ? 'string' : t === Number ? 'number' : 'boolean';
}
