import { Failure } from './errors';
import type { SERVER_SIDE } from '../../fetch/server-side';

export interface BearerCredentials {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  readonly [SERVER_SIDE]?: true;
  readonly scheme: 'bearer';
  /** The token. */
  readonly value: string;
}
export interface BasicCredentials {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  readonly [SERVER_SIDE]?: true;
  readonly scheme: 'basic';
  /** `user:password` as sent, decoded. */
  readonly value: string;
  readonly user: string;
  readonly password: string;
}
export type Credentials<S extends 'bearer' | 'basic'> = S extends 'bearer'
  ? BearerCredentials
  : BasicCredentials;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/**
 * Strict UTF-8 (RFC 7617 §2.1 with charset="UTF-8"): invalid bytes throw rather than become
 * U+FFFD, so a client's own U+FFFD is kept and broken bytes are a 401 (credentials that
 * do not decode are not credentials).
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** What a 401 for this scheme says would have been accepted. */
export const CHALLENGE = { bearer: 'Bearer', basic: 'Basic realm="fw", charset="UTF-8"' } as const;

export class AuthorizationFailure extends Failure {
  readonly challenge: string;
  /**
   * `options.challenge` replaces the bare scheme (RFC 6750 §3: `Bearer error="invalid_token"`);
   * `options.status` is 403 for `insufficient_scope`.
   */
  constructor(
    scheme: 'bearer' | 'basic',
    message: string,
    options: { readonly status?: number; readonly challenge?: string } = {},
  ) {
    super(options.status ?? 401, message);
    this.challenge = options.challenge ?? CHALLENGE[scheme];
  }
}

/** Parses an `Authorization` header for one scheme, or throws a 401 that carries `WWW-Authenticate`. */
export function parseAuthorization<S extends 'bearer' | 'basic'>(
  header: string | undefined,
  scheme: S,
): Credentials<S> {
  if (header === undefined || header === '')
    throw new AuthorizationFailure(scheme, 'Authorization header missing');
  const space = header.indexOf(' ');
  const given = (space === -1 ? header : header.slice(0, space)).toLowerCase();
  if (given !== scheme)
    throw new AuthorizationFailure(
      scheme,
      `Authorization scheme must be ${CHALLENGE[scheme].split(' ')[0]}`,
    );
  const token = space === -1 ? '' : header.slice(space + 1).trim();
  if (token === '') throw new AuthorizationFailure(scheme, 'Authorization token is empty');
  if (scheme === 'bearer') return { scheme: 'bearer', value: token } as Credentials<S>;
  if (!BASE64.test(token) || token.length % 4 !== 0)
    throw new AuthorizationFailure(scheme, 'Basic credentials do not decode');
  let decoded: string;
  try {
    decoded = UTF8.decode(Buffer.from(token, 'base64'));
  } catch {
    throw new AuthorizationFailure(scheme, 'Basic credentials do not decode');
  }
  const colon = decoded.indexOf(':');
  if (colon === -1) throw new AuthorizationFailure(scheme, 'Basic credentials do not decode');
  return {
    scheme: 'basic',
    value: decoded,
    user: decoded.slice(0, colon),
    password: decoded.slice(colon + 1),
  } as Credentials<S>;
}
