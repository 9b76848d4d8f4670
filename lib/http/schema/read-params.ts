import { readShape } from './read-shape';

/** A query string or form body as a reader takes it: name → its value, or its values in order when repeated. */
export type Params = Record<string, string | string[]>;

/** Returned when the text holds more parameters than allowed. */
export const TOO_MANY: unique symbol = Symbol('too many parameters');

/** Query and form parameters read per request unless the App says otherwise (Go's `net/url` bound). */
export const MAX_PARAMS = 10_000;

/** The names a class declares: all a reader of it needs from a query or a form. */
export function declaredNames(cls: Function): ReadonlySet<string> {
  return new Set(readShape(cls).properties.map((p) => p.name));
}

/**
 * Reads `application/x-www-form-urlencoded` text (a query string or a form body) as
 * `URLSearchParams` does, in one pass: a repeated name appends to its list in place, never a
 * copy (a copy per repeat made a 1 MiB form of one name cost an hour). Only the names in `keep`
 * are kept (all when null), and their values decoded; the record has no prototype, so a name
 * such as `__proto__`, `keys` or `toString` is only a name. `TOO_MANY` past `max` parameters
 * (empty pieces between `&`s are not parameters, as `URLSearchParams` skips them).
 *
 * @example
 * readParams('tag=a&tag=b&x=1', new Set(['tag']), 10_000); // [Object: null prototype] { tag: ['a', 'b'] }
 */
export function readParams(
  text: string,
  keep: ReadonlySet<string> | null,
  max: number,
): Params | typeof TOO_MANY {
  const out = Object.create(null) as Params;
  return eachParam(walk(text, max), keep, out, keepParam) === TOO_MANY ? TOO_MANY : out;
}

/**
 * The first value of `name` (as `URLSearchParams.get`), null when absent, or `TOO_MANY` past
 * `max` parameters. Reads every piece, so the bound holds whatever the route reads.
 */
export function firstParam(
  text: string,
  name: string,
  max: number,
): string | null | typeof TOO_MANY {
  return eachParam(walk(text, max), name, null, matchParam);
}

/**
 * A walk over urlencoded text: the text, its bound, and the parameter at hand, whose name is
 * `text[from, eq)` and value `text[eq + 1, to)` (none when `eq === to`). One small record a walk,
 * not one shared by all: no state outlives a walk, even one that a malformed escape ends.
 */
interface ParamWalk {
  text: string;
  max: number;
  from: number;
  eq: number;
  to: number;
}

const walk = (text: string, max: number): ParamWalk => ({ text, max, from: 0, eq: 0, to: 0 });

/**
 * What `eachParam` does with the parameter at hand. A string answer is the result: no later
 * parameter is taken, but all are still counted. Module functions with their state passed in, so
 * a request allocates no closure.
 */
type TakeParam<A, B> = (w: ParamWalk, a: A, b: B) => string | null;

/**
 * The one walk over urlencoded text: the pieces between `&`s (empty ones are not parameters),
 * each split at its first `=`; `TOO_MANY` past `max` parameters, else what `take` answered.
 */
function eachParam<A, B>(
  w: ParamWalk,
  a: A,
  b: B,
  take: TakeParam<A, B>,
): string | null | typeof TOO_MANY {
  const { text, max } = w;
  const end = text.length;
  let found: string | null = null;
  let count = 0;
  let at = 0;
  // The next `=` at or after `at`, looked for again only once passed: a text of pieces without
  // `=` would otherwise be searched to its end for every piece.
  let nextEq = -2;
  while (at < end) {
    let amp = text.indexOf('&', at);
    if (amp === -1) amp = end;
    if (amp > at) {
      if (++count > max) return TOO_MANY;
      if (found === null) {
        if (nextEq !== -1 && nextEq < at) nextEq = text.indexOf('=', at);
        w.from = at;
        w.eq = nextEq === -1 || nextEq > amp ? amp : nextEq;
        w.to = amp;
        found = take(w, a, b);
      }
    }
    at = amp + 1;
  }
  return found;
}

/** readParams' step: a kept name's value goes into `out`, a repeat appended to its list in place. */
function keepParam(w: ParamWalk, keep: ReadonlySet<string> | null, out: Params): null {
  const { text, eq, to } = w;
  const name = decodeParam(text, w.from, eq);
  if (keep === null || keep.has(name)) {
    const value = eq === to ? '' : decodeParam(text, eq + 1, to);
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (typeof prev === 'string') out[name] = [prev, value];
    else prev.push(value);
  }
  return null;
}

/** firstParam's step: the value when the name is the one looked for. */
function matchParam(w: ParamWalk, name: string): string | null {
  const { text, eq, to } = w;
  if (decodeParam(text, w.from, eq) !== name) return null;
  return eq === to ? '' : decodeParam(text, eq + 1, to);
}

// The WHATWG urlencoded parser's decoding: `+` is a space, `%XX` a byte, a `%` not followed by
// two hex digits stays as it is, and the bytes are read as UTF-8 (bad sequences become U+FFFD).
function decodeParam(text: string, from: number, to: number): string {
  const s = text.slice(from, to);
  let plus = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 0x25) return percentDecode(s);
    if (ch === 0x2b) plus = true;
  }
  return plus ? s.replace(PLUS, ' ') : s;
}

const PLUS = /\+/g;

function percentDecode(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  const n = bytes.length;
  let w = 0;
  for (let r = 0; r < n; r++) {
    let b = bytes[r]!;
    if (b === 0x2b) b = 0x20;
    else if (b === 0x25 && r + 2 < n) {
      const hi = hexValue(bytes[r + 1]!);
      const lo = hexValue(bytes[r + 2]!);
      if (hi >= 0 && lo >= 0) {
        b = hi * 16 + lo;
        r += 2;
      }
    }
    bytes[w++] = b;
  }
  return bytes.toString('utf8', 0, w);
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}
