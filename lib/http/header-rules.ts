import { HttpError } from './errors';

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control bytes other than horizontal tab (RFC 9110 §5.5). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Headers the framework writes itself; a program setting one is refused. */
export const RESERVED = new Set(['content-type', 'content-length', 'transfer-encoding', 'connection']);

/** Checks one header a program wants to send and returns its lower-cased name. */
export function checkHeader(name: string, value: string): string {
  if (!TOKEN.test(name)) throw new HttpError('BadHeaderName', `header name ${JSON.stringify(name)} is not a token`);
  const key = name.toLowerCase();
  if (RESERVED.has(key)) throw new HttpError('ReservedHeader', `header "${key}" is written by the framework and cannot be set`);
  if (CONTROL.test(value)) throw new HttpError('BadHeaderValue', `header "${key}" holds a control byte`);
  return key;
}

/** Pending response headers: lower-cased name to value; `set-cookie` is a list. */
export type HeaderBag = Record<string, string | string[]>;

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
