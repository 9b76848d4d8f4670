import { declaredFields, reachesMarker, type FieldType } from './fields';
import {
  classSpelling,
  markersDeclared,
  unionOf,
  type EnumSpelling,
  type UnionSpelling,
} from './marks';

/** Turns a value into the plain value whose `JSON.stringify` is its spelled JSON. */
export type Spell = (value: unknown) => unknown;

const classWriters = new WeakMap<Function, Spell>();
const unionWriters = new WeakMap<UnionSpelling, Spell>();

/**
 * The writer of a declared type (a class, a union, or `[T]` for a list), compiled once; null when
 * nothing in the type is marked, so the caller keeps plain `JSON.stringify`.
 *
 * @example
 * const spell = compileWriter(Order);            // null when Order reaches no marker
 * JSON.stringify(spell ? spell(order) : order);
 */
export function compileWriter(type: unknown): Spell | null {
  if (Array.isArray(type)) {
    const item = compileWriter(type[0]);
    return item === null ? null : (v) => (Array.isArray(v) ? v.map((x) => item(x)) : item(v));
  }
  const union = unionOf(type);
  if (union !== null) return unionWriter(union);
  if (typeof type === 'function' && reachesMarker(type)) return classWriter(type);
  return null;
}

/**
 * Spells a value by its runtime class, for JSON written without a declared type (`c.sendJson`,
 * an answer without `@Returns`, an outbound JSON body): an instance of a class that reaches a
 * marker, or a list of them. Anything else is returned as it is.
 */
export function spell(value: unknown): unknown {
  return markersDeclared() ? dynamic(value) : value;
}

function dynamic(x: unknown): unknown {
  if (x === null || typeof x !== 'object') return x;
  if (Array.isArray(x)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < x.length; i++) {
      const y = dynamic(x[i]);
      if (out === null && y !== x[i]) out = x.slice(0, i);
      if (out !== null) out.push(y);
    }
    return out ?? x;
  }
  const ctor = (x as { constructor?: unknown }).constructor;
  return typeof ctor === 'function' && ctor !== Object && reachesMarker(ctor)
    ? classWriter(ctor)(x)
    : x;
}

/** Sets a key on a plain object; `__proto__` becomes an own property instead of a prototype. */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else out[key] = value;
}

function classWriter(cls: Function): Spell {
  let w = classWriters.get(cls);
  if (w !== undefined) return w;
  // Registered before the fields are compiled, so a class that refers to itself compiles.
  let body: Spell = (v) => v;
  w = (v) => body(v);
  classWriters.set(cls, w);
  const mark = classSpelling(cls);
  const fields = new Map<string, Spell>();
  for (const [name, t] of declaredFields(cls)) {
    const f = fieldWriter(t);
    if (f !== null) fields.set(name, f);
  }
  const spellName = mark === null ? null : (name: string) => mark.spell(name);
  const tag = mark?.tag ?? null;
  const className = cls.name;
  body = (v) => {
    if (v === null || typeof v !== 'object') return v;
    const src = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    if (tag !== null) put(out, tag, className);
    for (const k of Object.keys(src)) {
      const f = fields.get(k);
      put(
        out,
        spellName === null ? k : spellName(k),
        f === undefined ? dynamic(src[k]) : f(src[k]),
      );
    }
    return out;
  };
  return w;
}

function fieldWriter(t: FieldType | null): Spell | null {
  if (t === null) return null;
  switch (t.kind) {
    case 'class':
      return reachesMarker(t.type) ? classWriter(t.type) : null;
    case 'union':
      return unionWriter(t.union);
    case 'enum':
      return enumWriter(t.spelling);
    case 'array': {
      const item = fieldWriter(t.items);
      return item === null ? null : (v) => (Array.isArray(v) ? v.map((x) => item(x)) : v);
    }
    case 'date':
      return null;
  }
}

function enumWriter(e: EnumSpelling): Spell {
  return (v) => e.toName.get(v) ?? v;
}

function unionWriter(u: UnionSpelling): Spell {
  let w = unionWriters.get(u);
  if (w !== undefined) return w;
  const tag = u.tag;
  const expected = u.variants
    .map((v) => (v.type === null ? `${u.name}.${v.key}` : v.type.name))
    .join(', ');
  w = (v) => {
    if (v === null || v === undefined) return v;
    const variant = u.variantOf(v);
    if (variant === null) {
      const what =
        typeof v === 'object' ? ((v as object).constructor?.name ?? 'an object') : typeof v;
      throw new TypeError(`a value of the union ${u.name} must be one of ${expected}, got ${what}`);
    }
    const out: Record<string, unknown> = {};
    if (variant.type === null) {
      // A payload-less variant externally tagged is an empty object under its name, so every
      // variant of the union has the same one-key shape.
      if (tag === null) put(out, variant.name, {});
      else put(out, tag, variant.name);
      return out;
    }
    const payload = classWriter(variant.type)(v) as Record<string, unknown>;
    if (tag === null) {
      put(out, variant.name, payload);
      return out;
    }
    put(out, tag, variant.name);
    for (const k of Object.keys(payload)) if (k !== tag) put(out, k, payload[k]);
    return out;
  };
  unionWriters.set(u, w);
  return w;
}
