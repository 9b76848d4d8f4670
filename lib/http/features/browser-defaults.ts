import { randomBytes, timingSafeEqual } from 'node:crypto';
import { checkWhole } from '../../options';
import { HttpError } from '../core/errors';
import type { Ctx, RouteInfo } from '../request/ctx';
import type { AroundFactory, Capability, Middleware, OperationSink } from '../route/extensions';
import { MarkKey } from '../route/mark-key';
import { marks } from '../route/metadata';
import { Session } from './sessions';
import type { RouteRecord } from '../route/route-record';

/** The security headers `securityHeaders()` sends; `false` leaves one out. */
export interface SecurityHeadersOptions {
  /** `X-Content-Type-Options: nosniff`. Default true. */
  readonly noSniff?: boolean;
  /** `Referrer-Policy`. Default `no-referrer`. */
  readonly referrerPolicy?: string | false;
  /**
   * Who may frame the answers: CSP `frame-ancestors` (and `X-Frame-Options` DENY or SAMEORIGIN for
   * `'none'` and `'self'`, for older browsers). Default `'none'`.
   */
  readonly frameAncestors?: string | false;
  /** `Strict-Transport-Security`, sent only when `c.protocol` is https. Default 180 days with subdomains. */
  readonly hsts?:
    | {
        readonly maxAgeSeconds?: number;
        readonly includeSubDomains?: boolean;
        readonly preload?: boolean;
      }
    | false;
}

/** A route's own security headers (`@SecurityHeaders(false)` for none) and whether it skips the CSRF check. */
export interface BrowserMark {
  readonly headers?: SecurityHeadersOptions | false;
  readonly crossSite?: boolean;
  /** The request must also send `X-CSRF-Token` equal to its `fw_csrf` cookie (double submit). */
  readonly token?: boolean;
}

/** The key of a route's browser settings: `record.marks.get(BROWSER)`. */
export const BROWSER = new MarkKey<BrowserMark>('browser');

/**
 * This route's security headers instead of the app's (`false`: none, for a page meant to be framed).
 * @example @SecurityHeaders({ frameAncestors: "'self'" }) @Get('/widget') widget() { … }
 */
export function SecurityHeaders(options: SecurityHeadersOptions | false): MethodDecorator {
  return mergeMark({ headers: options });
}

/**
 * Lets cross-site requests through this cookie-session route's CSRF check (a webhook that sets a
 * session, say). Say why where you use it.
 */
export function AllowCrossSite(): MethodDecorator {
  return mergeMark({ crossSite: true });
}

/**
 * On top of the Origin / Sec-Fetch-Site check, this route needs the double-submit token: header
 * `X-CSRF-Token` equal to the `fw_csrf` cookie that `csrfToken(c)` set (403 `CsrfTokenMismatch`).
 * For browsers that send neither header, or when same-site subdomains are not trusted either.
 */
export function RequireCsrfToken(): MethodDecorator {
  return mergeMark({ token: true });
}

/** The cookie the double-submit token lives in; readable by the page's script, sent to this site only. */
export const CSRF_COOKIE = 'fw_csrf';

/**
 * The request's CSRF token: the one in its `fw_csrf` cookie, or a new random one set in that cookie
 * (`SameSite=Strict`, not HttpOnly so the page's script can copy it into `X-CSRF-Token`).
 * @example @Get('/form') form(c: Ctx) { return { csrf: csrfToken(c) } }
 */
export function csrfToken(c: Ctx): string {
  const held = c.cookie(CSRF_COOKIE);
  if (held !== null && /^[\w-]{43}$/.test(held)) return held;
  const token = randomBytes(32).toString('base64url');
  c.setCookie(CSRF_COOKIE, token, { httpOnly: false, sameSite: 'Strict' });
  return token;
}

function tokenHolds(c: Ctx): boolean {
  const cookie = c.cookie(CSRF_COOKIE);
  const sent = c.header('x-csrf-token');
  if (cookie === null || sent === null || cookie.length !== sent.length) return false;
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(sent));
}

/** Both decorators write one mark: each keeps what the other wrote. */
const mergeMark =
  (part: BrowserMark): MethodDecorator =>
  (proto, key) => {
    const prior = marks.marksOf(proto, String(key)).get(BROWSER) ?? {};
    marks.setMark(proto, String(key), BROWSER, Object.freeze({ ...prior, ...part }));
  };

type Entries = readonly (readonly [string, string])[];

function entriesOf(o: SecurityHeadersOptions): { always: Entries; tls: Entries } {
  const always: [string, string][] = [];
  if (o.noSniff !== false) always.push(['x-content-type-options', 'nosniff']);
  const referrer = o.referrerPolicy ?? 'no-referrer';
  if (referrer !== false) always.push(['referrer-policy', referrer]);
  const frames = o.frameAncestors ?? "'none'";
  if (frames !== false) {
    always.push(['content-security-policy', `frame-ancestors ${frames}`]);
    if (frames === "'none'") always.push(['x-frame-options', 'DENY']);
    if (frames === "'self'") always.push(['x-frame-options', 'SAMEORIGIN']);
  }
  const tls: [string, string][] = [];
  if (o.hsts !== false) {
    const h = o.hsts ?? {};
    const age = checkWhole(
      { where: 'securityHeaders' },
      'hsts.maxAgeSeconds',
      h.maxAgeSeconds ?? 15_552_000,
      {
        unit: 'seconds',
        min: 0,
      },
    );
    const parts = [`max-age=${age}`];
    if (h.includeSubDomains !== false) parts.push('includeSubDomains');
    if (h.preload === true) parts.push('preload');
    tls.push(['strict-transport-security', parts.join('; ')]);
  }
  return { always, tls };
}

/**
 * Security headers on every answer (failures, 404s and static files included), with defaults a
 * browser-facing service wants; a route changes or drops them with `@SecurityHeaders`.
 * Answers written before routing (431, 408, a shed 503) carry none.
 * @example app.use(securityHeaders()) · app.use(securityHeaders({ referrerPolicy: 'same-origin' }))
 */
export function securityHeaders(options: SecurityHeadersOptions = {}): Middleware {
  const base = entriesOf(options);
  const perRoute = new WeakMap<RouteInfo, { always: Entries; tls: Entries }>();
  const none = { always: [], tls: [] };
  const middleware: Middleware = (c, next) => {
    const route = c.route;
    const own = route?.marks.get(BROWSER)?.headers;
    let set = base;
    if (own !== undefined && route !== null) {
      set = perRoute.get(route) ?? (own === false ? none : entriesOf(own));
      perRoute.set(route, set);
    }
    for (const [name, value] of set.always) c.setHeader(name, value);
    if (set.tls.length > 0 && c.protocol === 'https')
      for (const [name, value] of set.tls) c.setHeader(name, value);
    return next();
  };
  // Answers written before routing (431, 408, a shed 503) and a WebSocket's 101 never pass the
  // middleware: the app writes these lines on them itself.
  EARLY.set(middleware, base.always);
  return middleware;
}

const EARLY = new WeakMap<Middleware, Entries>();

/** The header lines a `securityHeaders()` middleware puts on every answer, for answers no middleware sees. */
export function earlyHeadersOf(middleware: Middleware): Entries | undefined {
  return EARLY.get(middleware);
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** True when a route reads a cookie session (a `Session` parameter) and changes state. */
const guarded = (record: RouteRecord): boolean =>
  !SAFE.has(record.method) &&
  ((record.marks.get(BROWSER)?.crossSite !== true &&
    record.args.some((a) => a.kind === 'resolved' && a.type === Session)) ||
    record.marks.get(BROWSER)?.token === true);

/**
 * CSRF (cross-site request forgery) on cookie-session routes that change state: a browser sends
 * `Sec-Fetch-Site` (and `Origin`) on such requests, so one from another site is refused 403
 * `CrossSiteRequest` before the session is read. Requests without either header (curl, servers)
 * carry no browser's cookies on another site's behalf and pass.
 */
function crossSite(c: Ctx): string | null {
  const site = c.header('sec-fetch-site');
  if (site !== null)
    return site === 'same-origin' || site === 'none' ? null : `Sec-Fetch-Site: ${site}`;
  const origin = c.header('origin');
  if (origin === null) return null;
  return origin === `${c.protocol}://${c.host}` ? null : `Origin: ${origin}`;
}

const around: AroundFactory = (record) => {
  if (!guarded(record)) return null;
  const label = `${record.method} ${record.path}`;
  const token = record.marks.get(BROWSER)?.token === true;
  const crossSiteOk = record.marks.get(BROWSER)?.crossSite === true;
  return (c, proceed) => {
    if (token && !tokenHolds(c))
      throw new HttpError(
        'CsrfTokenMismatch',
        `${label} needs the header X-CSRF-Token equal to the ${CSRF_COOKIE} cookie`,
      );
    const why = crossSiteOk ? null : crossSite(c);
    if (why !== null)
      throw new HttpError(
        'CrossSiteRequest',
        `${label} changes a cookie session and refuses requests from another site (${why})`,
      );
    return proceed();
  };
};

const describe = (record: RouteRecord, op: OperationSink): void => {
  if (record.marks.get(BROWSER)?.token === true && !SAFE.has(record.method))
    op.failure(403, `no X-CSRF-Token equal to the ${CSRF_COOKIE} cookie`);
  if (guarded(record))
    op.failure(403, 'a browser request from another site (CSRF check: Sec-Fetch-Site / Origin)');
};

export const browserDefaults: Capability = { arounds: [around], describe };
