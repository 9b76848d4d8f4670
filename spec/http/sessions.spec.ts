import { App, Controller, Ctx, Get, HttpError, Post, Query, Returns } from 'fw-http';
import { Session } from 'fw-http/browser';

@Controller()
class SessionController {
  @Returns(Object)
  @Post('/login')
  login(session: Session, @Query('who') who: string) {
    session.set('account', who);
    session.set('visits', 1);
    return { ok: true };
  }
  @Returns(Object)
  @Get('/me')
  me(session: Session) {
    return { account: session.get('account') ?? null, empty: session.empty };
  }
  @Returns(Object)
  @Post('/logout')
  logout(session: Session) {
    session.clear();
    return { ok: true };
  }
  @Returns(Object)
  @Get('/cookie')
  cookie(c: Ctx, @Query('v') v: string) {
    c.setCookie('theme', v);
    return { ok: true };
  }
}

const cookieOf = (setCookie: string | string[] | undefined): string => {
  const line = (Array.isArray(setCookie) ? setCookie : [setCookie ?? '']).find((l) =>
    l.startsWith('fw_session='),
  )!;
  return line.split(';')[0];
};

describe('sessions', () => {
  const app = new App({ log: () => {} })
    .controllers(SessionController)
    .sessions({ sessionSecret: 'test-secret-of-at-least-32-bytes!', maxAgeSeconds: 3600 });

  it('OPEN-48 a session lives in an HMAC-SHA256-signed fw_session cookie with HttpOnly; SameSite=Lax; Path=/', async () => {
    const login = await app.inject({ method: 'POST', url: '/login?who=alice' });
    expect(login.status).toBe(200);
    const set = login.headers['set-cookie'] as unknown as string[] | string;
    const lines = Array.isArray(set) ? set : [set];
    expect(lines).toHaveLength(1); // one Set-Cookie however often the session changed
    expect(lines[0]).toMatch(
      /^fw_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
    );
    const me = await app.inject({ url: '/me', headers: { cookie: `other=1; ${cookieOf(set)}` } });
    expect(me.json()).toEqual({ account: 'alice', empty: false });
  });

  it('OPEN-48 a bad signature, a changed payload or a cookie from another secret counts as no session', async () => {
    const login = await app.inject({ method: 'POST', url: '/login?who=alice' });
    const cookie = cookieOf(login.headers['set-cookie']);
    const [payload, sig] = cookie.slice('fw_session='.length).split('.');
    const forged = Buffer.from(JSON.stringify({ d: { account: 'bob' }, e: 9e9 })).toString(
      'base64url',
    );
    const otherApp = new App({ log: () => {} })
      .controllers(SessionController)
      .sessions({ sessionSecret: 'another-secret-of-32-bytes-or-more' });
    const otherCookie = cookieOf(
      (await otherApp.inject({ method: 'POST', url: '/login?who=bob' })).headers['set-cookie'],
    );
    for (const value of [
      `${payload}.${sig.slice(0, -2)}xx`,
      `${forged}.${sig}`,
      'garbage',
      otherCookie.slice('fw_session='.length),
    ]) {
      const me = await app.inject({ url: '/me', headers: { cookie: `fw_session=${value}` } });
      expect(me.status).toBe(200);
      expect(me.json()).toEqual({ account: null, empty: true });
    }
  });

  it('clear() ends the session: the cookie is removed with Max-Age=0', async () => {
    const out = await app.inject({ method: 'POST', url: '/logout' });
    expect(out.headers['set-cookie']).toEqual([
      'fw_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax',
    ]);
  });

  it('AUTH-13 asking for a Session when no sessionSecret is set is 500', async () => {
    for (const bare of [
      new App({ log: () => {} }).controllers(SessionController),
      new App({ log: () => {} })
        .controllers(SessionController)
        .sessions({ sessionSecret: undefined }),
    ]) {
      const res = await bare.inject({ url: '/me' });
      expect(res.status).toBe(500);
      expect(res.json<{ status: number }>().status).toBe(500);
    }
  });

  it('AUTH-14 a cookie value that contains ";" is 500; other values are sent', async () => {
    const bad = await app.inject({
      url: '/cookie?v=' + encodeURIComponent('dark; Domain=evil.example'),
    });
    expect(bad.status).toBe(500);
    expect(bad.headers['set-cookie']).toBeUndefined();
    const ok = await app.inject({ url: '/cookie?v=dark' });
    expect(ok.headers['set-cookie']).toEqual(['theme=dark; Path=/; HttpOnly; SameSite=Lax']);
  });

  it('refuses a sessionSecret shorter than 32 bytes when app.sessions() is called, counting bytes, not characters', () => {
    const refusal = (secret: string): HttpError | null => {
      try {
        new App({ log: () => {} }).sessions({ sessionSecret: secret });
        return null;
      } catch (e) {
        return e as HttpError;
      }
    };
    const short = refusal('fw-sample-development-secret');
    expect(short).toBeInstanceOf(HttpError);
    expect(short?.code).toBe('WeakSessionSecret');
    expect(short?.message).toContain('sessionSecret');
    expect(short?.message).toContain('28 bytes');
    expect(refusal('x'.repeat(31))?.code).toBe('WeakSessionSecret'); // one under the edge
    expect(refusal('x'.repeat(32))).toBeNull(); // at the edge
    expect(refusal('é'.repeat(16))).toBeNull(); // 16 characters, 32 bytes
    expect(refusal('é'.repeat(15))?.code).toBe('WeakSessionSecret');
  });
});
