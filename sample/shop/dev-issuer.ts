import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { type Ctx } from 'fw-http';
import { Bearer, type JwtCaller } from 'fw-http/jwt';

/** Tokens the development issuer signs live this long (SAMPLE.md: 15 minutes). */
export const DEV_TOKEN_SECONDS = 15 * 60;

/**
 * The shop's development issuer: an ES256 key made when the process starts (so tokens of an
 * earlier run no longer verify), whose public half is served at `/.well-known/jwks.json`.
 * Its issuer is the shop's own URL (see `ownUrl`).
 */
class DevKeys {
  readonly kid = randomUUID();
  readonly #pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** The public key set, as `/.well-known/jwks.json` serves it. */
  readonly jwks = {
    keys: [
      {
        ...this.#pair.publicKey.export({ format: 'jwk' }),
        kid: this.kid,
        alg: 'ES256',
        use: 'sig',
      },
    ],
  };

  /** A signed token: audience `shop` and 15 minutes unless told otherwise (the tests mint expired ones). */
  sign(t: {
    readonly issuer: string;
    readonly account: string;
    readonly scopes: readonly string[];
    readonly lifetimeS?: number;
    readonly audience?: string;
  }): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: t.scopes.join(' ') })
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'JWT' })
      .setIssuer(t.issuer)
      .setAudience(t.audience ?? 'shop')
      .setSubject(t.account)
      .setIssuedAt(now)
      .setExpirationTime(now + (t.lifetimeS ?? DEV_TOKEN_SECONDS))
      .sign(this.#pair.privateKey);
  }
}

export const devKeys = new DevKeys();

/**
 * The shop's URL as this request reached it (`http://` and its Host). Tokens carry it as `iss`
 * and are verified against the Host they are presented at: one minted at another name of the
 * shop does not pass there. Fine for a development issuer; a real one has a fixed URL.
 */
export function ownUrl(c: Ctx): string {
  return `http://${c.header('host') ?? 'localhost'}`;
}

/**
 * A caller proven by a JWT of the development issuer (RS256 or ES256; this issuer signs ES256).
 * Ask for it as a parameter, or guard routes with `@Requires(ShopJwt, 'admin')`.
 */
export class ShopJwt extends Bearer.jwt({
  issuer: ownUrl,
  audience: 'shop',
  keys: devKeys.jwks,
  algorithms: ['RS256', 'ES256'],
}) {}

/** True when the bearer token is shaped like a JWT (three base64url parts), not a demo token. */
export function bearsJwt(c: Ctx): boolean {
  const h = c.header('authorization');
  return h !== null && /^bearer [\w-]+\.[\w-]+\.[\w-]*$/i.test(h.trim());
}

/** The JWT caller of the request, resolved once per request. */
export const jwtCaller = (c: Ctx): Promise<JwtCaller> => c.resolveAsync(ShopJwt);
