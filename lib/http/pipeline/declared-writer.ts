import { IS_ENUM } from '../../json/validator-names';
import {
  classSpelling,
  compileWriter,
  enumSpelling,
  unionOf,
  type UnionSpelling,
} from '../../json';
import type { HeaderEntry } from '../core/answers';
import { HttpError } from '../core/errors';
import { JSON_TYPE } from '../core/media-types';
import type { Ctx } from '../request/ctx';
import { writtenFields, type ValueShape } from '../schema';
import { anyValue, NOT_ASCII, quoted, type Write, type Written } from './json-values';
import { learnedShape } from './learned-shape';
import { exchangeOf } from '../request/exchange-of';

/**
 * fw's one JSON writer: every JSON answer and event is written by the writer compiled for its
 * route. The writer of a `@Returns(Class)` answer is compiled at build from what the class declares,
 * like fast-json-stringify: its class-validator properties (their kinds, nested classes,
 * arrays, `Union`s, `@IsOptional`), the fields a `new Class()` has, class-transformer's `@Expose`
 * less its `@Exclude`, spelled as `@Json` says. It writes those fields, in declaration order, and
 * nothing else: a `passwordHash` on the returned row, a getter the class does not declare, a
 * `toJSON` on the value (it would bypass the declaration) never reach the wire. A declared field is
 * read once, so a getter of that name runs once.
 *
 * A required field that is missing, or a value of another kind than declared (a string where an
 * integer is declared, null where the field is not optional), throws `AnswerMismatch` naming the
 * route and the field: the route answers 500 and logs it, as the document would otherwise lie.
 */
export interface DeclaredWriterOptions {
  /** `POST /orders (OrdersController.create)`, for the messages. */
  readonly label: string;
  /** Told each undeclared field left out, once per route and field (`PublicUser.passwordHash`); null: not looked for. */
  readonly dropped: ((field: string) => void) | null;
}

/** A route's compiled JSON writer. */
export interface JsonWriter {
  /** The JSON text of `v` and whether it is ASCII; throws `AnswerMismatch` where `v` does not fit. */
  written(v: unknown): Written;
  /** The JSON text of `v`. */
  text(v: unknown): string;
  /** Answers `v` as JSON through the Ctx (an ASCII text is not counted again for its Content-Length). */
  answer(c: Ctx, v: unknown, status: number, own: readonly HeaderEntry[] | null): void;
}

/**
 * The writer of a declared type: a class, a `Union`, `[T]`, `Object` (any value, spelled by its
 * runtime class), or null for a value nothing declares (a schema's output). A class that declares
 * no field at all (neither decorators nor fields) is "any object" in its document, and is written
 * as it comes (spelled by its `@Json` marker, if any).
 */
export function declaredWriter(type: unknown, options: DeclaredWriterOptions): JsonWriter {
  const write = compile(type, options);
  const top = Array.isArray(type) ? (type as unknown[])[0] : type;
  const name = typeof top === 'function' ? top.name : 'answer';
  const label = options.label;
  const written = (v: unknown): Written => {
    const out: Written = { text: '', ascii: true };
    try {
      out.text = write(v, out);
    } catch (e) {
      if (!(e instanceof Mismatch)) throw e;
      throw new HttpError(
        'AnswerMismatch',
        `${label}: the answer's ${name}${e.at.join('')} ${e.message}`,
      );
    }
    return out;
  };
  return {
    written,
    text: (v) => written(v).text,
    answer(c, v, status, own) {
      const json = written(v);
      if (json.ascii) exchangeOf(c).writeAscii(status, JSON_TYPE, json.text, own);
      else exchangeOf(c).write(status, JSON_TYPE, json.text, own);
    },
  };
}

/**
 * Writes one value as JSON text; throws a `Mismatch` when it does not fit the declaration. No path
 * is built while writing: a mismatch collects its place on the way out.
 */
function compile(type: unknown, options: DeclaredWriterOptions): Write {
  if (type === null) return learnedShape();
  if (type === Object) return anyValue;
  const top = Array.isArray(type) ? (type as unknown[])[0] : type;
  if (unionOf(top) === null && (typeof top !== 'function' || !declares(top))) {
    const spelled = compileWriter(type);
    const shape = learnedShape();
    return spelled === null ? shape : (v, out) => shape(spelled(v), out);
  }
  const one = new Compiler(options).type(top);
  return Array.isArray(type) ? listOf(one) : one;
}

/** Whether a class declares any field the writer would write. */
function declares(cls: Function): boolean {
  return fieldsOf(cls).length > 0;
}

interface FieldPlan {
  /** The property read off the value. */
  readonly key: string;
  /** `"wire":` */
  readonly head: string;
  readonly headAscii: boolean;
  readonly required: boolean;
  readonly nullable: boolean;
  readonly value: ValueShape | null;
}

/** The fields the writer writes, by the one rule the document follows too (`writtenFields`). */
function fieldsOf(cls: Function): FieldPlan[] {
  const mark = classSpelling(cls);
  return writtenFields(cls).written.map(({ name: key, property: p }) => {
    const head = JSON.stringify(mark === null ? key : mark.spell(key)) + ':';
    return {
      key,
      head,
      headAscii: !NOT_ASCII.test(head),
      // A field only `new Class()` or `@Expose` tells of has no declared kind: any JSON, optional.
      required: p?.required ?? false,
      nullable: p === null || p.optional,
      value: p?.value ?? null,
    };
  });
}

class Compiler {
  readonly #options: DeclaredWriterOptions;
  readonly #classes = new Map<Function, Write>();
  readonly #unions = new Map<UnionSpelling, Write>();
  readonly #reported = new Set<string>();

  constructor(options: DeclaredWriterOptions) {
    this.#options = options;
  }

  /** The writer of a class or a union (by its declaration; any JSON for anything else). */
  type(t: unknown): Write {
    const union = unionOf(t);
    if (union !== null) return this.union(union);
    if (typeof t === 'function') return this.object(t, null);
    return anyValue;
  }

  /** The writer of one class's fields, `omit` left out (a union's tag, written by the union). */
  object(cls: Function, omit: string | null): Write {
    const known = omit === null ? this.#classes.get(cls) : undefined;
    if (known !== undefined) return known;
    // Registered before its fields are compiled, so a class that refers to itself compiles.
    let body: Write = () => '';
    const w: Write = (x, out) => body(x, out);
    if (omit === null) this.#classes.set(cls, w);
    const plans = fieldsOf(cls).filter((f) => f.key !== omit);
    const writes = plans.map((f) => (f.value === null ? anyValue : this.value(f.value)));
    const mark = classSpelling(cls);
    const lead =
      mark?.tag != null ? `{${JSON.stringify(mark.tag)}:${JSON.stringify(cls.name)}` : '';
    const declared = new Set(plans.map((f) => f.key));
    if (omit !== null) declared.add(omit);
    const report = this.#options.dropped === null ? null : this.#undeclared(cls.name, declared);
    const n = plans.length;
    body = (x, written) => {
      if (x === null || typeof x !== 'object' || Array.isArray(x))
        throw new Mismatch(`is ${kindOf(x)}, declared ${cls.name}`);
      const v = x as Record<string, unknown>;
      let out = lead;
      let i = 0;
      try {
        for (; i < n; i++) {
          const f = plans[i]!;
          const y = v[f.key];
          let s: string;
          if (y === undefined) {
            if (f.required) throw new Mismatch('is missing, declared required');
            continue;
          } else if (y === null) {
            if (!f.nullable) throw new Mismatch('is null, not declared optional');
            s = 'null';
          } else s = writes[i]!(y, written);
          if (!f.headAscii) written.ascii = false;
          out += (out === '' ? '{' : ',') + f.head + s;
        }
      } catch (e) {
        if (e instanceof Mismatch) e.at.unshift(`.${plans[i]!.key}`);
        throw e;
      }
      if (report !== null) report(v);
      return out === '' ? '{}' : out + '}';
    };
    return w;
  }

  /** Reports each own enumerable key JSON would have written that the class does not declare, once. */
  #undeclared(name: string, declared: ReadonlySet<string>): (v: Record<string, unknown>) => void {
    const seen = this.#reported;
    const tell = this.#options.dropped!;
    return (v) => {
      for (const k of Object.keys(v)) {
        if (declared.has(k)) continue;
        const t = typeof v[k];
        if (t === 'undefined' || t === 'function' || t === 'symbol') continue;
        const field = `${name}.${k}`;
        if (seen.has(field)) continue;
        seen.add(field);
        tell(field);
      }
    };
  }

  value(s: ValueShape): Write {
    switch (s.kind) {
      case 'string':
        return stringValue;
      case 'number':
        return numberValue;
      case 'integer':
        return integerValue;
      case 'boolean':
        return booleanValue;
      case 'array':
        return listOf(s.items === undefined ? anyValue : this.value(s.items));
      case 'object':
        return s.ref === undefined ? objectValue : this.type(s.ref);
      case 'enum':
        return enumValue(s);
      case 'any':
        return anyValue;
    }
  }

  union(u: UnionSpelling): Write {
    const known = this.#unions.get(u);
    if (known !== undefined) return known;
    let body: Write = () => '';
    const w: Write = (x, out) => body(x, out);
    this.#unions.set(u, w);
    const tag = u.tag;
    const variants = new Map(
      u.variants.map((v) => {
        const name = JSON.stringify(v.name);
        const payload = v.type === null ? null : this.object(v.type, tag);
        return [v, { name, payload }] as const;
      }),
    );
    const names = u.variants.map((v) => v.name).join(', ');
    body = (x, out) => {
      let variant = u.variantOf(x);
      // A plain object naming its variant by the tag is that variant (a row from a query).
      if (variant === null && tag !== null && typeof x === 'object' && x !== null) {
        const said = (x as Record<string, unknown>)[tag];
        if (typeof said === 'string') variant = u.byName.get(said) ?? null;
      }
      if (variant === null)
        throw new Mismatch(`is ${kindOf(x)}, declared one of ${u.name}: ${names}`);
      const { name, payload } = variants.get(variant)!;
      if (payload === null)
        return tag === null ? `{${name}:{}}` : `{${JSON.stringify(tag)}:${name}}`;
      let inner: string;
      try {
        inner = payload(x, out);
      } catch (e) {
        if (e instanceof Mismatch) e.at.unshift(`(${variant.name})`);
        throw e;
      }
      if (tag === null) return `{${name}:${inner}}`;
      const head = `{${JSON.stringify(tag)}:${name}`;
      return inner === '{}' ? head + '}' : head + ',' + inner.slice(1);
    };
    return w;
  }
}

function listOf(item: Write): Write {
  return (x, written) => {
    if (!Array.isArray(x)) throw new Mismatch(`is ${kindOf(x)}, declared an array`);
    let out = '[';
    let i = 0;
    try {
      for (; i < x.length; i++) {
        const e: unknown = x[i];
        const s = e === null || e === undefined ? 'null' : item(e, written);
        out += i === 0 ? s : ',' + s;
      }
    } catch (e) {
      if (e instanceof Mismatch) e.at.unshift(`[${i}]`);
      throw e;
    }
    return out + ']';
  };
}

function stringValue(x: unknown, out: Written): string {
  if (typeof x === 'string') return quoted(x, out);
  // A Date under a date string (`@IsISO8601()`): its JSON, an ISO 8601 string.
  if (x instanceof Date) return JSON.stringify(x);
  throw wrongKind(x, 'a string');
}

function numberValue(x: unknown): string {
  if (typeof x === 'number') return Number.isFinite(x) ? '' + x : 'null';
  throw wrongKind(x, 'a number');
}

function integerValue(x: unknown): string {
  if (typeof x === 'number' && Number.isInteger(x)) return '' + x;
  throw wrongKind(x, 'an integer');
}

function booleanValue(x: unknown): string {
  if (typeof x === 'boolean') return x ? 'true' : 'false';
  throw wrongKind(x, 'a boolean');
}

function objectValue(x: unknown, out: Written): string {
  if (typeof x === 'object' && !Array.isArray(x)) return anyValue(x, out);
  throw wrongKind(x, 'an object');
}

function enumValue(s: ValueShape): Write {
  const c = s.constraints.find((k) => k.check === 'enum' && k.decorator === IS_ENUM);
  const spelled = c === undefined ? null : enumSpelling(c.constraints?.[0]);
  if (spelled === null) return anyValue;
  return (x, out) => anyValue(spelled.toName.get(x) ?? x, out);
}

/** What a value does not fit, and where (`.lines`, `[2]`, `.qty`, gathered on the way out); the writer turns it into `AnswerMismatch` naming the route. */
class Mismatch extends Error {
  readonly at: string[] = [];
}

function wrongKind(x: unknown, declared: string): Mismatch {
  return new Mismatch(`is ${kindOf(x)}, declared ${declared}`);
}

function kindOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  if (typeof x === 'object') {
    const name = (x as object).constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return `a ${typeof x}`;
}
