import { checkWhole } from '../../options';
import type { ValidationArguments } from 'class-validator';
import { readWithClassValidator } from './fallback-reader';
import { NOT_AN_OBJECT_AT_TOP, customWhy, pathPart, tooDeepWhy } from './messages';
import { NOT_CONVERTED, convertQueryScalar } from './query-value';
import {
  C_DATE_TIME,
  C_DECIMALS,
  C_DEFINED,
  C_EMAIL,
  C_ENUM,
  C_EXCLUSIVE_MAXIMUM,
  C_EXCLUSIVE_MINIMUM,
  C_MAXIMUM,
  C_MAX_ITEMS,
  C_MAX_LENGTH,
  C_MINIMUM,
  C_MIN_ITEMS,
  C_MIN_LENGTH,
  C_NEVER,
  C_NOT_EMPTY,
  C_PATTERN,
  C_TOO_DEEP,
  C_UUID,
  K_ANY_OBJECT,
  K_ARRAY,
  K_BOOLEAN,
  K_INTEGER,
  K_NUMBER,
  K_OBJECT,
  K_STRING,
  K_UNION,
  makeCheck,
  objectPlan,
} from './reader-plan';
import type { Check, ObjectPlan, ReadSource, UnionPlan, ValuePlan } from './reader-plan';

export type { ReadSource } from './reader-plan';

/**
 * The outcome of reading a body or a query into its class. A failure names its first failing
 * field; `all` holds one message per failing top-level field when the reader was asked for them.
 */
export type Read =
  | { ok: true; value: object }
  | { ok: false; message: string; field: string; all?: readonly string[]; tooDeep?: true };

/** Levels of nested objects and arrays a body reader follows, the body itself counted, unless told otherwise. */
export const MAX_DEPTH = 64;

export interface ReaderOptions {
  /** `body`: the parsed JSON value. `query`: a record of `string | string[]` from the URL. */
  readonly source: ReadSource;
  /**
   * Go on past a failing top-level field and report every one (`Bound` forms, whose handler shows
   * them all at once). Within a field, and for a class read through class-validator, the first
   * failure still stands for the field.
   */
  readonly allFields?: boolean;
  /**
   * Levels of nested objects and arrays followed into the class, the input itself counted
   * (default 64): one deeper is refused naming its path, so a class that holds itself cannot
   * be made to recurse until the stack runs out. A class read through class-validator has its
   * whole input walked to this depth first, undeclared fields included, since class-transformer
   * copies them all.
   */
  readonly maxDepth?: number | undefined;
}

/** What a reader's messages start from: the source's name and its own depth refusal. */
interface Top {
  readonly root: string;
  /** Said for a `TOO_DEEP` failure: the reader's bound and class. */
  readonly deep: Check;
}

/** Where a reader asked for every failing field puts them, in field order. */
interface Collected extends Top {
  readonly messages: string[];
  readonly fields: string[];
}

/**
 * A read that failed: the check, the value it refused, and where, the path growing as the failure
 * is returned up through the fields and items that hold it. Only a failure allocates one: a
 * successful read allocates only the instances it returns.
 */
class Failure {
  constructor(
    readonly check: Check,
    readonly value: unknown,
    public path = '',
    /** The object that held the refused value, for a custom message's `object`. */
    public owner: object | undefined = undefined,
  ) {}
}

/** A nesting deeper than the bound: the reader names its own bound when it words the message. */
const TOO_DEEP: Check = makeCheck(C_TOO_DEEP, tooDeepWhy(MAX_DEPTH), '', '');

/**
 * Compiles, once, a reader that validates an input against a class's class-validator
 * declaration and builds an instance of it (unknown fields are ignored, nested classes are
 * instantiated). Stops at the first failing field and names its path (the 400 says what to fix),
 * unless asked for every failing top-level field (`allFields`).
 *
 * @example
 * const read = compileReader(CreateOrder, { source: 'body' });
 * read({ sku: 'A1', qty: 500 }); // { ok: false, field: 'body.qty', message: 'body.qty: must not be greater than 100' }
 */
export function compileReader(cls: Function, options: ReaderOptions): (input: unknown) => Read {
  const source = options.source;
  const plan = objectPlan(cls, source);
  const root = source;
  const notObject: Read = Object.freeze({
    ok: false,
    message: `${root}: ${NOT_AN_OBJECT_AT_TOP}`,
    field: root,
  });
  const maxDepth = options.maxDepth ?? MAX_DEPTH;
  checkWhole({ where: '' }, 'maxDepth', maxDepth, { min: 1 });
  const top: Top = {
    root,
    deep: makeCheck(C_TOO_DEEP, tooDeepWhy(maxDepth), '', plan.shape.name),
  };
  const below = maxDepth - 1;
  if (options.allFields) {
    return function readAll(input: unknown): Read {
      if (input === null || typeof input !== 'object' || Array.isArray(input)) return notObject;
      const collected: Collected = { ...top, messages: [], fields: [] };
      const value = readObject(plan, input as Record<string, unknown>, collected, below);
      if (value instanceof Failure) return failure(value, top);
      if (collected.messages.length > 0)
        return {
          ok: false,
          message: collected.messages[0]!,
          field: collected.fields[0]!,
          all: collected.messages,
        };
      return { ok: true, value: value as object };
    };
  }
  return function read(input: unknown): Read {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return notObject;
    const value = readObject(plan, input as Record<string, unknown>, null, below);
    if (value instanceof Failure) return failure(value, top);
    return { ok: true, value: value as object };
  };
}

function failure(f: Failure, top: Top): Read & { ok: false } {
  const c = f.check === TOO_DEEP ? top.deep : f.check;
  let why = c.why;
  if (c.message !== undefined) {
    const args: ValidationArguments = {
      value: f.value,
      constraints: c.constraints as unknown[],
      targetName: c.target,
      object: f.owner ?? {},
      property: c.property,
    };
    why = customWhy(c.message, args);
  }
  const field = top.root + f.path;
  if (c.code === C_TOO_DEEP)
    return { ok: false, message: `${shortPath(field)}: ${why}`, field, tooDeep: true };
  return { ok: false, message: `${field}: ${why}`, field };
}

// A path as deep as the bound is longer than a failure message holds (240 bytes): keep its
// start and its end, cut where a name begins, so the message still says what was refused.
const NAME_START = /[.[]/g;
function shortPath(field: string): string {
  if (field.length <= 160) return field;
  let head = 100;
  while (head > 0 && field[head] !== '.' && field[head] !== '[') head--;
  NAME_START.lastIndex = field.length - 50;
  const tail = NAME_START.exec(field)?.index ?? field.length - 50;
  return field.slice(0, head) + '…' + field.slice(tail);
}

function refuse(check: Check, value: unknown): Failure {
  return new Failure(check, value);
}

/** Notes a failure as one of several. */
function collect(into: Collected, f: Failure): void {
  const read = failure(f, into);
  into.messages.push(read.message);
  into.fields.push(read.field);
}

// `left`: how many more levels of objects and arrays may be entered below this one.
function readObject(
  plan: ObjectPlan,
  input: Record<string, unknown>,
  all: Collected | null,
  left: number,
): unknown {
  if (plan.tag !== null) {
    const wrong = wrongTag(plan.tag, input);
    if (wrong !== null) return wrong;
  }
  if (plan.fallback) return readFallback(plan, input, left);
  const out = Object.create(plan.proto) as Record<string, unknown>;
  const fields = plan.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v =
      f.guarded && !Object.prototype.hasOwnProperty.call(input, f.name) ? undefined : input[f.name];
    let r: unknown;
    if (v === undefined) {
      if (f.hasDefault) r = f.cloneDefault ? structuredClone(f.def) : f.def;
      else if (f.optional) continue;
      else {
        const missing = new Failure(f.requiredCheck, v, f.path, input);
        if (all === null) return missing;
        collect(all, missing);
        continue;
      }
    } else if (v === null && f.optional) {
      r = null;
    } else {
      r = readValue(f.value, v, left);
      if (r instanceof Failure) {
        r.path = f.path + r.path;
        if (r.owner === undefined) r.owner = input;
        if (all === null) return r;
        collect(all, r);
        continue;
      }
    }
    if (f.special) ownProperty(out, f.name, r);
    else out[f.name] = r;
  }
  return out;
}

/** A tagged class's tag, as read: null when it names the class, else its failure. */
function wrongTag(
  t: NonNullable<ObjectPlan['tag']>,
  input: Record<string, unknown>,
): Failure | null {
  const got = Object.prototype.hasOwnProperty.call(input, t.key) ? input[t.key] : undefined;
  if (got === t.value) return null;
  return new Failure(got === undefined ? t.requiredCheck : t.valueCheck, got, t.path, input);
}

/** Sets a field a plain assignment would not make an own property of (`__proto__`). */
function ownProperty(out: object, name: string, value: unknown): void {
  Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
}

function readFallback(plan: ObjectPlan, input: Record<string, unknown>, left: number): unknown {
  if (plan.source === 'body') {
    const at = deeperThan(input, left);
    if (at !== null) return new Failure(TOO_DEEP, undefined, at);
  }
  const r = readWithClassValidator(plan.shape, input, plan.source);
  if (r.ok) return r.value;
  return new Failure(makeCheck(C_NEVER, r.why, '', plan.shape.name), undefined, r.path);
}

/** The path, below `v`, of the first object or array more than `left` levels down; null when none is. */
function deeperThan(v: object, left: number): string | null {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x === null || typeof x !== 'object') continue;
      if (left === 0) return '[' + i + ']';
      const at = deeperThan(x, left - 1);
      if (at !== null) return '[' + i + ']' + at;
    }
    return null;
  }
  for (const k of Object.keys(v)) {
    const x: unknown = (v as Record<string, unknown>)[k];
    if (x === null || typeof x !== 'object') continue;
    if (left === 0) return pathPart(k);
    const at = deeperThan(x, left - 1);
    if (at !== null) return pathPart(k) + at;
  }
  return null;
}

// `left` is the levels that may still be entered below the value's owner: the value itself, when
// it is an object or an array the reader goes into, takes one.
function readValue(p: ValuePlan, v: unknown, left: number): unknown {
  if (p.names !== null) return readNamed(p, v);
  if (p.query && p.kind !== K_ARRAY) {
    v = queryScalar(p, v);
    if (v instanceof Failure) return v;
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
      if (left === 0) return refuse(TOO_DEEP, undefined);
      v = readObject(p.object!, v as Record<string, unknown>, null, left - 1);
      if (v instanceof Failure) return v;
      break;
    case K_UNION:
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return refuse(p.kindCheck, v);
      if (left === 0) return refuse(TOO_DEEP, undefined);
      v = readUnion(p.union!, v as Record<string, unknown>, left - 1);
      if (v instanceof Failure) return v;
      break;
    case K_ARRAY:
      if (!Array.isArray(v)) {
        // A query parameter given once is a list of one.
        if (p.query && typeof v === 'string') v = [v];
        else return refuse(p.kindCheck, v);
      } else if (left === 0 && !p.query) return refuse(TOO_DEEP, undefined);
      break;
  }
  const checks = p.checks;
  for (let i = 0; i < checks.length; i++) {
    if (!passes(checks[i]!, v)) return refuse(checks[i]!, v);
  }
  if (p.kind === K_ARRAY && p.items !== null) return readItems(p, v as unknown[], left - 1);
  return v;
}

/** One value of a query parameter (a list of one is its value), converted from text to its kind. */
function queryScalar(p: ValuePlan, v: unknown): unknown {
  if (typeof v !== 'string' && Array.isArray(v)) {
    if (v.length !== 1) return refuse(p.singleCheck, v);
    v = v[0];
  }
  if (typeof v !== 'string' || p.kind === K_STRING) return v;
  const converted = convertQueryScalar(p.kindName, v, p.members);
  return converted === NOT_CONVERTED ? refuse(p.kindCheck, v) : converted;
}

// A union's variant is told by its tag, with no declaration beyond the marker: the one key of an
// externally tagged value, or the value under `tag`. A variant without payload reads as its
// constant (`Shape.empty`).
function readUnion(u: UnionPlan, input: Record<string, unknown>, left: number): unknown {
  if (u.tag === null) {
    const keys = Object.keys(input);
    const variant = keys.length === 1 ? u.variants.get(keys[0]!) : undefined;
    if (variant === undefined) return refuse(u.shapeCheck, input);
    if (variant.plan === null) return variant.unit;
    const payload = input[keys[0]!];
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
      return new Failure(u.payloadCheck, payload, variant.path);
    if (left === 0) return new Failure(TOO_DEEP, undefined, variant.path);
    const r = readObject(variant.plan, payload as Record<string, unknown>, null, left - 1);
    if (r instanceof Failure) r.path = variant.path + r.path;
    return r;
  }
  const name = Object.prototype.hasOwnProperty.call(input, u.tag) ? input[u.tag] : undefined;
  const variant = typeof name === 'string' ? u.variants.get(name) : undefined;
  if (variant === undefined)
    return new Failure(name === undefined ? u.tagRequired : u.tagCheck, name, u.tagPath, input);
  return variant.plan === null ? variant.unit : readObject(variant.plan, input, null, left);
}

// An enum marked with `jsonEnum` travels as its spelled member names, never as its values.
function readNamed(p: ValuePlan, v: unknown): unknown {
  if (p.query && Array.isArray(v)) {
    if (v.length !== 1) return refuse(p.singleCheck, v);
    v = v[0];
  }
  if (typeof v !== 'string' || !p.names!.has(v)) return refuse(p.namesCheck!, v);
  const value = p.names!.get(v);
  const checks = p.checks;
  for (let i = 0; i < checks.length; i++) {
    if (!passes(checks[i]!, value)) return refuse(checks[i]!, v);
  }
  return value;
}

function readItems(p: ValuePlan, list: unknown[], left: number): unknown {
  const items = p.items!;
  if (p.copyItems) {
    const out: unknown[] = [];
    for (let i = 0; i < list.length; i++) {
      const r = readValue(items, list[i], left);
      if (r instanceof Failure) return itemFailed(r, i);
      out.push(r);
    }
    return out;
  }
  for (let i = 0; i < list.length; i++) {
    const r = readValue(items, list[i], left);
    if (r instanceof Failure) return itemFailed(r, i);
  }
  return list;
}

function itemFailed(f: Failure, i: number): Failure {
  f.path = '[' + i + ']' + f.path;
  return f;
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
    case C_UUID:
    case C_DATE_TIME:
      return c.test!(v, c.options);
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
