import { isEmail, isISO8601, isUUID } from 'class-validator';
import type { ValidationArguments } from 'class-validator';
import { readWithClassValidator } from './fallback-reader';
import { KIND_WHY, NOT_AN_OBJECT_AT_TOP, REQUIRED, SINGLE_VALUE, constraintWhy, customWhy, pathPart } from './messages';
import { NOT_CONVERTED, convertQueryScalar } from './query-value';
import { readShape } from './read-shape';
import type { ClassShape, Constraint, CustomMessage, PropertyShape, ValueKind, ValueShape } from './read-shape';

/** The outcome of reading a body or a query into its class. */
export type Read = { ok: true; value: object } | { ok: false; message: string; field: string };

export type ReadSource = 'body' | 'query';

export interface ReaderOptions {
  /** `body`: the parsed JSON value. `query`: a record of `string | string[]` from the URL. */
  readonly source: ReadSource;
}

// Kinds and checks are small integers so that the hot loop is one switch, not a call through
// a different closure per constraint.
const K_STRING = 0;
const K_NUMBER = 1;
const K_INTEGER = 2;
const K_BOOLEAN = 3;
const K_ARRAY = 4;
const K_OBJECT = 5;
const K_ANY_OBJECT = 6;
const K_ANY = 7;

const C_MIN_LENGTH = 0;
const C_MAX_LENGTH = 1;
const C_MINIMUM = 2;
const C_MAXIMUM = 3;
const C_EXCLUSIVE_MINIMUM = 4;
const C_EXCLUSIVE_MAXIMUM = 5;
const C_DECIMALS = 6;
const C_PATTERN = 7;
const C_EMAIL = 8;
const C_UUID = 9;
const C_DATE_TIME = 10;
const C_ENUM = 11;
const C_MIN_ITEMS = 12;
const C_MAX_ITEMS = 13;
const C_NOT_EMPTY = 14;
const C_DEFINED = 15;
const C_NEVER = 16;

interface Check {
  readonly code: number;
  readonly n: number;
  readonly re: RegExp | null;
  readonly values: readonly unknown[] | null;
  readonly options: unknown;
  /** Default wording, ready at startup. */
  readonly why: string;
  readonly message: CustomMessage | undefined;
  readonly constraints: readonly unknown[];
  readonly property: string;
  readonly target: string;
}

interface ValuePlan {
  readonly kind: number;
  readonly kindName: ValueKind;
  readonly kindCheck: Check;
  readonly checks: readonly Check[];
  /** Element plan, or `null` when elements need neither a check nor a conversion. */
  items: ValuePlan | null;
  /** Elements become new values (instances, converted query strings): build a new array. */
  copyItems: boolean;
  object: ObjectPlan | null;
  readonly query: boolean;
  readonly members: readonly unknown[] | null;
}

interface FieldPlan {
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

interface ObjectPlan {
  readonly shape: ClassShape;
  readonly proto: object;
  fields: readonly FieldPlan[];
  readonly fallback: boolean;
  readonly source: ReadSource;
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

// Failures travel back through these slots instead of a result object per field, so a
// successful read allocates only the instances it returns. Reading is synchronous, so no two
// reads can interleave.
const FAIL: unique symbol = Symbol('fail');
let failPath = '';
let failCheck: Check | null = null;
let failValue: unknown = undefined;
let failOwner: object | undefined = undefined;

const plans = { body: new WeakMap<Function, ObjectPlan>(), query: new WeakMap<Function, ObjectPlan>() };

/**
 * Compiles, once, a reader that validates an input against a class's class-validator
 * declaration and builds an instance of it (unknown fields are ignored, nested classes are
 * instantiated). Stops at the first failing field (CORE-25) and names its path.
 *
 * @example
 * const read = compileReader(CreateOrder, { source: 'body' });
 * read({ sku: 'A1', qty: 500 }); // { ok: false, field: 'body.qty', message: 'body.qty: must not be greater than 100' }
 */
export function compileReader(cls: Function, options: ReaderOptions): (input: unknown) => Read {
  const source = options.source;
  const plan = objectPlan(cls, source);
  const root = source;
  const notObject: Read = Object.freeze({ ok: false, message: `${root}: ${NOT_AN_OBJECT_AT_TOP}`, field: root });
  return function read(input: unknown): Read {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return notObject;
    const value = readObject(plan, input as Record<string, unknown>);
    if (value === FAIL) return failure(root);
    return { ok: true, value: value as object };
  };
}

function failure(root: string): Read {
  const c = failCheck!;
  let why = c.why;
  if (c.message !== undefined) {
    const args: ValidationArguments = {
      value: failValue,
      constraints: c.constraints as unknown[],
      targetName: c.target,
      object: failOwner ?? {},
      property: c.property,
    };
    why = customWhy(c.message, args);
  }
  const field = root + failPath;
  failCheck = null;
  failValue = undefined;
  failOwner = undefined;
  failPath = '';
  return { ok: false, message: `${field}: ${why}`, field };
}

function refuse(check: Check, value: unknown): typeof FAIL {
  failPath = '';
  failCheck = check;
  failValue = value;
  failOwner = undefined;
  return FAIL;
}

function readObject(plan: ObjectPlan, input: Record<string, unknown>): unknown {
  if (plan.fallback) return readFallback(plan, input);
  const out = Object.create(plan.proto) as Record<string, unknown>;
  const fields = plan.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    const v = f.guarded && !Object.prototype.hasOwnProperty.call(input, f.name) ? undefined : input[f.name];
    let r: unknown;
    if (v === undefined) {
      if (f.hasDefault) r = f.cloneDefault ? structuredClone(f.def) : f.def;
      else if (f.optional) continue;
      else {
        refuse(f.requiredCheck, v);
        failPath = f.path;
        failOwner = input;
        return FAIL;
      }
    } else if (v === null && f.optional) {
      r = null;
    } else {
      r = readValue(f.value, v);
      if (r === FAIL) {
        failPath = f.path + failPath;
        if (failOwner === undefined) failOwner = input;
        return FAIL;
      }
    }
    if (f.special) Object.defineProperty(out, f.name, { value: r, writable: true, enumerable: true, configurable: true });
    else out[f.name] = r;
  }
  return out;
}

function readFallback(plan: ObjectPlan, input: Record<string, unknown>): unknown {
  const r = readWithClassValidator(plan.shape, input, plan.source);
  if (r.ok) return r.value;
  refuse(makeCheck(C_NEVER, r.why, undefined, [], '', plan.shape.name), undefined);
  failPath = r.path;
  return FAIL;
}

function readValue(p: ValuePlan, v: unknown): unknown {
  if (p.query && p.kind !== K_ARRAY) {
    if (typeof v !== 'string' && Array.isArray(v)) {
      if (v.length !== 1) return refuse(singleValue(p), v);
      v = v[0];
    }
    if (typeof v === 'string' && p.kind !== K_STRING) {
      const converted = convertQueryScalar(p.kindName, v, p.members);
      if (converted === NOT_CONVERTED) return refuse(p.kindCheck, v);
      v = converted;
    }
  }
  switch (p.kind) {
    case K_STRING:
      if (typeof v !== 'string') return refuse(p.kindCheck, v);
      break;
    case K_INTEGER:
      if (typeof v !== 'number' || !Number.isInteger(v)) return refuse(p.kindCheck, v);
      break;
    case K_NUMBER:
      if (typeof v !== 'number' || !Number.isFinite(v)) return refuse(p.kindCheck, v);
      break;
    case K_BOOLEAN:
      if (typeof v !== 'boolean') return refuse(p.kindCheck, v);
      break;
    case K_ANY_OBJECT:
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return refuse(p.kindCheck, v);
      break;
    case K_OBJECT:
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return refuse(p.kindCheck, v);
      v = readObject(p.object!, v as Record<string, unknown>);
      if (v === FAIL) return FAIL;
      break;
    case K_ARRAY:
      if (!Array.isArray(v)) {
        // A query parameter given once is a list of one.
        if (p.query && typeof v === 'string') v = [v];
        else return refuse(p.kindCheck, v);
      }
      break;
  }
  const checks = p.checks;
  for (let i = 0; i < checks.length; i++) {
    if (!passes(checks[i], v)) return refuse(checks[i], v);
  }
  if (p.kind === K_ARRAY && p.items !== null) return readItems(p, v as unknown[]);
  return v;
}

function readItems(p: ValuePlan, list: unknown[]): unknown {
  const items = p.items!;
  if (p.copyItems) {
    const out: unknown[] = [];
    for (let i = 0; i < list.length; i++) {
      const r = readValue(items, list[i]);
      if (r === FAIL) return itemFailed(i);
      out.push(r);
    }
    return out;
  }
  for (let i = 0; i < list.length; i++) {
    if (readValue(items, list[i]) === FAIL) return itemFailed(i);
  }
  return list;
}

function itemFailed(i: number): typeof FAIL {
  failPath = '[' + i + ']' + failPath;
  return FAIL;
}

function passes(c: Check, v: unknown): boolean {
  switch (c.code) {
    case C_MIN_LENGTH:
      return typeof v === 'string' && v.length >= c.n && textLength(v) >= c.n;
    case C_MAX_LENGTH:
      return typeof v === 'string' && (v.length <= c.n || textLength(v) <= c.n);
    case C_MINIMUM:
      return typeof v === 'number' && v >= c.n;
    case C_MAXIMUM:
      return typeof v === 'number' && v <= c.n;
    case C_EXCLUSIVE_MINIMUM:
      return typeof v === 'number' && v > c.n;
    case C_EXCLUSIVE_MAXIMUM:
      return typeof v === 'number' && v < c.n;
    case C_DECIMALS:
      return typeof v === 'number' && decimalPlaces(v) <= c.n;
    case C_PATTERN:
      return typeof v === 'string' && c.re!.test(v);
    case C_EMAIL:
      return isEmail(v, c.options as Parameters<typeof isEmail>[1]);
    case C_UUID:
      return isUUID(v, c.options as Parameters<typeof isUUID>[1]);
    case C_DATE_TIME:
      return isISO8601(v, c.options as Parameters<typeof isISO8601>[1]);
    case C_ENUM:
      return c.values!.includes(v);
    case C_MIN_ITEMS:
      return Array.isArray(v) && v.length >= c.n;
    case C_MAX_ITEMS:
      return Array.isArray(v) && v.length <= c.n;
    case C_NOT_EMPTY:
      return v !== '' && v !== null && v !== undefined;
    case C_DEFINED:
      return v !== null && v !== undefined;
    default:
      return false;
  }
}

// Lengths count as class-validator's (validator.js `isLength`) do: a surrogate pair or a
// character with a variation selector is one character. Plain BMP text skips the regexes.
const PRESENTATION = /[^\uFE0F\uFE0E][\uFE0F\uFE0E]/g;
const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
function textLength(s: string): number {
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0xd800) {
      plain = false;
      break;
    }
  }
  if (plain) return s.length;
  return s.length - (s.match(PRESENTATION)?.length ?? 0) - (s.match(SURROGATE_PAIR)?.length ?? 0);
}

function decimalPlaces(v: number): number {
  if (v % 1 === 0) return 0;
  const text = v.toString();
  const dot = text.indexOf('.');
  return dot < 0 ? Infinity : text.length - dot - 1;
}

// ---------------------------------------------------------------------------------------
// Compilation (startup only)

function objectPlan(cls: Function, source: ReadSource): ObjectPlan {
  const cache = plans[source];
  let plan = cache.get(cls);
  if (plan !== undefined) return plan;
  const shape = readShape(cls);
  const building: ObjectPlan = { shape, proto: cls.prototype as object, fields: [], fallback: shape.fallback !== null, source };
  // Cached before its fields are compiled, so a class that refers to itself compiles.
  cache.set(cls, building);
  if (source === 'query') refuseNestedInQuery(shape);
  building.fields = Object.freeze(shape.properties.map((p) => fieldPlan(shape, p, source)));
  plan = building;
  return plan;
}

function refuseNestedInQuery(shape: ClassShape): void {
  for (const p of shape.properties) {
    const v = p.value.kind === 'array' ? p.value.items : p.value;
    if (v !== undefined && (v.kind === 'object' || v.kind === 'array')) {
      throw new TypeError(`${shape.name}.${p.name}: a query string carries only scalars and lists of scalars, not ${v.kind === 'object' ? 'objects' : 'nested lists'}`);
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
    requiredCheck: makeCheck(C_NEVER, REQUIRED, undefined, [], p.name, shape.name),
    value: valuePlan(shape, p.name, p.value, source),
  };
}

function valuePlan(shape: ClassShape, property: string, v: ValueShape, source: ReadSource): ValuePlan {
  let kind = KIND_CODES[v.kind];
  if (v.kind === 'object' && v.ref === undefined) kind = K_ANY_OBJECT;
  const enumC = v.constraints.find((c) => c.check === 'enum');
  const plan: ValuePlan = {
    kind,
    kindName: v.kind,
    kindCheck: makeCheck(C_NEVER, KIND_WHY[v.kind], v.kindMessage, [], property, shape.name),
    checks: Object.freeze(v.constraints.map((c) => constraintCheck(c, property, shape.name))),
    items: null,
    copyItems: false,
    object: null,
    query: source === 'query',
    members: enumC !== undefined && enumC.check === 'enum' ? enumC.values : null,
  };
  if (kind === K_OBJECT) plan.object = objectPlan(v.ref!, source);
  if (kind === K_ARRAY && v.items !== undefined) {
    const items = valuePlan(shape, property, v.items, source);
    const converts = source === 'query' && items.kind !== K_STRING && items.kind !== K_ANY;
    const materializes = items.kind === K_OBJECT;
    if (items.checks.length > 0 || items.kind !== K_ANY || converts) {
      plan.items = items;
      plan.copyItems = converts || materializes || (source === 'query' && items.members !== null);
    }
  }
  return plan;
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

function constraintCheck(c: Constraint, property: string, target: string): Check {
  let code = CHECK_CODES[c.check];
  if (c.check === 'format') code = c.value === 'email' ? C_EMAIL : c.value === 'uuid' ? C_UUID : C_DATE_TIME;
  return {
    code,
    n: 'value' in c && typeof c.value === 'number' ? c.value : 0,
    re: c.check === 'pattern' ? c.value : null,
    values: c.check === 'enum' ? c.values : null,
    options: c.check === 'format' ? c.options : undefined,
    why: constraintWhy(c),
    message: c.message,
    constraints: c.constraints ?? [],
    property,
    target,
  };
}

function makeCheck(code: number, why: string, message: CustomMessage | undefined, constraints: readonly unknown[], property: string, target: string): Check {
  return { code, n: 0, re: null, values: null, options: undefined, why, message, constraints, property, target };
}

const singleValueChecks = new WeakMap<ValuePlan, Check>();
function singleValue(p: ValuePlan): Check {
  // Failure path only: made on first use, then kept.
  let c = singleValueChecks.get(p);
  if (c === undefined) {
    c = makeCheck(C_NEVER, SINGLE_VALUE, undefined, [], p.kindCheck.property, p.kindCheck.target);
    singleValueChecks.set(p, c);
  }
  return c;
}
