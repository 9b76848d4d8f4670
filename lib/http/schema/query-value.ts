import type { ValueKind } from './read-shape';

/** Returned when a query string does not convert to its declared kind. */
export const NOT_CONVERTED: unique symbol = Symbol('not converted');

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Converts one query string by the declared kind (a misfit is a 400): integers are `/^-?\d+$/`
 * and safe, numbers are finite decimals (no hex, no blanks, no `Infinity`), booleans are
 * `true`/`false`/`1`/`0`. For an enum the member whose text equals the string is taken, so
 * `?status=2` reads as the number 2 when 2 is a member; anything else is left as text and
 * the enum check refuses it.
 */
export function convertQueryScalar(
  kind: ValueKind,
  raw: string,
  members: readonly unknown[] | null,
): unknown {
  switch (kind) {
    case 'integer': {
      if (!INTEGER.test(raw)) return NOT_CONVERTED;
      const n = Number(raw);
      return Number.isSafeInteger(n) ? n : NOT_CONVERTED;
    }
    case 'number': {
      if (!DECIMAL.test(raw)) return NOT_CONVERTED;
      const n = Number(raw);
      return Number.isFinite(n) ? n : NOT_CONVERTED;
    }
    case 'boolean':
      return raw === 'true' || raw === '1'
        ? true
        : raw === 'false' || raw === '0'
          ? false
          : NOT_CONVERTED;
    case 'enum':
      if (members !== null) {
        for (let i = 0; i < members.length; i++) if (String(members[i]) === raw) return members[i];
      }
      return raw;
    default:
      return raw;
  }
}
