import type { Middleware } from '../route/extensions';
import { HttpError } from '../core/errors';

export interface CorsOptions {
  /** Allowed origins (exact), or `'*'` for any (then without `credentials`). */
  readonly origins: readonly string[] | '*';
  readonly methods?: readonly string[];
  readonly headers?: readonly string[];
  readonly exposeHeaders?: readonly string[];
  /** Send `Access-Control-Allow-Credentials: true` (cookies, `Authorization`). Only with a list of origins. Default false. */
  readonly credentials?: boolean;
  /** Seconds a preflight answer may be cached. */
  readonly maxAge?: number;
}

/**
 * CORS for every answer, failures and static files included; answers preflight requests itself (204).
 * `origins: '*'` with `credentials: true` throws `CorsAnyOriginWithCredentials`: browsers refuse
 * `*` with credentials, so it could only work by echoing every Origin, which lets any site read
 * answers made with the user's cookies.
 * @example app.use(cors({ origins: ['https://shop.example'] }))
 */
export function cors(options: CorsOptions): Middleware {
  const any = options.origins === '*';
  if (any && options.credentials) {
    throw new HttpError(
      'CorsAnyOriginWithCredentials',
      "cors({ origins: '*', credentials: true }) would let every site read answers made with the user's credentials: list the allowed origins instead",
    );
  }
  const allowed = new Set(any ? [] : options.origins);
  const methods = (options.methods ?? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']).join(', ');
  const expose = options.exposeHeaders?.join(', ');
  return (c, next) => {
    const origin = c.header('origin');
    if (origin === null || (!any && !allowed.has(origin))) return next();
    c.setHeader('access-control-allow-origin', any ? '*' : origin);
    if (!any) c.setHeader('vary', 'Origin');
    if (options.credentials) c.setHeader('access-control-allow-credentials', 'true');
    if (expose) c.setHeader('access-control-expose-headers', expose);
    if (c.method === 'OPTIONS' && c.header('access-control-request-method') !== null) {
      c.setHeader('access-control-allow-methods', methods);
      const asked =
        options.headers?.join(', ') ?? tokensOf(c.header('access-control-request-headers'));
      if (asked) c.setHeader('access-control-allow-headers', asked);
      if (options.maxAge !== undefined)
        c.setHeader('access-control-max-age', String(options.maxAge));
      c.empty(204);
      return;
    }
    return next();
  };
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The header names a preflight asks for that are names at all (RFC 9110 tokens), as the list to
 * allow. Anything else (a byte above 0x7F, a control byte, a stray separator) is left out rather
 * than reflected: it cannot be a header the browser will send, and a value that is not a valid
 * header value would fail the whole answer.
 */
function tokensOf(asked: string | null): string | null {
  if (asked === null) return null;
  const names = asked
    .split(',')
    .map((n) => n.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((n) => TOKEN.test(n));
  return names.length === 0 ? null : names.join(', ');
}
