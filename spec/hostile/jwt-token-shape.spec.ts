import { SignJWT } from 'jose';
import { App, Controller, Ctx, Get, Guard, Returns } from 'fw-http';
import { Bearer, type JwtResolver } from 'fw-http/jwt';
import { canonicalSegments } from '../../lib/http/features/jwt/token-checks';
import { signingKey, type SigningKey } from '../support/jwks-server';
import { send } from '../support/post';

// Tokens that verify under a lenient reading but are not what the issuer signed as it spelled it
// (padding, stray bits), and tokens whose `iat` is out of bounds, over real sockets.

const ISSUER = 'https://id.example';
const SECRET = 'a secret of at least thirty-two bytes!';
let rs: SigningKey;

beforeAll(async () => {
  rs = await signingKey('RS256', 'rs-1');
});

const viaKeys = (o: Partial<Parameters<typeof Bearer.jwt>[0]> = {}) =>
  Bearer.jwt({ issuer: ISSUER, audience: 'shop', keys: { keys: [rs.jwk] }, ...o });

/** A token signed with `rs`, exp an hour on, claims (iat among them) as given. */
function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({
    iss: ISSUER,
    aud: 'shop',
    exp: Math.floor(Date.now() / 1000) + 3600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: rs.kid })
    .sign(rs.privateKey);
}

const nowS = () => Math.floor(Date.now() / 1000);

/** The status and challenge of GET /who with `bearer`, on an app guarded by `resolver`. */
async function answer(resolver: JwtResolver<unknown>, bearer: string) {
  @Guard(resolver)
  @Controller()
  class Who {
    @Get('/who')
    @Returns(Object)
    who(c: Ctx) {
      return { ok: c.resolve(resolver) !== null };
    }
  }
  const app = new App({ log: () => {} }).controllers(Who);
  const { port } = await app.listen({ port: 0 });
  try {
    const r = await send(port, '/who', {
      method: 'GET',
      headers: { authorization: `Bearer ${bearer}` },
    });
    return { status: r.status, challenge: r.headers['www-authenticate'] };
  } finally {
    await app.close();
  }
}

/** `segment` with the unused low bits of its last character set: the same bytes to a lenient decoder. */
function strayBits(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const unused = { 2: 4, 3: 2 }[(segment.length % 4) as 2 | 3];
  const last = alphabet.indexOf(segment.at(-1)!);
  return segment.slice(0, -1) + alphabet[last | ((1 << unused) - 1)];
}

describe('a token that is not canonical base64url is 401 invalid_token', () => {
  it('a valid token with == appended to its signature', async () => {
    const good = await token({ iat: nowS() });
    expect((await answer(viaKeys(), good)).status).toBe(200);
    const padded = await answer(viaKeys(), `${good}==`);
    expect(padded).toEqual({
      status: 401,
      challenge:
        'Bearer error="invalid_token", error_description="not three segments of canonical base64url"',
    });
  });

  it('a valid token whose signature (RS256: 256 bytes, two unused bits) ends in a character with a stray bit', async () => {
    const good = await token({ iat: nowS() });
    const [head, body, sig] = good.split('.') as [string, string, string];
    const stray = strayBits(sig);
    expect(stray).not.toBe(sig);
    expect(Buffer.from(stray, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    expect((await answer(viaKeys(), `${head}.${body}.${stray}`)).status).toBe(401);
  });

  it('an HS256 token with padding or stray bits in its header, payload or signature', async () => {
    const resolver = Bearer.jwt({ issuer: ISSUER, audience: 'shop', secret: SECRET });
    const good = await new SignJWT({ iss: ISSUER, aud: 'shop', exp: nowS() + 3600 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    expect((await answer(resolver, good)).status).toBe(200);
    const parts = good.split('.');
    for (let i = 0; i < 3; i++) {
      const odd = parts[i]!.length % 4 === 0 ? `${parts[i]}=` : strayBits(parts[i]!);
      const bad = parts.map((p, j) => (j === i ? odd : p)).join('.');
      expect([i, (await answer(resolver, bad)).status]).toEqual([i, 401]);
    }
  });

  it('canonicalSegments: three segments of the base64url alphabet, no padding, no stray bits', () => {
    expect(canonicalSegments('eyJh.eyJi.c2ln')).toBe(true);
    expect(canonicalSegments('eyJh.eyJi.')).toBe(true);
    expect(canonicalSegments('eyJh.eyJi.c2ln.x')).toBe(false);
    expect(canonicalSegments('eyJh.eyJi')).toBe(false);
    expect(canonicalSegments('eyJh.eyJi.c2ln==')).toBe(false);
    expect(canonicalSegments('eyJh.eyJi.c2l+')).toBe(false);
    expect(canonicalSegments('eyJh.eyJi.c2 l')).toBe(false);
    // 'QQ' is 'A'; 'QR' decodes to 'A' too, with a stray bit.
    expect(canonicalSegments('eyJh.eyJi.QQ')).toBe(true);
    expect(canonicalSegments('eyJh.eyJi.QR')).toBe(false);
    // One character alone is no byte: never canonical.
    expect(canonicalSegments('eyJh.eyJi.Q')).toBe(false);
  });
});

describe('iat', () => {
  it('a token issued in the future beyond clockToleranceS (default 5 s) is 401; within it, it passes', async () => {
    const r = await answer(viaKeys(), await token({ iat: nowS() + 60 }));
    expect(r).toEqual({
      status: 401,
      challenge: 'Bearer error="invalid_token", error_description="claim iat is in the future"',
    });
    // 10 s of margin either side of the edge: the machine is loaded, a second may pass.
    const tolerant = viaKeys({ clockToleranceS: 30 });
    expect((await answer(tolerant, await token({ iat: nowS() + 20 }))).status).toBe(200);
    expect((await answer(tolerant, await token({ iat: nowS() + 40 }))).status).toBe(401);
  });

  it('maxTokenAgeS: a token issued longer ago is 401 whatever its exp; within it, it passes; without iat it is 401', async () => {
    const resolver = viaKeys({ maxTokenAgeS: 60 });
    expect((await answer(resolver, await token({ iat: nowS() - 50 }))).status).toBe(200);
    expect(await answer(resolver, await token({ iat: nowS() - 80 }))).toEqual({
      status: 401,
      challenge: 'Bearer error="invalid_token", error_description="issued more than 60 s ago"',
    });
    expect(await answer(resolver, await token({}))).toEqual({
      status: 401,
      challenge: 'Bearer error="invalid_token", error_description="claim iat missing"',
    });
    // Without maxTokenAgeS, an old iat is no reason to refuse: exp bounds the token.
    expect((await answer(viaKeys(), await token({ iat: nowS() - 86_400 }))).status).toBe(200);
  });

  it('maxTokenAgeS is checked when the resolver is made', () => {
    for (const bad of [0, -1, NaN, Infinity])
      expect(() => viaKeys({ maxTokenAgeS: bad })).toThrow(
        /maxTokenAgeS must be a number of seconds above 0/,
      );
  });
});
