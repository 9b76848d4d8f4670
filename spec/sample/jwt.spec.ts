import { SignJWT, generateKeyPair } from 'jose';
import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { devKeys } from '../../sample/shop/dev-issuer';
import { warehouse } from '../../sample/warehouse/warehouse';
import { unsigned } from '../support/jwks-server';

// The sample's development issuer (SAMPLE.md "Callers"), over a real socket.

let warehouseApp: App;
let warehouseUrl = '';
let app: App;
let url = '';
beforeAll(async () => {
  warehouseApp = warehouse({ log: () => {} });
  warehouseUrl = (await warehouseApp.listen({ port: 0 })).url;
  app = shop({ log: () => {}, warehouseUrl, openapiOut: null });
  url = (await app.listen({ port: 0 })).url;
});
afterAll(async () => {
  await app.close();
  await warehouseApp.close();
});

async function token(account: string, scopes: string[]): Promise<string> {
  const res = await fetch(`${url}/dev/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ account, scopes }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

const get = (path: string, token?: string) =>
  fetch(`${url}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

describe('the sample accepts JWTs from its development issuer', () => {
  it("POST /dev/token answers a 15-minute ES256 token of the shop's URL for audience shop; the keys are at /.well-known/jwks.json", async () => {
    const jwt = await token('alice', ['admin']);
    const header = JSON.parse(Buffer.from(jwt.split('.')[0], 'base64url').toString()) as {
      alg: string;
      kid: string;
    };
    expect(header.alg).toBe('ES256');
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({ iss: url, aud: 'shop', sub: 'alice', scope: 'admin' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(15 * 60);
    const jwks = (await (await get('/.well-known/jwks.json')).json()) as {
      keys: { kid: string; d?: string }[];
    };
    expect(jwks.keys.map((k) => k.kid)).toEqual([header.kid]);
    expect(jwks.keys[0].d).toBeUndefined(); // the public half only
  });

  it('GET /admin/stats: scope admin gives { orders: n }; without it 403 insufficient_scope; no token 401 Bearer', async () => {
    const admin = await get('/admin/stats', await token('bob', ['admin', 'orders']));
    expect(admin.status).toBe(200);
    expect(await admin.json()).toEqual({ orders: expect.any(Number) });
    const plain = await get('/admin/stats', await token('bob', ['orders']));
    expect(plain.status).toBe(403);
    expect(plain.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="admin"',
    );
    expect(Object.keys((await plain.json()) as object)).toEqual(['error', 'status']);
    const none = await get('/admin/stats');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('unsigned, signed by another key, expired or for another audience: 401 error="invalid_token"', async () => {
    const host = new URL(url).host;
    const other = await generateKeyPair('ES256');
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ scope: 'admin' })
      .setProtectedHeader({ alg: 'ES256', kid: devKeys.kid })
      .setIssuer(url)
      .setAudience('shop')
      .setSubject('alice')
      .setExpirationTime(now + 600)
      .sign(other.privateKey);
    const bad = [
      unsigned({ iss: url, aud: 'shop', sub: 'alice', scope: 'admin', exp: now + 600 }),
      forged,
      await devKeys.sign({
        issuer: `http://${host}`,
        account: 'alice',
        scopes: ['admin'],
        lifetimeS: -3600,
      }),
      await devKeys.sign({
        issuer: `http://${host}`,
        account: 'alice',
        scopes: ['admin'],
        audience: 'other',
      }),
    ];
    for (const jwt of bad) {
      for (const path of ['/admin/stats', '/orders']) {
        const res = await get(path, jwt);
        expect([path, res.status]).toEqual([path, 401]);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      }
    }
  });

  it('the static alice-token still works, and a JWT names the account on /orders', async () => {
    expect((await get('/orders', 'alice-token')).status).toBe(200);
    const jwt = await token('bob', []);
    const placed = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${jwt}`,
        'content-type': 'application/json',
        'idempotency-key': `jwt-${Date.now()}`,
      },
      body: JSON.stringify({ sku: 'tea', qty: 1 }),
    });
    expect(placed.status).toBe(201);
    expect(((await placed.json()) as { account: string }).account).toBe('bob');
    const mine = (await (await get('/orders', 'bob-token')).json()) as { account: string }[];
    expect(mine.length).toBeGreaterThan(0);
  });

  it('/dev/token refuses an unknown account and a scope that is not a scope token (400)', async () => {
    for (const body of [
      { account: 'mallory', scopes: [] },
      { account: 'alice', scopes: ['a b'] },
    ]) {
      const res = await fetch(`${url}/dev/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
    }
  });

  it('under NODE_ENV=production there is no /dev/token (404), the keys and /admin/stats stay', async () => {
    const env = { ...process.env };
    process.env.NODE_ENV = 'production';
    process.env.SESSION_SECRET = 'a-production-secret-of-at-least-32-bytes!';
    let prod: App;
    try {
      prod = shop({ log: () => {}, warehouseUrl, openapiOut: null });
    } finally {
      process.env.NODE_ENV = env.NODE_ENV;
      process.env.SESSION_SECRET = env.SESSION_SECRET;
      if (env.SESSION_SECRET === undefined) delete process.env.SESSION_SECRET;
    }
    const res = await prod.inject({
      method: 'POST',
      url: '/dev/token',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(404);
    expect((await prod.inject({ url: '/.well-known/jwks.json' })).status).toBe(200);
    expect((await prod.inject({ url: '/admin/stats' })).status).toBe(401);
    await prod.close();
  });
});
