import { HttpError } from './errors';

// Entity tags of versioned answers and the weak comparison of If-None-Match: pure functions the
// Ctx (c.clientHas), the Versioned capability and file answers share.

/** A version of one answer: an unsigned 64-bit integer (a safe integer or a bigint). */
export type Version = number | bigint;

const MAX = (1n << 64n) - 1n;

/** `W/"<version in decimal>"`: weak, because the same version may be sent gzipped or not. */
export function etagOf(version: Version): string {
  const ok =
    typeof version === 'number'
      ? Number.isSafeInteger(version) && version >= 0
      : typeof version === 'bigint' && version >= 0n && version <= MAX;
  if (!ok) {
    throw new HttpError(
      'BadHeaderValue',
      `version ${String(version)} is not an unsigned 64-bit integer`,
    );
  }
  return `W/"${String(version)}"`;
}

/**
 * Whether an `If-None-Match` value holds a tag, by weak comparison (RFC 9110 §13.1.2): a list of
 * tags, `W/` ignored, `*` matching any.
 */
export function noneMatchHolds(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header === tag) return true;
  const opaque = tag.startsWith('W/') ? tag.slice(2) : tag;
  for (const part of header.split(',')) {
    const t = part.trim();
    if (t === '*') return true;
    if ((t.startsWith('W/') ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}
