import { fail } from '../../core/fail';

/** Longest `Idempotency-Key`, in bytes. */
export const MAX_KEY_BYTES = 255;

/**
 * The key as sent: a bare value, or the quoted string form of the IETF draft (`"abc"` is `abc`).
 * Node joins repeated headers with ", "; the draft expects one key, so a value with a comma is
 * checked against the raw headers and two keys answer 400 (never the key `k1, k2`).
 */
export function readKey(
  header: string | string[] | undefined,
  rawHeaders?: readonly string[],
): string {
  if (Array.isArray(header) && header.length > 1) throw twoKeys();
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined) throw fail.badRequest('Idempotency-Key missing');
  if (rawHeaders !== undefined && raw.includes(',') && keyLines(rawHeaders) > 1) throw twoKeys();
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"'))
    key = key.slice(1, -1).replace(/\\(.)/g, '$1');
  if (key === '') throw fail.badRequest('Idempotency-Key is empty');
  // Node reads header bytes as latin1, one char a byte: the length is the size as it arrived. Only a
  // key handed in as a JS string (app.inject) can hold chars past U+00FF; those count as UTF-8.
  if (
    key.length > MAX_KEY_BYTES ||
    (key.length * 3 > MAX_KEY_BYTES &&
      NOT_LATIN1.test(key) &&
      Buffer.byteLength(key) > MAX_KEY_BYTES)
  ) {
    throw fail.badRequest('Idempotency-Key longer than %d bytes', MAX_KEY_BYTES);
  }
  return key;
}

const NOT_LATIN1 = /[^\u0000-\u00ff]/;

const twoKeys = (): Error => fail.badRequest('more than one Idempotency-Key');

/** How many Idempotency-Key lines the request's head holds. */
function keyLines(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 15 && rawHeaders[i]!.toLowerCase() === 'idempotency-key') n++;
  return n;
}

/** (caller, key) as one store key that no other pair can spell: the caller's length comes first. */
export const recordKey = (caller: string, key: string): string =>
  `${caller.length}:${caller}:${key}`;

/**
 * How a log line names a request's key: as the client sent it, with its caller when the route has
 * one (never the record key, whose length prefix means nothing to a reader).
 */
export const namedKey = (caller: string, key: string): string =>
  `Idempotency-Key ${JSON.stringify(key)}${caller === '' ? '' : ` of caller ${JSON.stringify(caller)}`}`;
