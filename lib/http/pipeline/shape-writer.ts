/**
 * Writes one route's answers as JSON text, the same text `JSON.stringify(v) ?? 'null'` gives,
 * cheaper on the shape the route keeps returning (V8's generic walk is most of what a
 * small answer costs fw). A route's answers are instances of one class: an object answer gives the
 * shape (its own enumerable keys, in order); an object of that shape whose values are printable-ASCII
 * strings without `"` or `\`, numbers, booleans, null or arrays of those is written by concatenation,
 * and as it is ASCII its length is its size in bytes (no second count). Anything else goes through
 * `JSON.stringify`: another shape, a `toJSON`, an inherited enumerable key, a non-array answer, and a
 * nested object or a string that needs escaping (that property alone).
 *
 * Exactness: every value is read once, in the order `JSON.stringify` reads it, and a property the
 * fast path does not write is spelled by `JSON.stringify` under its own key (so `toJSON(key)` sees
 * the same key, and what is left out or thrown is the same). The only reads that can repeat are a
 * `toJSON` accessor on the answer itself, the elements of an array that turns out to hold something
 * else, and a Proxy answer's traps: a getter there would run twice.
 */
export interface ShapeWriter {
  /** The JSON text of `v`: `JSON.stringify(v) ?? 'null'`. */
  text(v: unknown): string;
  /** Whether the text `text` returned last is ASCII (its length is then its size in bytes). */
  ascii: boolean;
}

/** Printable ASCII but `"` and `\`: a string of these is written between quotes as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Anything but ASCII. */
const NOT_ASCII = /[^\x00-\x7f]/;

export function shapeWriter(): ShapeWriter {
  let keys: string[] | null = null;
  // Each key as JSON.stringify spells it, with its colon: `"id":`.
  let names: string[] = [];
  let plainKeys = true;
  // Until a shape has been written for an object other than the one it was learned from, an object
  // of another shape is learned instead (a few times at most): a route's first answer need not be
  // its usual one.
  let writes = 0;
  let relearn = 8;
  const writer: ShapeWriter = {
    ascii: false,
    text(v) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return slow(v);
      if (keys === null) {
        keys = Object.keys(v);
        names = keys.map((k) => JSON.stringify(k) + ':');
        plainKeys = !names.some((h) => NOT_ASCII.test(h));
      }
      if (!sameKeys(v, keys)) {
        if (writes > 1 || relearn === 0) return slow(v);
        relearn--;
        keys = null;
        writes = 0;
        return writer.text(v);
      }
      if ((v as { toJSON?: unknown }).toJSON !== undefined) return slow(v);
      let out = '';
      let ascii = plainKeys;
      let first = true;
      for (let i = 0, n = keys.length; i < n; i++) {
        const key = keys[i]!;
        const x = (v as Record<string, unknown>)[key];
        let s = primitive(x);
        if (s === null && Array.isArray(x)) s = list(x);
        if (s !== null) {
          out += (first ? '{' : ',') + names[i]! + s;
          first = false;
          continue;
        }
        if (x === undefined) continue;
        // Spelled by JSON.stringify under its own key: toJSON(key), omission, errors all as there.
        const one = JSON.stringify({ [key]: x });
        if (one.length === 2) continue; // `{}`: a function or a symbol, left out
        if (ascii && NOT_ASCII.test(one)) ascii = false;
        out += (first ? '{' : ',') + one.slice(1, -1);
        first = false;
      }
      writer.ascii = ascii;
      writes++;
      return first ? '{}' : out + '}';
    },
  };
  const slow = (v: unknown): string => {
    writer.ascii = false;
    return JSON.stringify(v) ?? 'null';
  };
  return writer;
}

/**
 * Whether `v` enumerates exactly `keys`, in order. The keys first (for-in reads no value): own keys
 * come first, in Object.keys order, and an inherited enumerable one makes the count differ.
 */
function sameKeys(v: object, keys: readonly string[]): boolean {
  let n = 0;
  for (const k in v) if (k !== keys[n++]) return false;
  return n === keys.length;
}

/** The JSON of a string, number, boolean or null the fast path writes, or null. */
function primitive(x: unknown): string | null {
  switch (typeof x) {
    case 'string':
      return PLAIN.test(x) ? '"' + x + '"' : null;
    case 'number':
      return Number.isFinite(x) ? '' + x : 'null';
    case 'boolean':
      return x ? 'true' : 'false';
    case 'object':
      return x === null ? 'null' : null;
    default:
      return null;
  }
}

/** An array of what `primitive` writes (holes and undefined are `null`, as JSON.stringify has them), or null. */
function list(x: unknown[]): string | null {
  if ((x as { toJSON?: unknown }).toJSON !== undefined) return null;
  let out = '[';
  for (let i = 0; i < x.length; i++) {
    const e = x[i];
    const s = e === undefined ? 'null' : primitive(e);
    if (s === null) return null;
    out += i === 0 ? s : ',' + s;
  }
  return out + ']';
}
