import { createPublicKey, type KeyObject } from 'node:crypto';
import type { SERVER_SIDE } from '../../../fetch/server-side';
import type * as Jose from 'jose';
import { checkNumber, checkWhole } from '../../../options';
import { AuthorizationFailure } from '../../core/authorization';

import type { Ctx } from '../../request/ctx';
import type { SecurityDeclaration } from '../../route/extensions';
import { joseApi, type JoseApi } from './jose-peer';
import { RemoteKeys, fetchJson } from './remote-keys';
import { remoteKeyOptions, type RemoteKeyOptions } from './remote-key-options';
import { canonicalSegments, issuedAtProblem } from './token-checks';

/** The claims of a verified token (RFC 7519 §4.1, and `scope`/`scp` of RFC 8693 §4.2 and common use). */
export interface JwtClaims {
  readonly iss?: string;
  readonly sub?: string;
  readonly aud?: string | readonly string[];
  readonly exp?: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly jti?: string;
  readonly scope?: string;
  readonly scp?: string | readonly string[];
  readonly [claim: string]: unknown;
}

/** How `Bearer.jwt` verifies tokens. Exactly one of `jwks`, `keys`, `secret`, `publicKey`, `discovery`. */
export interface JwtOptions<T> {
  /**
   * The `iss` every token must carry, exactly; a function when it is learnt per request (a
   * development issuer that is the server's own URL, known once it listens).
   */
  readonly issuer: string | ((c: Ctx) => string);
  /** The `aud` a token must name (one of them, when several). */
  readonly audience: string | readonly string[];
  /**
   * The URL of the issuer's key set: fetched once, refetched behind requests once older than
   * `remote.maxAgeMs`, and for an unknown `kid` at most once per `remote.cooldownMs`.
   */
  readonly jwks?: string;
  /** A key set held by the program itself (`{ keys: [...] }`). */
  readonly keys?: { readonly keys: readonly object[] };
  /** An HMAC secret (HS256/384/512), at least 32 bytes. */
  readonly secret?: string | Uint8Array;
  /** A public key in PEM (SPKI). */
  readonly publicKey?: string;
  /** Keys from the `jwks_uri` of `issuer + '/.well-known/openid-configuration'`; the document says openIdConnect. */
  readonly discovery?: boolean;
  /** Algorithms accepted. Default `['HS256']` with a secret, `['RS256', 'ES256']` otherwise; `none` never. */
  readonly algorithms?: readonly string[];
  /**
   * Seconds of clock skew allowed on `exp`, `nbf` and `iat`: a token whose `iat` is later than
   * now by more than this is refused. Default 5.
   */
  readonly clockToleranceS?: number;
  /**
   * The oldest a token may be, in seconds since its `iat` (which it must then carry), whatever its
   * `exp` says. Default: none (`exp` alone bounds a token's life).
   * @example Bearer.jwt({ issuer, audience, jwks, maxTokenAgeS: 3600 })
   */
  readonly maxTokenAgeS?: number;
  /** A token longer than this is 401 `invalid_token` before it is parsed. Default 8 KiB. */
  readonly maxTokenBytes?: number;
  /** Fetching the key set (and the discovery document): timeouts, cooldown, sizes. */
  readonly remote?: RemoteKeyOptions;
  /** The scheme's name under `components.securitySchemes`. Default `jwt` (`oidc` with discovery). */
  readonly schemeName?: string;
  /** Builds the resolved value from the verified claims. Default: an instance of the resolver class. */
  readonly map?: (claims: JwtClaims, c: Ctx) => T | Promise<T>;
}

/** The caller a JWT resolver gives when it has no `map`: its claims, subject and scopes. */
export class JwtCaller {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  readonly claims: JwtClaims;
  /** `sub`, or '' when the token has none. */
  readonly subject: string;
  /** The token's scopes: `scope` split on spaces, or `scp`. */
  readonly scopes: readonly string[];
  constructor(claims: JwtClaims) {
    this.claims = claims;
    this.subject = typeof claims.sub === 'string' ? claims.sub : '';
    this.scopes = scopesOf(claims);
  }
  hasScope(scope: string): boolean {
    return this.scopes.includes(scope);
  }
}

/** A resolver class made by `Bearer.jwt`: ask for it as a handler parameter, with `c.resolve`, or in `@Guard`/`@Requires`. */
export interface JwtResolver<T> {
  new (claims: JwtClaims): JwtCaller;
  resolve(c: Ctx): Promise<T>;
  /** The scheme the resolver reads (the document lists it). */
  readonly authorization: 'bearer';
  /** How the OpenAPI document declares it. */
  readonly security: SecurityDeclaration;
  /** The scopes of the request's verified token (after `resolve`); `@Requires` checks them. */
  scopesOf(c: Ctx): readonly string[];
  /** How the resolver answers a token without a scope it needs: 403 `insufficient_scope`. */
  insufficientScope(scopes: readonly string[]): Error;
  /** Key-set fetches made so far (0 for local keys). */
  readonly jwksFetches: number;
}

const DEFAULT_TOLERANCE_S = 5;
export const MAX_TOKEN_BYTES = 8 * 1024;
const HMAC = /^HS(256|384|512)$/;
const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^ES256K$/;

/**
 * Bearer resolvers. `Bearer.jwt(options)` verifies JWTs with jose (an optional peer: `npm install
 * jose@5`) and answers as RFC 6750 says: no token → 401 `WWW-Authenticate: Bearer`; a bad,
 * expired, not-yet-valid, wrongly issued or addressed token, or one in a disallowed algorithm → 401
 * `Bearer error="invalid_token"`; keys that cannot be fetched → 503.
 * @example
 * const Caller = Bearer.jwt({ issuer: 'https://id.example', audience: 'shop', jwks: 'https://id.example/jwks.json' });
 * @Get('/me') me(caller: Caller) { return { id: caller.subject } }  // with class Caller extends ... {}
 */
export const Bearer = Object.freeze({
  jwt<T = JwtCaller>(options: JwtOptions<T>): JwtResolver<T> {
    const jose = joseApi();
    const verify = verifier(jose, options);
    const seen = new WeakMap<Ctx, readonly string[]>();
    const map = options.map;
    const security = declaration(options);
    class Jwt extends JwtCaller {
      static readonly authorization = 'bearer' as const;
      static readonly security = security;
      static get jwksFetches(): number {
        return verify.keys?.fetches ?? 0;
      }
      static async resolve(this: new (claims: JwtClaims) => JwtCaller, c: Ctx): Promise<T> {
        const claims = await verify.check(c.authorization('bearer').value, c);
        seen.set(c, scopesOf(claims));
        return map ? map(claims, c) : (new this(claims) as T);
      }
      static scopesOf(c: Ctx): readonly string[] {
        return seen.get(c) ?? [];
      }
      static insufficientScope(scopes: readonly string[]): Error {
        return new AuthorizationFailure('bearer', `the token lacks scope ${scopes.join(' ')}`, {
          status: 403,
          challenge: `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`,
        });
      }
    }
    return Jwt as unknown as JwtResolver<T>;
  },
});

function scopesOf(claims: JwtClaims): readonly string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
  if (typeof claims.scp === 'string') return claims.scp.split(' ').filter((s) => s !== '');
  if (Array.isArray(claims.scp))
    return claims.scp.filter((s): s is string => typeof s === 'string');
  return [];
}

function declaration(o: JwtOptions<unknown>): SecurityDeclaration {
  if (o.discovery === true)
    return {
      name: o.schemeName ?? 'oidc',
      scheme: { type: 'openIdConnect', openIdConnectUrl: discoveryUrl(String(o.issuer)) },
      challenge: 'Bearer',
    };
  return {
    name: o.schemeName ?? 'jwt',
    scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    challenge: 'Bearer',
  };
}

const discoveryUrl = (issuer: string): string =>
  `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

/** A 401 `invalid_token` (RFC 6750 §3.1); the description is ours, quote-free. */
function invalidToken(why: string): AuthorizationFailure {
  const text = why.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  return new AuthorizationFailure('bearer', `invalid token: ${text}`, {
    challenge: `Bearer error="invalid_token", error_description="${text}"`,
  });
}

interface Verifier {
  check(token: string, c: Ctx): Promise<JwtClaims>;
  readonly keys: RemoteKeys | null;
}

function verifier(jose: JoseApi, o: JwtOptions<unknown>): Verifier {
  const issuer = o.issuer;
  const where = `Bearer.jwt({ issuer: ${typeof issuer === 'string' ? JSON.stringify(issuer) : 'ƒ'} })`;
  if ((typeof issuer !== 'string' && typeof issuer !== 'function') || issuer === '')
    throw new TypeError('Bearer.jwt: issuer must be the issuer URL tokens carry as "iss"');
  if (typeof issuer === 'function' && o.discovery === true)
    throw new TypeError(`${where}: discovery needs the issuer as a string`);
  const audiences = typeof o.audience === 'string' ? [o.audience] : [...(o.audience ?? [])];
  if (audiences.length === 0 || audiences.some((a) => typeof a !== 'string' || a === ''))
    throw new TypeError(`${where}: audience must name at least one audience`);
  const sources = (['jwks', 'keys', 'secret', 'publicKey', 'discovery'] as const).filter(
    (k) => o[k] !== undefined && o[k] !== false,
  );
  if (sources.length !== 1)
    throw new TypeError(
      `${where}: give exactly one of jwks, keys, secret, publicKey, discovery (got ${sources.join(', ') || 'none'})`,
    );
  const algorithms = algorithmsOf(o, where);
  const { tolerance, maxAge, maxBytes } = lifeLimits(o, where);
  const { key, keys } = keySource(jose, o, where);
  const options: Jose.JWTVerifyOptions = {
    issuer: typeof issuer === 'string' ? issuer : '',
    audience: audiences,
    algorithms,
    clockTolerance: tolerance,
    requiredClaims: maxAge === undefined ? ['exp'] : ['exp', 'iat'],
  };
  return {
    keys,
    async check(token, c) {
      if (token.length > maxBytes) throw invalidToken(`longer than ${maxBytes} bytes`);
      if (!canonicalSegments(token))
        throw invalidToken('not three segments of canonical base64url');
      let claims: JwtClaims;
      try {
        const { payload } = await jose.jwtVerify(
          token,
          key as Parameters<typeof jose.jwtVerify>[1],
          typeof issuer === 'string' ? options : { ...options, issuer: issuer(c) },
        );
        claims = payload as JwtClaims;
      } catch (e) {
        throw e instanceof jose.errors.JOSEError ? invalidToken(reason(jose, e)) : e;
      } finally {
        if (keys !== null) sayRefreshFailure(keys, c);
      }
      const bounds = {
        nowS: Math.floor(Date.now() / 1000),
        toleranceS: tolerance,
        maxAgeS: maxAge,
      };
      const problem = issuedAtProblem(claims.iat, bounds);
      if (problem !== null) throw invalidToken(problem);
      return claims;
    },
  };
}

/** The algorithms accepted, checked against the kind of key: HS with a secret, the others with public keys. */
function algorithmsOf(o: JwtOptions<unknown>, where: string): string[] {
  const symmetric = o.secret !== undefined;
  const algorithms = [...(o.algorithms ?? (symmetric ? ['HS256'] : ['RS256', 'ES256']))];
  for (const alg of algorithms)
    if (!(symmetric ? HMAC : ASYMMETRIC).test(alg))
      throw new TypeError(
        `${where}: algorithm ${alg} cannot be used with ${symmetric ? 'a secret (HS256/384/512 only)' : 'public keys (RS, PS, ES, EdDSA only)'}: mixing them is the HS/RS key confusion`,
      );
  return algorithms;
}

/** The settings that bound a token's life and size, checked. */
function lifeLimits(
  o: JwtOptions<unknown>,
  where: string,
): { tolerance: number; maxAge: number | undefined; maxBytes: number } {
  const owner = { where };
  const seconds = 'seconds';
  return {
    tolerance: checkNumber(owner, 'clockToleranceS', o.clockToleranceS ?? DEFAULT_TOLERANCE_S, {
      unit: seconds,
      min: 0,
    }),
    maxAge:
      o.maxTokenAgeS === undefined
        ? undefined
        : checkNumber(owner, 'maxTokenAgeS', o.maxTokenAgeS, { unit: seconds, above: 0 }),
    maxBytes: checkWhole(owner, 'maxTokenBytes', o.maxTokenBytes ?? MAX_TOKEN_BYTES, {
      unit: 'bytes',
      min: 1,
    }),
  };
}

/**
 * A refetch behind the held keys failed: one warning, on the request that first sees it (no
 * request waited on that fetch, so no 503 told of it). The keys go on serving until a refetch works.
 */
function sayRefreshFailure(keys: RemoteKeys, c: Ctx): void {
  const err = keys.takeRefreshFailure();
  if (err === null) return;
  const ageS = Math.round((Date.now() - keys.fetchedAt) / 1000);
  c.log.warn(
    { err },
    `the issuer's key set could not be refetched: verifying with the keys fetched ${ageS} s ago until a refetch works`,
  );
}

/** What the client is told; jose's own messages name claims in quotes. */
function reason(jose: JoseApi, e: Error): string {
  if (e instanceof jose.errors.JWTExpired) return 'expired';
  if (e instanceof jose.errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (e instanceof jose.errors.JWKSNoMatchingKey) return 'no key of the issuer matches';
  if (e instanceof jose.errors.JWSSignatureVerificationFailed) return 'signature does not verify';
  if (e instanceof jose.errors.JWTClaimValidationFailed) return `claim ${e.claim} ${e.reason}`;
  return 'malformed';
}

function keySource(
  jose: JoseApi,
  o: JwtOptions<unknown>,
  where: string,
): {
  key: Uint8Array | KeyObject | ReturnType<JoseApi['createLocalJWKSet']> | RemoteKeys['lookup'];
  keys: RemoteKeys | null;
} {
  if (o.secret !== undefined) {
    const secret = typeof o.secret === 'string' ? new TextEncoder().encode(o.secret) : o.secret;
    if (secret.length < 32) throw new TypeError(`${where}: secret must be at least 32 bytes`);
    return { key: secret, keys: null };
  }
  if (o.publicKey !== undefined) return { key: createPublicKey(o.publicKey), keys: null };
  if (o.keys !== undefined)
    return { key: jose.createLocalJWKSet(o.keys as Jose.JSONWebKeySet), keys: null };
  const remote = remoteKeyOptions(o.remote, where);
  const url = o.jwks !== undefined ? checkedUrl(o.jwks, where) : null;
  let found: string | null = null;
  const locate = async (): Promise<string> => {
    if (url !== null) return url;
    return (found ??= await discover(String(o.issuer), remote));
  };
  const keys = new RemoteKeys(jose, locate, remote);
  return { key: keys.lookup, keys };
}

function checkedUrl(url: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${where}: jwks must be an absolute URL, got ${url}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new TypeError(`${where}: jwks must be an http(s) URL, got ${url}`);
  return parsed.href;
}

/**
 * The `jwks_uri` of the issuer's discovery document (OpenID Connect Discovery 1.0 §4). The
 * document must name the same issuer (§4.3), so a document served for another issuer is refused.
 */
async function discover(
  issuer: string,
  o: { readonly timeoutMs: number; readonly maxBytes: number },
): Promise<string> {
  const doc = (await fetchJson(discoveryUrl(issuer), o)) as {
    issuer?: unknown;
    jwks_uri?: unknown;
  };
  if (typeof doc !== 'object' || doc === null || doc.issuer !== issuer)
    throw new Error(`the discovery document of ${issuer} names another issuer`);
  if (typeof doc.jwks_uri !== 'string')
    throw new Error(`the discovery document of ${issuer} has no jwks_uri`);
  return checkedUrl(doc.jwks_uri, `discovery of ${issuer}`);
}
