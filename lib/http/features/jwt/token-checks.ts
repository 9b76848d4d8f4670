/** The base64url alphabet, no padding (RFC 7515 §2: "with all trailing '=' characters omitted"). */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Whether each segment of a compact JWS is canonical base64url (RFC 7515 §2, RFC 4648 §5 and §3.5):
 * no padding, no character outside the alphabet, and no set bits past the last whole byte. A
 * lenient decoder reads `sig==`, `sig` with whitespace or `sig` with a changed last bit as the
 * same bytes, so a token accepted once could be sent again under another spelling: a replay that
 * a cache, a denylist or a log keyed by the token would not recognise.
 */
export function canonicalSegments(token: string): boolean {
  const segments = token.split('.');
  if (segments.length !== 3) return false;
  for (const segment of segments) {
    if (!BASE64URL.test(segment)) return false;
    // Decoding drops what a canonical encoder never writes (a lone sixth bit group, stray bits):
    // the segment is canonical when encoding its bytes gives it back.
    if (Buffer.from(segment, 'base64url').toString('base64url') !== segment) return false;
  }
  return true;
}

/** What `issuedAtProblem` checks `iat` against, in seconds. */
export interface IssuedAtBounds {
  /** Now, in whole seconds since the epoch (as jose counts it). */
  readonly nowS: number;
  /** The clock skew allowed (`clockToleranceS`). */
  readonly toleranceS: number;
  /** The oldest a token may be (`maxTokenAgeS`); undefined: no bound. */
  readonly maxAgeS: number | undefined;
}

/**
 * Why a verified token's `iat` is refused, or null: later than now by more than the tolerance (a
 * token from the future was minted by a wrong clock, or made to outlive its issuer's `exp` policy),
 * or earlier than `maxAgeS` plus the tolerance. jose has required `iat` when `maxAgeS` is set and
 * refused one that is not a number.
 */
export function issuedAtProblem(iat: unknown, bounds: IssuedAtBounds): string | null {
  if (typeof iat !== 'number') return null;
  const { nowS, toleranceS, maxAgeS } = bounds;
  if (iat > nowS + toleranceS) return 'claim iat is in the future';
  if (maxAgeS !== undefined && nowS - iat - toleranceS > maxAgeS)
    return `issued more than ${maxAgeS} s ago`;
  return null;
}
