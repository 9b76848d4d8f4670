import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IsIn } from 'class-validator';
import { chromium, type Browser } from 'playwright-core';
import { App, Body, Controller, Ctx, Get, Post, Returns } from 'fw-http';
import {
  AllowCrossSite,
  RequireCsrfToken,
  csrfToken,
  SecurityHeaders,
  Session,
  securityHeaders,
} from 'fw-http/browser';

// Browser-facing defaults: security headers on every answer, and the CSRF check of
// cookie-session routes that change state; over real sockets and in Debian chromium.

class Login {
  @IsIn(['alice', 'bob']) account!: string;
}

@Controller()
class PagesController {
  @Get('/page')
  @Returns(String)
  page(): string {
    return 'hello';
  }

  @SecurityHeaders(false)
  @Get('/framed')
  @Returns(String)
  framed(): string {
    return 'frame me';
  }

  @SecurityHeaders({ frameAncestors: "'self'", referrerPolicy: 'same-origin' })
  @Get('/own')
  @Returns(String)
  own(): string {
    return 'own';
  }

  @Post('/login')
  @Returns(Object)
  login(@Body() body: Login, session: Session) {
    session.set('account', body.account);
    return { account: body.account };
  }

  @Get('/form')
  @Returns(Object)
  form(c: Ctx) {
    return { csrf: csrfToken(c) };
  }

  @RequireCsrfToken()
  @Post('/transfer')
  @Returns(Object)
  transfer(session: Session) {
    return { by: session.get<string>('account') ?? null };
  }

  @AllowCrossSite()
  @Post('/hook')
  @Returns(Object)
  hook(session: Session) {
    return { seen: session.get<string>('account') ?? null };
  }
}

const SECRET = 'a-test-session-secret-of-32-bytes-or-more';
const INDEX = Buffer.from('<!doctype html><title>shop</title><p>shop</p>');

function browserApp(options: ConstructorParameters<typeof App>[0] = {}): App {
  return new App({ log: () => {}, ...options })
    .use(securityHeaders())
    .controllers(PagesController)
    .sessions({ sessionSecret: SECRET })
    .embedded('/', [{ path: 'index.html', bytes: INDEX }]);
}

const DEFAULTS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
};

describe('security headers', () => {
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = browserApp({ trustProxy: 'loopback' });
    ({ url } = await app.listen({ port: 0 }));
  });
  afterAll(() => app.close());

  it.each([
    ['an answer', '/page', 200],
    ['a static file', '/index.html', 200],
    ['a 404', '/nowhere', 404],
    ['a 405', '/framed', 405],
    ['a 400 failure', '/login', 400],
  ])('%s carries the defaults', async (_what, path, status) => {
    const method = status === 405 ? 'DELETE' : path === '/login' ? 'POST' : 'GET';
    const res = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    expect(res.status).toBe(status);
    for (const [name, value] of Object.entries(DEFAULTS))
      expect([name, res.headers.get(name)]).toEqual([name, value]);
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('HSTS only over TLS (here: a trusted proxy saying https)', async () => {
    const res = await fetch(`${url}/page`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(res.headers.get('strict-transport-security')).toBe(
      'max-age=15552000; includeSubDomains',
    );
  });

  it('a route turns them off or chooses its own', async () => {
    const off = await fetch(`${url}/framed`);
    for (const name of Object.keys(DEFAULTS)) expect(off.headers.get(name)).toBeNull();
    const own = await fetch(`${url}/own`);
    expect(own.headers.get('content-security-policy')).toBe("frame-ancestors 'self'");
    expect(own.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(own.headers.get('referrer-policy')).toBe('same-origin');
  });
});

describe('CSRF on cookie-session routes that change state', () => {
  let app: App;
  let url: string;
  beforeAll(async () => {
    app = browserApp();
    ({ url } = await app.listen({ port: 0 }));
  });
  afterAll(() => app.close());

  const post = (path: string, headers: Record<string, string>) =>
    fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ account: 'alice' }),
    });

  it('another site (Sec-Fetch-Site or Origin) is 403 CrossSiteRequest; same origin and non-browsers pass', async () => {
    for (const headers of [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://evil.example' },
    ]) {
      const res = await post('/login', headers);
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: string; status: number };
      expect(body.error).toMatch(
        /^POST \/login changes a cookie session and refuses requests from another site/,
      );
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    for (const headers of [{}, { 'sec-fetch-site': 'same-origin' }, { origin: url }])
      expect((await post('/login', headers)).status).toBe(200);
  });

  it('@AllowCrossSite lets one route through; the document lists the 403 of the others', async () => {
    expect((await post('/hook', { 'sec-fetch-site': 'cross-site' })).status).toBe(200);
    const doc = app.document();
    const login = doc.paths['/login']!.post as { responses: Record<string, unknown> };
    const hook = doc.paths['/hook']!.post as { responses: Record<string, unknown> };
    expect(login.responses['403']).toBeDefined();
    expect(hook.responses['403']).toBeUndefined();
  });
});

describe('the double-submit token', () => {
  it('@RequireCsrfToken needs X-CSRF-Token equal to the fw_csrf cookie csrfToken(c) set (403 CsrfTokenMismatch)', async () => {
    const app = browserApp();
    const form = await app.inject({ url: '/form' });
    const { csrf } = form.json<{ csrf: string }>();
    expect(csrf).toMatch(/^[\w-]{43}$/);
    const cookie = String(form.headers['set-cookie']).split(';')[0]!;
    expect(cookie).toBe(`fw_csrf=${csrf}`);
    expect(String(form.headers['set-cookie'])).toContain('SameSite=Strict');
    const transfer = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/transfer', headers });
    for (const headers of [
      { cookie },
      { cookie, 'x-csrf-token': 'x'.repeat(43) },
      { 'x-csrf-token': csrf },
    ]) {
      const res = await transfer(headers);
      expect(res.status).toBe(403);
      expect(res.json<{ error: string }>().error).toBe(
        'POST /transfer needs the header X-CSRF-Token equal to the fw_csrf cookie',
      );
    }
    expect((await transfer({ cookie, 'x-csrf-token': csrf })).status).toBe(200);
    // The same page asking again keeps its token.
    expect((await app.inject({ url: '/form', headers: { cookie } })).json()).toEqual({ csrf });
  });
});

describe('in Debian chromium', () => {
  const CHROMIUM = '/usr/bin/chromium';
  let browser: Browser;
  let app: App;
  let url: string;
  let evil: Server;
  let evilUrl: string;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    app = browserApp();
    ({ url } = await app.listen({ port: 0 }));
    // Another site: localhost is not the same site as 127.0.0.1.
    evil = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/post')
        res.end(
          `<form id="f" method="post" action="${url}/login" enctype="text/plain"><input name='{"account":"alice","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
        );
      else
        res.end(
          `<iframe id="a" src="${url}/page"></iframe><iframe id="b" src="${url}/framed"></iframe>`,
        );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await new Promise<void>((r) => evil.close(() => r()));
  });

  it("a form on another site posting to a cookie-session route is refused 403; the same post from the app's own page passes", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const refused = page.waitForResponse((r) => r.url() === `${url}/login`);
    await page.goto(`${evilUrl}/post`);
    const res = await refused;
    expect(res.status()).toBe(403);
    expect(((await res.json()) as { error: string }).error).toMatch(/Sec-Fetch-Site: cross-site/);
    await page.goto(`${url}/index.html`);
    const status = await page.evaluate(async () => {
      const r = await fetch('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"account":"bob"}',
      });
      return r.status;
    });
    expect(status).toBe(200);
    await context.close();
  });

  it("chromium refuses to frame a page under frame-ancestors 'none', and frames the route that turned it off", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const framed = page.waitForResponse((r) => r.url() === `${url}/framed`);
    const blocked = page.waitForResponse((r) => r.url() === `${url}/page`);
    await page.goto(`${evilUrl}/frames`);
    await Promise.all([framed, blocked]);
    const b = page.frames().find((f) => f.url() === `${url}/framed`);
    expect(b).toBeDefined();
    expect(await b!.textContent('body')).toBe('frame me');
    // The refused frame never shows the app's page: chromium puts its error page there instead.
    const a = await page.$('#a');
    const frame = await a!.contentFrame();
    expect(frame?.url()).not.toBe(`${url}/page`);
    await context.close();
  });
});
