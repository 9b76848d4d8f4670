import { createHash } from 'node:crypto';
import { exportSPKI, SignJWT } from 'jose';
import { App, Controller, Ctx, Get, Guard, RefusalError, Requires, Returns, fail } from 'fw-http';
import { Bearer, JwtCaller, type JwtResolver } from 'fw-http/jwt';
import { joseApi } from '../../lib/http/features/jwt/jose-peer';
import {
  jwksServer,
  sign,
  signingKey,
  unsigned,
  type JwksServer,
  type SigningKey,
} from '../support/jwks-server';

// JWT bearer resolvers and guards (§2), against a real key-set server on 127.0.0.1.

let server: JwksServer;
let rs: SigningKey;
let es: SigningKey;
let ISSUER: string;

/** The caller as the shop's controllers see it: a subclass of the resolver, so a parameter type. */
let Caller: JwtResolver<JwtCaller>;

function build(resolver: JwtResolver<JwtCaller>) {
  // Named by a class of its own, the resolver is a parameter type; `resolve` makes a Who.
  class Who extends resolver {}

  @Guard(resolver)
  @Controller('/guarded')
  class GuardedController {
    @Get('/plain')
    @Returns(Object)
    plain(c: Ctx) {
      return { sub: c.resolve(resolver).subject };
    }

    @Requires(resolver, 'admin')
    @Get('/admin')
    @Returns(Object)
    admin() {
      return { ok: true };
    }
  }

  @Controller()
  class ParamController {
    @Get('/me')
    @Returns(Object)
    me(who: Who) {
      return { sub: who.subject, scopes: who.scopes, kind: who instanceof Who };
    }
  }
  return new App({ log: () => {} }).controllers(GuardedController, ParamController);
}

beforeAll(async () => {
  rs = await signingKey('RS256', 'rs-1');
  es = await signingKey('ES256', 'es-1');
  server = await jwksServer([rs.jwk, es.jwk]);
  ISSUER = server.issuer;
  Caller = Bearer.jwt({ issuer: ISSUER, audience: 'shop', jwks: server.url });
});
afterAll(() => server.close());

/** An operation of the document, as far as these tests read it. */
type Op = {
  security?: unknown;
  responses: Record<string, { headers: Record<string, { example?: string }> } | undefined>;
};

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('Bearer.jwt verifies tokens from a remote key set', () => {
  it('a good RS256 or ES256 token resolves a caller with subject and scopes; a controller @Guard needs no parameter', async () => {
    const app = build(Caller);
    for (const key of [rs, es]) {
      const token = await sign(key, {
        iss: ISSUER,
        aud: 'shop',
        sub: 'alice',
        scope: 'orders admin',
      });
      const res = await app.inject({ url: '/guarded/plain', headers: bearer(token) });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ sub: 'alice' });
    }
    const token = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'bob', scp: ['read'] });
    const me = await app.inject({ url: '/me', headers: bearer(token) });
    expect(me.json()).toEqual({ sub: 'bob', scopes: ['read'], kind: true });
  });

  it('no token is 401 with WWW-Authenticate: Bearer and no error code (RFC 6750 §3.1)', async () => {
    const res = await build(Caller).inject({ url: '/guarded/plain' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it.each([
    ['another audience', { aud: 'other' }],
    ['another issuer', { iss: 'http://127.0.0.1:1' }],
    ['expired an hour ago', { exp: Math.floor(Date.now() / 1000) - 3600 }],
    ['valid only in an hour (nbf)', { nbf: Math.floor(Date.now() / 1000) + 3600 }],
  ])('a token for %s is 401 Bearer error="invalid_token"', async (_what, claims) => {
    const token = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'alice', ...claims });
    const res = await build(Caller).inject({ url: '/guarded/plain', headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(
      /^Bearer error="invalid_token", error_description="[^"]+"$/,
    );
    expect(res.json<{ error: string }>().error).toMatch(/^invalid token: /);
  });

  it('a token without exp is refused: every token must expire', async () => {
    const token = await new SignJWT({ iss: ISSUER, aud: 'shop', sub: 'alice' })
      .setProtectedHeader({ alg: 'RS256', kid: rs.kid })
      .sign(rs.privateKey);
    const res = await build(Caller).inject({ url: '/guarded/plain', headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('an unsigned token (alg none) is 401 invalid_token', async () => {
    const token = unsigned({ iss: ISSUER, aud: 'shop', sub: 'alice', exp: 9e9 });
    const res = await build(Caller).inject({ url: '/guarded/plain', headers: bearer(token) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('a token without a scope the route requires is 403 insufficient_scope naming it', async () => {
    const app = build(Caller);
    const plain = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'alice', scope: 'orders' });
    const res = await app.inject({ url: '/guarded/admin', headers: bearer(plain) });
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="admin"',
    );
    const admin = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'alice', scope: 'orders admin' });
    expect((await app.inject({ url: '/guarded/admin', headers: bearer(admin) })).status).toBe(200);
  });
});

describe('the OpenAPI document declares the JWT scheme and the scopes of each operation', () => {
  it('http bearer with bearerFormat JWT; @Requires lists its scopes, 401 and 403 with their challenges', () => {
    const doc = build(Caller).document();
    expect(doc.components.securitySchemes).toEqual({
      jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    const admin = doc.paths['/guarded/admin'].get as Op;
    expect(admin.security).toEqual([{ jwt: ['admin'] }]);
    expect(admin.responses['401']!.headers['WWW-Authenticate'].example).toBe(
      'Bearer error="invalid_token"',
    );
    expect(admin.responses['403']!.headers['WWW-Authenticate'].example).toBe(
      'Bearer error="insufficient_scope", scope="admin"',
    );
    const plain = doc.paths['/guarded/plain'].get as Op;
    expect(plain.security).toEqual([{ jwt: [] }]);
    expect(plain.responses['403']).toBeUndefined();
    const me = doc.paths['/me'].get as Op;
    expect(me.security).toEqual([{ jwt: [] }]);
    expect(me.responses['401']).toBeDefined();
  });

  it('with discovery the scheme is openIdConnect, and keys come from the jwks_uri the issuer names', async () => {
    const Oidc = Bearer.jwt({ issuer: ISSUER, audience: 'shop', discovery: true });
    const app = build(Oidc);
    expect(app.document().components.securitySchemes).toEqual({
      oidc: {
        type: 'openIdConnect',
        openIdConnectUrl: `${ISSUER}/.well-known/openid-configuration`,
      },
    });
    const token = await sign(es, { iss: ISSUER, aud: 'shop', sub: 'carol' });
    const res = await app.inject({ url: '/guarded/plain', headers: bearer(token) });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ sub: 'carol' });
  });
});

describe("map builds the program's own caller", () => {
  it("map(claims) gives the resolved value; @Requires still knows the token's scopes", async () => {
    class Account {
      constructor(readonly id: string) {}
    }
    const Mapped = Bearer.jwt({
      issuer: ISSUER,
      audience: 'shop',
      jwks: server.url,
      map: (claims) => new Account(claims.sub ?? ''),
    });
    @Requires(Mapped, 'admin')
    @Controller()
    class MappedController {
      @Get('/mapped')
      @Returns(Object)
      mapped(c: Ctx) {
        const account: Account = c.resolve(Mapped);
        return { id: account.id, isAccount: account instanceof Account };
      }
    }
    const app = new App({ log: () => {} }).controllers(MappedController);
    const admin = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'dora', scope: 'admin' });
    const res = await app.inject({ url: '/mapped', headers: bearer(admin) });
    expect(res.json()).toEqual({ id: 'dora', isAccount: true });
    const plain = await sign(rs, { iss: ISSUER, aud: 'shop', sub: 'dora' });
    expect((await app.inject({ url: '/mapped', headers: bearer(plain) })).status).toBe(403);
  });
});

describe('other key sources', () => {
  it('a secret verifies HS256; a public key in PEM verifies RS256', async () => {
    const secret = createHash('sha256').update('a secret for tests').digest('hex');
    const Hs = Bearer.jwt({ issuer: 'me', audience: 'shop', secret });
    const hs = await new SignJWT({ iss: 'me', aud: 'shop', sub: 'x', exp: 9e9 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(secret));
    expect((await build(Hs).inject({ url: '/guarded/plain', headers: bearer(hs) })).status).toBe(
      200,
    );
    const Pem = Bearer.jwt({
      issuer: 'me',
      audience: 'shop',
      publicKey: await exportSPKI(rs.publicKey),
    });
    const token = await sign(rs, { iss: 'me', aud: 'shop', sub: 'y' });
    expect(
      (await build(Pem).inject({ url: '/guarded/plain', headers: bearer(token) })).status,
    ).toBe(200);
  });

  it('a misdeclared resolver throws naming the option: two key sources, HS with public keys, a short secret', () => {
    expect(() =>
      Bearer.jwt({ issuer: 'me', audience: 'shop', secret: 'x'.repeat(32), jwks: server.url }),
    ).toThrow(/exactly one of jwks, keys, secret, publicKey, discovery \(got jwks, secret\)/);
    expect(() =>
      Bearer.jwt({ issuer: 'me', audience: 'shop', jwks: server.url, algorithms: ['HS256'] }),
    ).toThrow(/HS256 cannot be used with public keys/);
    expect(() => Bearer.jwt({ issuer: 'me', audience: 'shop', secret: 'short' })).toThrow(
      /at least 32 bytes/,
    );
    expect(() => Bearer.jwt({ issuer: 'me', audience: [], jwks: server.url })).toThrow(/audience/);
  });

  it('without jose installed, Bearer.jwt says PeerMissing naming npm install jose', () => {
    const missing = (id: string) => require(`${id}-is-not-installed-here`) as unknown;
    expect(() => joseApi(missing)).toThrow(expect.objectContaining({ code: 'PeerMissing' }));
    expect(() => joseApi(missing)).toThrow(/npm install jose/);
  });
});

describe('guards are refused when misdeclared', () => {
  it('@Guard of a class without resolve and scopes on a resolver without scopes are Refusals naming the route', () => {
    class NotResolvable {}
    class Plain {
      static resolve(): Plain {
        return new Plain();
      }
    }
    @Controller()
    class Bad {
      @Guard(NotResolvable)
      @Get('/a')
      a(): void {}
      @Requires(Plain, 'admin')
      @Get('/b')
      b(): void {}
      @Requires(Caller, 'has space')
      @Get('/c')
      c(): void {}
    }
    let err: unknown;
    try {
      new App({ log: () => {} }).controllers(Bad).build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RefusalError);
    const lines = (err as RefusalError).problems;
    expect(lines).toEqual(
      expect.arrayContaining([
        'GET /a (Bad.a): @Guard(NotResolvable): NotResolvable is not resolvable: give it a static resolve(c)',
        expect.stringMatching(/^GET \/b \(Bad\.b\): @Requires\(Plain, …\): Plain has no scopes/),
        expect.stringMatching(/^GET \/c \(Bad\.c\): .*scope "has space" is not a scope token/),
      ]),
    );
  });

  it('a guard on a plain resolver answers its 401 before the handler, which never runs', async () => {
    let ran = 0;
    class Staff {
      static resolve(c: Ctx): Staff {
        if (c.header('x-staff') !== 'yes') throw fail.unauthorized('staff only');
        return new Staff();
      }
    }
    @Guard(Staff)
    @Controller('/staff')
    class StaffController {
      @Get()
      @Returns(Object)
      list() {
        ran++;
        return [];
      }
    }
    const app = new App({ log: () => {} }).controllers(StaffController);
    expect((await app.inject({ url: '/staff' })).status).toBe(401);
    expect(ran).toBe(0);
    expect((await app.inject({ url: '/staff', headers: { 'x-staff': 'yes' } })).status).toBe(200);
    expect(ran).toBe(1);
  });
});
