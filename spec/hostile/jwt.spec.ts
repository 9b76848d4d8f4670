import { randomUUID } from 'node:crypto';
import { exportSPKI, SignJWT } from 'jose';
import { App, Controller, Ctx, Get, Guard, Returns } from 'fw-http';
import { Bearer, type JwtResolver } from 'fw-http/jwt';
import { raw } from '../support/raw';
import {
  jwksServer,
  sign,
  signingKey,
  unsigned,
  type JwksServer,
  type SigningKey,
} from '../support/jwks-server';

// Hostile tokens and a hostile key-set server, over real sockets on 127.0.0.1. No
// assertion is timed: a fetch that never ends shows as a request that never answers.

let keys: JwksServer;
let rs: SigningKey;
let ISSUER: string;
const lines: string[] = [];

function serve(resolver: JwtResolver<unknown>) {
  @Guard(resolver)
  @Controller()
  class Target {
    @Get('/who')
    @Returns(Object)
    who(c: Ctx) {
      return { ok: c.resolve(resolver) !== null };
    }
  }
  return new App({ log: (l) => lines.push(l) }).controllers(Target);
}

async function get(app: App, token: string | null) {
  const { url } = await app.listen({ port: 0 });
  try {
    const res = await fetch(`${url}/who`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    return {
      status: res.status,
      challenge: res.headers.get('www-authenticate'),
      body: await res.text(),
    };
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  rs = await signingKey('RS256', 'rs-1');
  keys = await jwksServer([rs.jwk]);
  ISSUER = keys.issuer;
});
afterAll(() => keys.close());
beforeEach(() => {
  keys.mode = 'keys';
  lines.length = 0;
});

const claims = () => ({ iss: ISSUER, aud: 'shop', sub: 'mallory' });
const jwt = (o: Partial<Parameters<typeof Bearer.jwt>[0]> = {}) =>
  Bearer.jwt({ issuer: ISSUER, audience: 'shop', jwks: keys.url, ...o });

describe('hostile tokens are 401 invalid_token', () => {
  it('alg none with a valid-looking payload', async () => {
    const r = await get(serve(jwt()), unsigned({ ...claims(), exp: 9e9 }));
    expect(r.status).toBe(401);
    expect(r.challenge).toContain('error="invalid_token"');
  });

  it('HS256 signed with the RSA public key (key confusion), against a JWKS and against a PEM key', async () => {
    const pem = await exportSPKI(rs.publicKey);
    const forged = await new SignJWT({ ...claims(), exp: 9e9 })
      .setProtectedHeader({ alg: 'HS256', kid: rs.kid })
      .sign(new TextEncoder().encode(pem));
    for (const resolver of [
      jwt(),
      Bearer.jwt({ issuer: ISSUER, audience: 'shop', publicKey: pem }),
    ]) {
      const r = await get(serve(resolver), forged);
      expect(r.status).toBe(401);
      expect(r.challenge).toBe(
        'Bearer error="invalid_token", error_description="algorithm not allowed"',
      );
    }
  });

  it('a flood of unknown kids refetches the key set at most once per cooldown', async () => {
    const resolver = jwt({ remote: { cooldownMs: 60_000 } });
    const app = serve(resolver);
    const { url } = await app.listen({ port: 0 });
    try {
      const other = await signingKey('RS256', 'other');
      const before = keys.hits;
      const statuses = new Set<number>();
      for (let round = 0; round < 10; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, async () => {
            const token = await sign(other, claims(), { kid: randomUUID() });
            return (await fetch(`${url}/who`, { headers: { authorization: `Bearer ${token}` } }))
              .status;
          }),
        );
        answers.forEach((s) => statuses.add(s));
      }
      expect([...statuses]).toEqual([401]);
      // The first request fetches the set; one unknown kid may refetch once; the cooldown holds the rest.
      expect(keys.hits - before).toBeLessThanOrEqual(2);
      expect(resolver.jwksFetches).toBeLessThanOrEqual(2);
      // A good token still passes.
      expect(
        (
          await fetch(`${url}/who`, {
            headers: { authorization: `Bearer ${await sign(rs, claims())}` },
          })
        ).status,
      ).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('exp and nbf at the edge of clockToleranceS: inside passes, outside is refused', async () => {
    const resolver = jwt({ clockToleranceS: 30 });
    const now = Math.floor(Date.now() / 1000);
    // 10 s of margin either side of the edge: the machine is loaded, a second may pass.
    const cases: [Record<string, number>, number][] = [
      [{ exp: now - 20 }, 200],
      [{ exp: now - 40 }, 401],
      [{ nbf: now + 20, exp: now + 600 }, 200],
      [{ nbf: now + 40, exp: now + 600 }, 401],
    ];
    for (const [edge, status] of cases) {
      const r = await get(serve(resolver), await sign(rs, { ...claims(), ...edge }));
      expect([edge, r.status]).toEqual([edge, status]);
    }
  });

  it('wrong aud and wrong iss, each alone', async () => {
    for (const wrong of [{ aud: 'admin-console' }, { iss: 'http://evil.example' }]) {
      const r = await get(serve(jwt()), await sign(rs, { ...claims(), ...wrong }));
      expect(r.status).toBe(401);
      expect(r.challenge).toMatch(
        /^Bearer error="invalid_token", error_description="claim (aud|iss) /,
      );
    }
  });

  it('a token past maxTokenBytes is 401 unparsed; one past the head limit is 431', async () => {
    const big = await sign(rs, { ...claims(), pad: 'x'.repeat(9 * 1024) });
    const r = await get(serve(jwt()), big);
    expect(r.status).toBe(401);
    expect(r.challenge).toContain('longer than 8192 bytes');
    const app = serve(jwt());
    const { port } = await app.listen({ port: 0 });
    try {
      const huge = 'a'.repeat(20 * 1024);
      const { text } = await raw(
        port,
        `GET /who HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${huge}\r\n\r\n`,
      );
      expect(text).toMatch(/^HTTP\/1\.1 431 /);
    } finally {
      await app.close();
    }
  });
});

describe('a key-set server that misbehaves is 503, with the cause in the log', () => {
  it.each([
    ['hangs before answering', 'hang'],
    ['hangs in the middle of the body', 'hang-body'],
    ['serves HTML', 'junk'],
    ['serves a megabyte', 'huge'],
    ['redirects elsewhere', 'redirect'],
    ['serves JSON that is not a key set', 'no-keys'],
  ] as const)('a JWKS endpoint that %s', async (_what, mode) => {
    keys.mode = mode;
    const resolver = jwt({ remote: { timeoutMs: 500 } });
    const r = await get(serve(resolver), await sign(rs, claims()));
    expect(r.status).toBe(503);
    expect(r.challenge).toBeNull();
    expect(JSON.parse(r.body)).toEqual({
      error: "the token's signing keys cannot be fetched right now",
      status: 503,
    });
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; err?: { cause?: unknown } });
    const line = logged.find((l) => l.msg.includes('JwksUnavailable'));
    expect(line?.err?.cause).toBeDefined();
  });

  it('after a failure, requests within retryMs answer 503 without fetching again', async () => {
    keys.mode = 'junk';
    const resolver = jwt({ remote: { retryMs: 60_000 } });
    const app = serve(resolver);
    const { url } = await app.listen({ port: 0 });
    try {
      const token = await sign(rs, claims());
      const before = keys.hits;
      for (let i = 0; i < 5; i++)
        expect(
          (await fetch(`${url}/who`, { headers: { authorization: `Bearer ${token}` } })).status,
        ).toBe(503);
      expect(keys.hits - before).toBe(1);
    } finally {
      await app.close();
    }
  });
});
