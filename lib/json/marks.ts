import 'reflect-metadata';
import { RENAME_ALL, renameWith, type RenameAll } from './rename';

/** The JSON spelling of a class or a union (the seed's `fw_json`). */
export interface JsonOptions {
  /**
   * On a union: the key the variant name goes under, beside the variant's own fields (internally
   * tagged). Without it a union is externally tagged: `{ "<variant>": { …fields } }`.
   * On a class: the class's name is written under this key beside its fields.
   */
  readonly tag?: string;
  /** Spells every field name (on a class) or variant name (on a union). */
  readonly renameAll?: RenameAll;
  /** One name's spelling; wins over `renameAll` for that name. */
  readonly rename?: Readonly<Record<string, string>>;
}

/** The spelling of an enum's member names (`jsonEnum`). Enums have no tag. */
export interface JsonEnumOptions<E extends object = object> {
  readonly renameAll?: RenameAll;
  readonly rename?: { readonly [K in keyof E]?: string };
}

/** A marker as read back: how one name is spelled, and whether anything is renamed at all. */
export interface Spelling {
  readonly tag: string | null;
  readonly renameAll: RenameAll | null;
  /**
   * True when `renameAll` or `rename` is given (what an input type, read by its own names, may not
   * have).
   */
  readonly renames: boolean;
  /** The spelling of one TypeScript name. */
  spell(name: string): string;
}

// Private keys: nothing outside this module reads or writes these marks.
const CLASS_MARK = Symbol('fw.json.class');
const ENUM_MARK = Symbol('fw.json.enum');
const UNION_MARK = Symbol('fw.json.union');

// Set once the program declares its first marker. The paths that look at values by their runtime
// class (`spell`) return at once while it is false, so a program without markers pays nothing.
let anyMarker = false;
export const markersDeclared = (): boolean => anyMarker;

function spelling(where: string, options: JsonOptions, allowTag: boolean): Spelling {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${where}: options must be an object`);
  const { tag, renameAll, rename } = options;
  if (tag !== undefined && (!allowTag || typeof tag !== 'string' || tag === '')) {
    throw new TypeError(
      allowTag ? `${where}: tag must be a non-empty string` : `${where}: an enum has no tag`,
    );
  }
  if (renameAll !== undefined && !RENAME_ALL.includes(renameAll)) {
    throw new TypeError(
      `${where}: renameAll must be one of ${RENAME_ALL.map((r) => `'${r}'`).join(', ')} (there is no snake case), got ${JSON.stringify(renameAll)}`,
    );
  }
  const own = new Map<string, string>();
  for (const [name, spelled] of Object.entries(rename ?? {})) {
    if (typeof spelled !== 'string' || spelled === '')
      throw new TypeError(`${where}: rename.${name} must be a non-empty string`);
    own.set(name, spelled);
  }
  const cache = new Map<string, string>();
  const rule = renameAll ?? null;
  return Object.freeze({
    tag: tag ?? null,
    renameAll: rule,
    renames: rule !== null || own.size > 0,
    spell(name: string): string {
      let s = cache.get(name);
      if (s === undefined) {
        s = own.get(name) ?? (rule === null ? name : renameWith(rule, name));
        cache.set(name, s);
      }
      return s;
    },
  });
}

/**
 * Sets a class's JSON spelling: every answer, `c.sendJson` and outbound JSON body writes it, and
 * `res.json(T)` reads it back, with no further declaration. A class used as `@Body`, `@Query()` or
 * `@Form` may have a `tag` but no `renameAll`/`rename`: an input is read by its own field names.
 *
 * @example
 * @Json({ renameAll: 'kebab-case', rename: { id: 'order_id' } })
 * class Order { id!: string; createdAt!: string }   // {"order_id":"…","created-at":"…"}
 */
export function Json(options: JsonOptions): ClassDecorator {
  const s = spelling('@Json', options, true);
  return (target) => {
    Reflect.defineMetadata(CLASS_MARK, s, target);
    anyMarker = true;
  };
}

/**
 * Sets an enum's JSON spelling: a property declared with `@IsEnum(E)` is written as the member's
 * spelled *name* (not its value) and read back into the member's value.
 *
 * @example
 * enum Color { DarkBlue = 1, LightGreen = 2 }
 * jsonEnum(Color, { renameAll: 'kebab-case' });  // Color.DarkBlue ⇄ "dark-blue"
 */
export function jsonEnum<E extends object>(e: E, options: JsonEnumOptions<E>): E {
  const members = Object.keys(e).filter((k) => Number.isNaN(Number(k)));
  const s = spelling('jsonEnum', options as JsonOptions, false);
  const toName = new Map<unknown, string>();
  const toValue = new Map<string, unknown>();
  for (const m of members) {
    const value = (e as Record<string, unknown>)[m];
    const name = s.spell(m);
    if (toValue.has(name)) throw new TypeError(`jsonEnum: two members are spelled "${name}"`);
    toName.set(value, name);
    toValue.set(name, value);
  }
  Reflect.defineMetadata(
    ENUM_MARK,
    Object.freeze({ toName, toValue, names: Object.freeze([...toValue.keys()]) }),
    e,
  );
  anyMarker = true;
  return e;
}

/** A marked enum: member values ⇄ spelled member names. */
export interface EnumSpelling {
  readonly toName: ReadonlyMap<unknown, string>;
  readonly toValue: ReadonlyMap<string, unknown>;
  readonly names: readonly string[];
}

/** The marker a class carries (its own, or a base class's), or null. */
export function classSpelling(cls: unknown): Spelling | null {
  if (typeof cls !== 'function') return null;
  return (Reflect.getMetadata(CLASS_MARK, cls) as Spelling | undefined) ?? null;
}

/** The spelling of an enum marked with `jsonEnum`, or null. */
export function enumSpelling(e: unknown): EnumSpelling | null {
  if (typeof e !== 'object' || e === null) return null;
  return (Reflect.getOwnMetadata(ENUM_MARK, e) as EnumSpelling | undefined) ?? null;
}

// ---- Unions

type Variants = { readonly [name: string]: (abstract new (...args: never[]) => object) | null };

/**
 * The value that stands for a payload-less variant (`Shape.empty`). Return it from a handler like
 * any other value of the union; reading gives back this very object.
 */
export class UnitVariant<N extends string = string> {
  readonly #union: UnionSpelling;
  /** @internal made by `Union` only */
  constructor(
    union: UnionSpelling,
    readonly variant: N,
  ) {
    this.#union = union;
  }
  /** The variant as JSON writes it: `{ "empty": {} }`, or `{ "<tag>": "empty" }` when tagged. */
  toJSON(): Record<string, unknown> {
    const u = this.#union;
    const name = u.byKey.get(this.variant)!.name;
    return u.tag === null ? { [name]: {} } : { [u.tag]: name };
  }
  /** @internal the union this constant belongs to */
  static unionOf(v: UnitVariant): UnionSpelling {
    return v.#union;
  }
}

type ValueOf<V extends Variants> = {
  [K in keyof V]: V[K] extends abstract new (...args: never[]) => infer I
    ? I
    : UnitVariant<K & string>;
}[keyof V];
type Units<V extends Variants> = {
  readonly [K in keyof V as V[K] extends null ? K : never]: UnitVariant<K & string>;
};

/**
 * A union declared with `Union(...)`: usable wherever a class is (`@Returns(Shape)`,
 * `@Type(() => Shape)` on a property, `res.json(Shape)`), never constructed. Its values are
 * `InstanceType<typeof Shape>`; each payload-less variant is a constant on it (`Shape.empty`).
 */
export type UnionType<V extends Variants = Variants> = (abstract new () => ValueOf<V>) & Units<V>;

/** One variant of a union, as read back. */
export interface VariantSpelling {
  /** The name given in the `Union(...)` call. */
  readonly key: string;
  /** The name as JSON spells it. */
  readonly name: string;
  /** The payload class, or null for a payload-less variant. */
  readonly type: Function | null;
  readonly unit: UnitVariant | null;
}

/** A union as read back. */
export interface UnionSpelling {
  readonly name: string;
  readonly target: Function;
  readonly tag: string | null;
  readonly variants: readonly VariantSpelling[];
  readonly byKey: ReadonlyMap<string, VariantSpelling>;
  readonly byName: ReadonlyMap<string, VariantSpelling>;
  /** The variant of a runtime value: a unit constant of this union, or an instance of a variant class. */
  variantOf(value: unknown): VariantSpelling | null;
}

// A payload-less variant is a property of the union function: these names are the function's own.
const FUNCTION_OWN = new Set([
  'name',
  'length',
  'prototype',
  'caller',
  'arguments',
  'apply',
  'bind',
  'call',
  'toString',
  'constructor',
]);

/**
 * Declares a union of classes (and payload-less variants, given as `null`). A value of it is
 * written externally tagged by default (`{ "circle": { "r": 1 } }`, a payload-less variant as
 * `{ "empty": {} }`), internally tagged with `tag` (`{ "kind": "circle", "r": 1 }`,
 * `{ "kind": "empty" }`). The writer tells the variant of a value by its class
 * (`value instanceof Circle`), so a class may appear once; a payload-less variant is the constant
 * `Shape.<name>`. `renameAll`/`rename` spell the variant names.
 *
 * @example
 * const Shape = Union('Shape', { circle: Circle, square: Square, empty: null }, { tag: 'kind' });
 * type Shape = InstanceType<typeof Shape>;   // Circle | Square | UnitVariant<'empty'>
 * class Drawing { @ValidateNested() @Type(() => Shape) shape!: Shape }
 */
export function Union<const V extends Variants>(
  name: string,
  variants: V,
  options: JsonOptions = {},
): UnionType<V> {
  const where = `Union ${JSON.stringify(name)}`;
  if (typeof name !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(name))
    throw new TypeError(`Union: the name must be an identifier, got ${JSON.stringify(name)}`);
  if (typeof variants !== 'object' || variants === null || Object.keys(variants).length === 0)
    throw new TypeError(`${where}: give at least one variant`);
  const s = spelling(where, options, true);
  const target = unionTarget(name);
  const table = new VariantTable(where, s);
  const union: UnionSpelling = Object.freeze({
    name,
    target,
    tag: s.tag,
    variants: table.list,
    byKey: table.byKey,
    byName: table.byName,
    variantOf: (value: unknown) => table.of(union, value),
  });
  for (const [key, type] of Object.entries(variants)) table.add(union, key, type);
  Object.freeze(table.list);
  Object.defineProperty(target, UNION_MARK, { value: union });
  anyMarker = true;
  return Object.freeze(target) as unknown as UnionType<V>;
}

/** A union's variants as declared: in order, by key, by spelled name and by class. */
class VariantTable {
  readonly list: VariantSpelling[] = [];
  readonly byKey = new Map<string, VariantSpelling>();
  readonly byName = new Map<string, VariantSpelling>();
  readonly #byClass = new Map<Function, VariantSpelling>();
  readonly #where: string;
  readonly #spelling: Spelling;

  constructor(where: string, spelling: Spelling) {
    this.#where = where;
    this.#spelling = spelling;
  }

  /** Adds a variant: a class, or null for one without payload (its constant is made here). */
  add(union: UnionSpelling, key: string, type: unknown): void {
    const where = this.#where;
    if (type !== null && typeof type !== 'function')
      throw new TypeError(
        `${where}: variant ${key} must be a class, or null for a variant without payload`,
      );
    if (type !== null && this.#byClass.has(type))
      throw new TypeError(
        `${where}: ${type.name} is given for two variants; the writer tells variants apart by their class`,
      );
    const spelled = this.#spelling.spell(key);
    if (this.byName.has(spelled))
      throw new TypeError(`${where}: two variants are spelled "${spelled}"`);
    const unit = type === null ? unitConstant(union, key, where) : null;
    const v: VariantSpelling = Object.freeze({ key, name: spelled, type, unit });
    this.list.push(v);
    this.byKey.set(key, v);
    this.byName.set(spelled, v);
    if (type !== null) this.#byClass.set(type, v);
  }

  /** The variant of a value: its constant's, its class's, or a subclass's; null for none. */
  of(union: UnionSpelling, value: unknown): VariantSpelling | null {
    if (value === null || typeof value !== 'object') return null;
    if (value instanceof UnitVariant)
      return UnitVariant.unionOf(value) === union ? this.byKey.get(value.variant)! : null;
    const exact = this.#byClass.get(value.constructor);
    if (exact !== undefined) return exact;
    for (const v of this.list) if (v.type !== null && value instanceof v.type) return v;
    return null;
  }
}

/** The function that stands for a union (`@Type(() => Shape)`): named after it, never called. */
function unionTarget(name: string): Function {
  const target = function (): never {
    throw new TypeError(
      `${name} is a union: use an instance of one of its variant classes, or one of its constants`,
    );
  } as unknown as Function;
  Object.defineProperty(target, 'name', { value: name });
  return target;
}

/** A payload-less variant's constant, set on the union's function as `Shape.<key>`. */
function unitConstant(union: UnionSpelling, key: string, where: string): UnitVariant {
  if (FUNCTION_OWN.has(key))
    throw new TypeError(
      `${where}: a variant without payload cannot be called "${key}" (it becomes ${union.name}.${key})`,
    );
  const unit = new UnitVariant(union, key);
  Object.freeze(unit);
  Object.defineProperty(union.target, key, { value: unit, enumerable: true });
  return unit;
}

/** The union a value declared with `Union(...)` stands for, or null. */
export function unionOf(x: unknown): UnionSpelling | null {
  return typeof x === 'function' && Object.prototype.hasOwnProperty.call(x, UNION_MARK)
    ? (x as unknown as { [UNION_MARK]: UnionSpelling })[UNION_MARK]
    : null;
}
