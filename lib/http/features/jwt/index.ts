/**
 * `fw-http/jwt`: bearer JWTs checked with jose (an optional peer). `Bearer.jwt(options)` makes a
 * resolver class whose `resolve` gives a `JwtCaller` (or the program's own value); the remote key
 * sets it fetches are bounded by `JWKS_DEFAULTS`, a token by `MAX_TOKEN_BYTES`. This file is the
 * folder's only public door.
 */
export {
  Bearer,
  JwtCaller,
  MAX_TOKEN_BYTES,
  type JwtClaims,
  type JwtOptions,
  type JwtResolver,
} from './bearer-jwt';
export { JWKS_DEFAULTS, type RemoteKeyOptions } from './remote-key-options';
