import { HttpError } from './errors';

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * What a header value may hold: TAB, space and visible ASCII (RFC 9110 §5.5). A control byte is
 * dangerous; a character above U+00FF Node refuses with a throw that would reset the connection;
 * obs-text (0x80-0xFF) RFC 9110 calls obsolete, and Node writes it as one byte or as two (UTF-8)
 * depending on whether the body is a string joined to the head: refused too, so the bytes on the
 * wire never depend on the body. Encode such text (RFC 8187 `filename*=UTF-8''…`, percent-encoding).
 */
const UNSENDABLE = /[^\t\x20-\x7e]/;
/** Control bytes other than horizontal tab (RFC 9110 §5.5). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Headers the framework writes itself; a program setting one is refused. */
export const RESERVED = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/** Checks one header a program wants to send and returns its lower-cased name. */
export function checkHeader(name: string, value: string): string {
  if (!TOKEN.test(name))
    throw new HttpError('BadHeaderName', `header name ${JSON.stringify(name)} is not a token`);
  const key = name.toLowerCase();
  if (RESERVED.has(key))
    throw new HttpError(
      'ReservedHeader',
      `header "${key}" is written by the framework and cannot be set`,
    );
  if (UNSENDABLE.test(value)) throw badValue(key, value);
  return key;
}

/** Checks a header value the program gave through another door (a content type, a Cache-Control). */
export function checkValue(key: string, value: string): void {
  if (UNSENDABLE.test(value)) throw badValue(key, value);
}

const badValue = (key: string, value: string): HttpError =>
  new HttpError(
    'BadHeaderValue',
    `header "${key}" ${CONTROL.test(value) ? 'holds a control byte' : 'holds a character outside ASCII'}`,
  );

/**
 * Why one header of a bag cannot be written (a control byte in its value, a name that
 * is not a token), or null when it can. Used after
 * Node refused a head, to name the header, so it need not run on every answer.
 */
export function headerProblem(key: string, value: string | readonly string[]): HttpError | null {
  if (!TOKEN.test(key))
    return new HttpError('BadHeaderName', `header name ${JSON.stringify(key)} is not a token`);
  for (const v of typeof value === 'string' ? [value] : value)
    if (UNSENDABLE.test(String(v))) return badValue(key, String(v));
  return null;
}

/** Pending response headers: lower-cased name to value; `set-cookie` is a list. */
export type HeaderBag = Record<string, string | string[]>;

/** A copy of a bag, its lists copied too: what was set before a step that may add to it. */
export function copyBag(bag: HeaderBag | null): HeaderBag | null {
  if (bag === null) return null;
  const out: HeaderBag = {};
  for (const k in bag) {
    const v = bag[k]!;
    out[k] = Array.isArray(v) ? [...v] : v;
  }
  return out;
}

/**
 * Adds a header to a bag following the spec's header rules: `Set-Cookie` and `Vary` add rather
 * than replace, and adding a pair already present adds nothing.
 */
export function addHeader(bag: HeaderBag, key: string, value: string): void {
  if (key === 'set-cookie') {
    const prev = bag[key];
    if (prev === undefined) bag[key] = [value];
    else if (!(prev as string[]).includes(value)) (prev as string[]).push(value);
    return;
  }
  if (key === 'vary') {
    const prev = bag[key] as string | undefined;
    if (prev === undefined) bag[key] = value;
    else {
      const have = prev.toLowerCase().split(/\s*,\s*/);
      const add = value.split(/\s*,\s*/).filter((v) => v && !have.includes(v.toLowerCase()));
      if (add.length) bag[key] = prev + ', ' + add.join(', ');
    }
    return;
  }
  bag[key] = value;
}
