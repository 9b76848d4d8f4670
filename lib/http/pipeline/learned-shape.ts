import { NOT_ASCII, plainList, plainValue, type Write, type Written } from './json-values';

/**
 * The write of a value nothing declares (a class that declares no field, a schema's output): the
 * text `JSON.stringify(v) ?? 'null'` gives, cheaper on the shape the route keeps returning (V8's
 * generic walk is most of what a small answer costs fw). A route's answers are instances of one
 * class: an object answer gives the shape (its own enumerable keys, in order); an object of that
 * shape whose values are printable-ASCII strings without `"` or `\`, numbers, booleans, null or
 * arrays of those is written by concatenation. Anything else goes through `JSON.stringify`:
 * another shape, a `toJSON`, an inherited enumerable key, a non-object answer, and a nested object
 * or a string that needs escaping (that property alone).
 *
 * Exactness: every value is read once, in the order `JSON.stringify` reads it, and a property the
 * fast path does not write is spelled by `JSON.stringify` under its own key (so `toJSON(key)` sees
 * the same key, and what is left out or thrown is the same). The only reads that can repeat are a
 * `toJSON` accessor on the answer itself, the elements of an array that turns out to hold something
 * else, and a Proxy answer's traps: a getter there would run twice.
 */
export function learnedShape(): Write {
  const shape = new Shape();
  return (v, out) => shape.write(v, out);
}

class Shape {
  #keys: string[] | null = null;
  /** Each key as JSON.stringify spells it, with its colon: `"id":`. */
  #names: string[] = [];
  #plainKeys = true;
  // Until a shape has been written for an object other than the one it was learned from, an object
  // of another shape is learned instead (a few times at most): a route's first answer need not be
  // its usual one.
  #writes = 0;
  #relearn = 8;

  write(v: unknown, out: Written): string {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return slow(v, out);
    if (this.#keys === null) this.#learn(v);
    if (!sameKeys(v, this.#keys!)) {
      if (this.#writes > 1 || this.#relearn === 0) return slow(v, out);
      this.#relearn--;
      this.#keys = null;
      this.#writes = 0;
      return this.write(v, out);
    }
    if ((v as { toJSON?: unknown }).toJSON !== undefined) return slow(v, out);
    if (!this.#plainKeys) out.ascii = false;
    const text = this.#fields(v as Record<string, unknown>, out);
    this.#writes++;
    return text;
  }

  #learn(v: object): void {
    const keys = Object.keys(v);
    this.#keys = keys;
    this.#names = keys.map((k) => JSON.stringify(k) + ':');
    this.#plainKeys = !this.#names.some((h) => NOT_ASCII.test(h));
  }

  /** The object's fields, in the learned order; one the fast path cannot write is JSON.stringify's. */
  #fields(v: Record<string, unknown>, out: Written): string {
    const keys = this.#keys!;
    const names = this.#names;
    let text = '';
    let first = true;
    for (let i = 0, n = keys.length; i < n; i++) {
      const key = keys[i]!;
      const x = v[key];
      if (x === undefined) continue;
      let s = plainValue(x);
      if (s === null && Array.isArray(x)) s = plainList(x);
      if (s === null) {
        // Spelled by JSON.stringify under its own key: toJSON(key), omission, errors all as there.
        const one = JSON.stringify({ [key]: x });
        if (one.length === 2) continue; // `{}`: a function or a symbol, left out
        if (out.ascii && NOT_ASCII.test(one)) out.ascii = false;
        text += (first ? '{' : ',') + one.slice(1, -1);
      } else text += (first ? '{' : ',') + names[i]! + s;
      first = false;
    }
    return first ? '{}' : text + '}';
  }
}

function slow(v: unknown, out: Written): string {
  out.ascii = false;
  return JSON.stringify(v) ?? 'null';
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
