/**
 * `fw-http/browser`: what an app serving browsers adds. `cors(options)` for pages of other
 * origins; `securityHeaders()` and `@SecurityHeaders` for the headers a browser obeys; the CSRF
 * check of cookie-session routes (`@AllowCrossSite`, `@RequireCsrfToken`, `csrfToken(c)`); and
 * signed cookie sessions (`Session`, set up with `app.sessions`). This folder is the door; the
 * features are ../cors.ts, ../browser-defaults.ts and ../sessions.ts.
 */
export { cors, type CorsOptions } from '../cors';
export {
  securityHeaders,
  SecurityHeaders,
  AllowCrossSite,
  RequireCsrfToken,
  csrfToken,
  CSRF_COOKIE,
  BROWSER,
  type SecurityHeadersOptions,
  type BrowserMark,
} from '../browser-defaults';
export { Session, type SessionOptions, type SessionValue } from '../sessions';
