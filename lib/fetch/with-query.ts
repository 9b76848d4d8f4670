import { FetchError } from './errors';
import type { Scope } from './scope';

/** A value a path segment or query parameter can carry: an integer, a boolean or text. */
export type Scalar = string | number | boolean | bigint;

/** A query value: a `Scalar`, or null/undefined to leave the parameter out. */
export type QueryValue = Scalar | null | undefined;

/**
 * Query parameters by name. Anything but a `QueryValue` is a type error, and refused naming the
 * field at run time.
 */
export type QueryParams = { readonly [name: string]: QueryValue };

/**
 * The text of an int, bool or text value, or null when it is to be left out. Throws `code`
 * naming `what` for any other type, and for numbers that are not integers (the spec's fields
 * are ints; a float has no single spelling worth guessing).
 */
export function scalarText(
  value: unknown,
  what: string,
  code: 'BadQueryValue' | 'BadTemplate',
): string | null {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'number':
      if (Number.isSafeInteger(value)) return String(value);
      throw new FetchError(code, `${what}: ${value} is not an integer`);
    case 'undefined':
      return null;
    default:
      if (value === null) return null;
      throw new FetchError(
        code,
        `${what}: a ${Array.isArray(value) ? 'array' : typeof value} is not an int, bool or text`,
      );
  }
}

/** `base` with `pairs` appended: `?` or `&` as the base needs, before any fragment. */
export function appendQuery(base: string, pairs: string[]): string {
  if (pairs.length === 0) return base;
  const hash = base.indexOf('#');
  const head = hash < 0 ? base : base.slice(0, hash);
  const tail = hash < 0 ? '' : base.slice(hash);
  const q = head.indexOf('?');
  const sep = q < 0 ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return head + sep + pairs.join('&') + tail;
}

/** Appends `name=value` (percent-encoded) for each present field of `params` to `pairs`. */
export function queryPairs(params: object, pairs: string[], skip?: ReadonlySet<string>): string[] {
  for (const name of Object.keys(params)) {
    if (skip?.has(name)) continue;
    const text = scalarText(
      (params as Record<string, unknown>)[name],
      `query field "${name}"`,
      'BadQueryValue',
    );
    if (text !== null) pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
  }
  return pairs;
}

/**
 * `base` with `params` appended and percent-encoded. A null or undefined value
 * leaves its parameter out; a base that already has a `?` gets `&`. Any value that is not an
 * int, bool or text is refused naming the field (`BadQueryValue`), before anything is sent.
 *
 * @example
 * withQuery(c, 'http://stock.internal/items?all=1', { page: 2, sku: 'a b', after: null })
 * // → 'http://stock.internal/items?all=1&page=2&sku=a%20b'
 */
export function withQuery(_c: Scope, base: string, params: QueryParams): string {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new FetchError(
      'BadQueryValue',
      'withQuery params must be an object of int, bool or text fields',
    );
  }
  return appendQuery(base, queryPairs(params, []));
}
