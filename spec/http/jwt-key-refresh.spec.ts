import { App, Controller, Ctx, Get, Guard, Returns } from 'fw-http';
import { Bearer, type JwtResolver } from 'fw-http/jwt';
import {
  jwksServer,
  sign,
  signingKey,
  type JwksServer,
  type SigningKey,
} from '../support/jwks-server';
import { send } from '../support/post';

// How a key set fetched from the issuer is kept fresh, over real sockets with a real key-set
// server that answers, hangs, serves junk or holds its answer until the test lets it go. No
// assertion is timed: a request that waits on a hanging issuer shows as a request that never
// answers (send gives up after 5 s).

let keys: JwksServer;
let rs: SigningKey;
let lines: string[] = [];

beforeAll(async () => {
  rs = await signingKey('RS256', 'rs-1');
  keys = await jwksServer([rs.jwk]);
});
afterAll(() => keys.close());
beforeEach(() => {
  keys.mode = 'keys';
  keys.keys = [rs.jwk];
  lines = [];
});

const claims = () => ({ iss: keys.issuer, aud: 'shop', sub: 'ana' });
const jwt = (remote: Parameters<typeof Bearer.jwt>[0]['remote']) =>
  Bearer.jwt({
    issuer: keys.issuer,
    audience: 'shop',
    jwks: keys.url,
    ...(remote ? { remote } : {}),
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `use` with an app whose GET /who needs a token `resolver` verifies. */
async function withApp(
  resolver: JwtResolver<unknown>,
  use: (who: (token: string) => Promise<number>) => Promise<void>,
): Promise<void> {
  @Guard(resolver)
  @Controller()
  class Who {
    @Get('/who')
    @Returns(Object)
    who(c: Ctx) {
      return { ok: c.resolve(resolver) !== null };
    }
  }
  const app = new App({ log: (l) => lines.push(l) }).controllers(Who);
  const { port } = await app.listen({ port: 0 });
  const who = async (token: string) =>
    (await send(port, '/who', { method: 'GET', headers: { authorization: `Bearer ${token}` } }))
      .status;
  try {
    await use(who);
  } finally {
    await app.close();
  }
}

describe('keys older than maxAgeMs are refreshed behind the requests that use them', () => {
  it('while the refetch hangs, 20 requests whose kid is held answer at once, and the issuer is asked once', async () => {
    const resolver = jwt({ maxAgeMs: 1, timeoutMs: 60_000 });
    await withApp(resolver, async (who) => {
      const token = await sign(rs, claims());
      expect(await who(token)).toBe(200);
      const before = keys.hits;
      await sleep(5); // the held keys are now older than maxAgeMs
      keys.mode = 'hang';
      const statuses = await Promise.all(Array.from({ length: 20 }, () => who(token)));
      expect(new Set(statuses)).toEqual(new Set([200]));
      expect(keys.hits - before).toBe(1);
      expect(resolver.jwksFetches).toBe(2);
    });
  });

  it('a refetch behind the held keys that fails is logged once as a warning; the held keys go on serving', async () => {
    const resolver = jwt({ maxAgeMs: 1, retryMs: 60_000 });
    await withApp(resolver, async (who) => {
      const token = await sign(rs, claims());
      expect(await who(token)).toBe(200);
      await sleep(5);
      keys.mode = 'junk';
      const warned = () =>
        lines.filter((l) => l.includes('could not be refetched')).map((l) => JSON.parse(l));
      for (let i = 0; i < 50 && warned().length === 0; i++) {
        expect(await who(token)).toBe(200);
        await sleep(10);
      }
      expect(await who(token)).toBe(200);
      expect(warned()).toHaveLength(1);
      expect(warned()[0]).toMatchObject({ level: 40, err: { code: 'JwksUnavailable' } });
      expect(warned()[0].err.cause.message).toMatch(/did not answer JSON/);
      // retryMs holds further refetches: the junk was asked for once.
      expect(resolver.jwksFetches).toBe(2);
    });
  });
});

describe('a kid the held keys lack', () => {
  it('waits for one refetch and then verifies; another unknown kid within cooldownMs is 401 without a fetch', async () => {
    const resolver = jwt({ cooldownMs: 60_000 });
    await withApp(resolver, async (who) => {
      expect(await who(await sign(rs, claims()))).toBe(200);
      const rotated = await signingKey('ES256', 'rotated');
      keys.keys = [rs.jwk, rotated.jwk];
      keys.mode = 'hold';
      const before = keys.hits;
      const waiting = who(await sign(rotated, claims()));
      await keys.hitsReach(before + 1);
      keys.mode = 'keys';
      keys.release();
      expect(await waiting).toBe(200);
      const unknown = await signingKey('ES256', 'unknown');
      expect(await who(await sign(unknown, claims()))).toBe(401);
      expect(keys.hits - before).toBe(1);
    });
  });

  it('10 requests at once naming one unknown kid make one fetch, and all verify once it answers', async () => {
    const resolver = jwt({ cooldownMs: 60_000 });
    await withApp(resolver, async (who) => {
      expect(await who(await sign(rs, claims()))).toBe(200);
      const rotated = await signingKey('RS256', 'rotated-rs');
      keys.keys = [rs.jwk, rotated.jwk];
      keys.mode = 'hold';
      const before = keys.hits;
      const token = await sign(rotated, claims());
      const answers = Promise.all(Array.from({ length: 10 }, () => who(token)));
      await keys.hitsReach(before + 1);
      // Give the other requests time to reach the key lookup while the fetch is held (one that
      // came later would find the key held: one fetch either way).
      await sleep(100);
      keys.mode = 'keys';
      keys.release();
      expect(new Set(await answers)).toEqual(new Set([200]));
      expect(keys.hits - before).toBe(1);
    });
  });
});

describe('remote options', () => {
  it('are checked when the resolver is made, naming the option', () => {
    const cases: [Record<string, number>, RegExp][] = [
      [{ timeoutMs: 0 }, /remote\.timeoutMs must be a whole number of ms from 1, got 0/],
      [{ cooldownMs: -1 }, /remote\.cooldownMs must be a whole number of ms from 0, got -1/],
      [{ maxAgeMs: NaN }, /remote\.maxAgeMs must be a whole number of ms from 1, got NaN/],
      [{ maxBytes: 1.5 }, /remote\.maxBytes must be a whole number of bytes from 1/],
      [{ retryMs: Infinity }, /remote\.retryMs must be a whole number of ms from 0/],
    ];
    for (const [remote, message] of cases) expect(() => jwt(remote)).toThrow(message);
    expect(() => jwt({ cooldownMs: 0, retryMs: 0 })).not.toThrow();
  });
});
