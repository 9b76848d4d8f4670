import { blank, declaredFields, reachesMarker, type FieldType } from './fields';
import { classSpelling, unionOf, type EnumSpelling, type UnionSpelling } from './marks';
import { toInstance } from './transformer';

/** Builds a value of a declared type from parsed JSON. */
export type Unspell = (parsed: unknown) => unknown;

const classReaders = new WeakMap<Function, Unspell>();
const unionReaders = new WeakMap<UnionSpelling, Unspell>();

/**
 * Reads parsed JSON into a declared type, honouring its spelling with no declaration of its own:
 * spelled field names back to the class's own, tagged unions into the right variant class (or its
 * constant), spelled enum names into their values. Parts of the type that reach no marker are read
 * by class-transformer's `plainToInstance`, exactly as without a marker. Nothing is validated; a
 * union whose variant cannot be told apart is a `TypeError` naming it.
 *
 * @example
 * unspell(Order, JSON.parse('{"created-at":"2024-05-01"}')); // Order { createdAt: '2024-05-01' }
 */
export function unspell<T>(type: abstract new (...args: never[]) => T, parsed: unknown): T | T[] {
  const read = readerOf(type);
  return (Array.isArray(parsed) ? parsed.map((x) => read(x)) : read(parsed)) as T | T[];
}

function readerOf(type: unknown): Unspell {
  const union = unionOf(type);
  if (union !== null) return unionReader(union);
  return classReader(type as Function);
}

function classReader(cls: Function): Unspell {
  let r = classReaders.get(cls);
  if (r !== undefined) return r;
  if (!reachesMarker(cls)) {
    r = (v) => (v !== null && typeof v === 'object' ? toInstance(cls, v) : v);
    classReaders.set(cls, r);
    return r;
  }
  // Registered before the fields are compiled, so a class that refers to itself compiles.
  let body: Unspell = (v) => v;
  r = (v) => body(v);
  classReaders.set(cls, r);
  const mark = classSpelling(cls);
  const names = new Map<string, string>();
  const fields = new Map<string, Unspell>();
  for (const [name, t] of declaredFields(cls)) {
    names.set(mark === null ? name : mark.spell(name), name);
    const f = fieldReader(t);
    if (f !== null) fields.set(name, f);
  }
  const tag = mark?.tag ?? null;
  // Field initializers run as `plainToInstance` runs them: a fresh `new T()` per value.
  const make =
    blank(cls) !== null
      ? () => new (cls as new () => Record<string, unknown>)()
      : () => Object.create(cls.prototype as object) as Record<string, unknown>;
  body = (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const src = v as Record<string, unknown>;
    const out = make();
    for (const k of Object.keys(src)) {
      if (k === tag || k === '__proto__') continue;
      const name = names.get(k) ?? k;
      const f = fields.get(name);
      out[name] = f === undefined ? src[k] : f(src[k]);
    }
    return out;
  };
  return r;
}

function fieldReader(t: FieldType | null): Unspell | null {
  if (t === null) return null;
  switch (t.kind) {
    case 'class':
      return classReader(t.type);
    case 'union':
      return unionReader(t.union);
    case 'enum':
      return enumReader(t.spelling);
    case 'array': {
      const item = fieldReader(t.items);
      return item === null ? null : (v) => (Array.isArray(v) ? v.map((x) => item(x)) : v);
    }
    case 'date':
      return (v) => (typeof v === 'string' || typeof v === 'number' ? new Date(v) : v);
  }
}

function enumReader(e: EnumSpelling): Unspell {
  return (v) => (typeof v === 'string' && e.toValue.has(v) ? e.toValue.get(v) : v);
}

function unionReader(u: UnionSpelling): Unspell {
  let r = unionReaders.get(u);
  if (r !== undefined) return r;
  const names = u.variants.map((v) => v.name).join(', ');
  const tag = u.tag;
  r = (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const src = v as Record<string, unknown>;
    const keys = Object.keys(src);
    const name = tag === null ? (keys.length === 1 ? keys[0] : undefined) : src[tag];
    const variant = typeof name === 'string' ? u.byName.get(name) : undefined;
    if (variant === undefined) {
      const why =
        tag === null
          ? `an object with one key naming the variant (${names})`
          : `"${tag}" naming the variant (${names})`;
      throw new TypeError(`a value of the union ${u.name} must be ${why}`);
    }
    if (variant.type === null) return variant.unit;
    return classReader(variant.type)(tag === null ? src[variant.name] : without(src, tag));
  };
  unionReaders.set(u, r);
  return r;
}

function without(src: Record<string, unknown>, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(src)) if (k !== key && k !== '__proto__') out[k] = src[k];
  return out;
}
