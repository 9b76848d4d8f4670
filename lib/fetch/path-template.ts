import { FetchError } from './errors';
import { appendQuery, queryPairs, scalarText, type QueryParams, type Scalar } from './with-query';

// ── types: the template literal decides the arguments; a mixed or bad template is a type error ─

/** The names of the `{name}` segments of `P`. */
export type TemplateNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? (N extends '' ? never : N) | TemplateNames<Rest>
  : never;

/** One `Scalar` per `{}` segment of `P`. */
export type TemplatePositions<
  P extends string,
  Acc extends Scalar[] = [],
> = P extends `${string}{}${infer Rest}` ? TemplatePositions<Rest, [...Acc, Scalar]> : Acc;

/**
 * The arguments a template takes: a tuple as long as its `{}` segments; an object with a field
 * per `{name}` whose other fields go to the query; for a template without placeholders a query
 * object or nothing. A template mixing both forms takes nothing at all (`never`). A template that
 * is not a literal (`string`) is checked at run time only.
 */
export type PathArgs<P extends string> = string extends P
  ? readonly Scalar[] | QueryParams | null | undefined
  : [TemplateNames<P>] extends [never]
    ? TemplatePositions<P> extends []
      ? QueryParams | null | undefined
      : Readonly<TemplatePositions<P>>
    : TemplatePositions<P> extends []
      ? { readonly [K in TemplateNames<P>]: Scalar } & QueryParams
      : never;

/** True when `P` has no placeholder, so its arguments may be left out. */
export type TemplateIsPlain<P extends string> = string extends P
  ? false
  : [TemplateNames<P>] extends [never]
    ? TemplatePositions<P> extends []
      ? true
      : false
    : false;

// ── run time: the same rules, refused before anything is sent ──────────────────────────────

interface ParsedTemplate {
  /** Literal text around the placeholders: `parts.length === slots.length + 1`. */
  readonly parts: readonly string[];
  /** A name per `{name}`, or '' per `{}`. */
  readonly slots: readonly string[];
  readonly positional: number;
  readonly names: ReadonlySet<string>;
}

const PLACEHOLDER = /\{([^{}/]*)\}/g;
// Templates are literals in the program: a bounded cache of their parses saves a regex pass per call.
const parsed = new Map<string, ParsedTemplate>();

function parse(template: string): ParsedTemplate {
  const hit = parsed.get(template);
  if (hit) return hit;
  if (typeof template !== 'string' || (template !== '' && !template.startsWith('/'))) {
    throw new FetchError(
      'BadTemplate',
      `path template ${JSON.stringify(template)} must start with "/"`,
    );
  }
  const parts: string[] = [];
  const slots: string[] = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    parts.push(template.slice(last, m.index));
    slots.push(m[1]!);
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(template.slice(last));
  const positional = slots.filter((s) => s === '').length;
  const names = new Set(slots.filter((s) => s !== ''));
  if (positional > 0 && names.size > 0) {
    throw new FetchError('BadTemplate', `path template ${template} mixes {} and {name} segments`);
  }
  const result: ParsedTemplate = { parts, slots, positional, names };
  if (parsed.size < 1024) parsed.set(template, result);
  return result;
}

/**
 * A segment value as path text: text percent-encoded with `/` as data (`%2F`), so a value such
 * as `//evil.com` or `http://x` stays one segment under the base. Empty text, `.` and
 * `..` are refused: each would name another path than the one written.
 */
function segment(value: unknown, label: string, template: string): string {
  const text = scalarText(value, `path template ${template}, segment ${label}`, 'BadTemplate');
  if (text === null)
    throw new FetchError(
      'BadTemplate',
      `path template ${template}: missing value for segment ${label}`,
    );
  if (text === '' || text === '.' || text === '..') {
    throw new FetchError(
      'BadTemplate',
      `path template ${template}, segment ${label}: ${JSON.stringify(text)} would name another path`,
    );
  }
  return encodeURIComponent(text);
}

/** Fills `template` from `args` and appends the leftover fields as the query. */
export function fillTemplate(template: string, args: unknown): string {
  const t = parse(template);
  const isArray = Array.isArray(args);
  const isObject = args !== null && typeof args === 'object' && !isArray;
  if (args !== null && args !== undefined && !isArray && !isObject) {
    throw new FetchError(
      'BadTemplate',
      `path template ${template}: arguments must be a tuple or an object, got a ${typeof args}`,
    );
  }
  if (t.positional > 0) {
    if (!isArray)
      throw new FetchError(
        'BadTemplate',
        `path template ${template} has {} segments: give a tuple of ${t.positional}, not an object`,
      );
    const list = args as readonly unknown[];
    if (list.length !== t.positional) {
      throw new FetchError(
        'BadTemplate',
        `path template ${template} has ${t.positional} {} segment(s); the tuple has ${list.length}`,
      );
    }
    let out = t.parts[0]!;
    for (let i = 0; i < list.length; i++)
      out += segment(list[i], `#${i + 1}`, template) + t.parts[i + 1];
    return out;
  }
  if (isArray) {
    if (t.names.size > 0)
      throw new FetchError(
        'BadTemplate',
        `path template ${template} has {name} segments: give an object, not a tuple`,
      );
    if ((args as readonly unknown[]).length > 0)
      throw new FetchError(
        'BadTemplate',
        `path template ${template} has no {} segment; the tuple has ${(args as readonly unknown[]).length}`,
      );
    return template;
  }
  let out = t.parts[0]!;
  const fields = (args ?? {}) as Record<string, unknown>;
  for (let i = 0; i < t.slots.length; i++) {
    const name = t.slots[i]!;
    if (!Object.hasOwn(fields, name) || fields[name] === undefined || fields[name] === null) {
      throw new FetchError('BadTemplate', `path template ${template}: missing field "${name}"`);
    }
    out += segment(fields[name], `{${name}}`, template) + t.parts[i + 1];
  }
  return appendQuery(out, queryPairs(fields as QueryParams, [], t.names));
}
