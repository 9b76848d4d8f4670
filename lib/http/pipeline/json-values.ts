import { spell } from '../../json';

/**
 * One JSON text being written: whether it is ASCII so far (its length is then its size in bytes,
 * so the answer is not counted again) and, once written, the text. Made for each text and handed
 * down through the writes that make it.
 */
export interface Written {
  text: string;
  ascii: boolean;
}

/** Writes one value as JSON text, noting in `out` what it wrote that is not ASCII. */
export type Write = (x: unknown, out: Written) => string;

/** Printable ASCII but `"` and `\`: a string of these is written between quotes as it is. */
export const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Anything but ASCII. */
export const NOT_ASCII = /[^\x00-\x7f]/;

/** Text JSON.stringify wrote, noted in `out` when it is not ASCII. */
export function noted(s: string, out: Written): string {
  if (out.ascii && NOT_ASCII.test(s)) out.ascii = false;
  return s;
}

export function quoted(x: string, out: Written): string {
  if (PLAIN.test(x)) return '"' + x + '"';
  return noted(JSON.stringify(x), out);
}

/**
 * A value whose kind nothing declares: its JSON, as `JSON.stringify(spell(x)) ?? 'null'` writes it
 * (an instance of a marked class spelled by its class).
 */
export function anyValue(x: unknown, out: Written): string {
  switch (typeof x) {
    case 'string':
      return quoted(x, out);
    case 'number':
      return Number.isFinite(x) ? '' + x : 'null';
    case 'boolean':
      return x ? 'true' : 'false';
    default:
      break;
  }
  // A list of plain values, the usual case (`tags: ['a', 'b']`), without JSON.stringify's walk.
  if (Array.isArray(x)) {
    const fast = plainList(x);
    if (fast !== null) return fast;
  }
  return noted(JSON.stringify(spell(x)) ?? 'null', out);
}

/**
 * An array of plain strings, finite numbers, booleans and nulls as JSON (holes and undefined are
 * `null`, as JSON.stringify has them), or null for anything else. What it writes is ASCII.
 */
export function plainList(x: unknown[]): string | null {
  if ((x as { toJSON?: unknown }).toJSON !== undefined) return null;
  let out = '[';
  for (let i = 0; i < x.length; i++) {
    const s = plainValue(x[i]);
    if (s === null) return null;
    out += i === 0 ? s : ',' + s;
  }
  return out + ']';
}

/**
 * The JSON of a plain string (printable ASCII, nothing to escape), a number, a boolean, null or
 * undefined (`null`, as in a list), or null for anything else.
 */
export function plainValue(x: unknown): string | null {
  switch (typeof x) {
    case 'string':
      return PLAIN.test(x) ? '"' + x + '"' : null;
    case 'number':
      return Number.isFinite(x) ? '' + x : 'null';
    case 'boolean':
      return x ? 'true' : 'false';
    case 'undefined':
      return 'null';
    case 'object':
      return x === null ? 'null' : null;
    default:
      return null;
  }
}
