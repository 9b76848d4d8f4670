import { HttpError } from './errors';

/** RFC 6265 §4.1.1 cookie-name (a token). */
const NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control bytes, which no header value may hold. */
const CONTROL = /[\x00-\x1f\x7f]/;

export interface CookieOptions {
  /** Seconds until the browser drops the cookie (`Max-Age`); 0 drops it now. Default: a session cookie. */
  readonly maxAgeSeconds?: number;
  /** Default `/`. */
  readonly path?: string;
  readonly domain?: string;
  /** Default true: scripts in the page cannot read it. */
  readonly httpOnly?: boolean;
  /** Default `Lax`. */
  readonly sameSite?: 'Strict' | 'Lax' | 'None';
  /** Sent only over HTTPS. Default false (`SameSite=None` needs it in browsers). */
  readonly secure?: boolean;
}

/**
 * The `Set-Cookie` value for a cookie; a name that is not a token, or a value with `;` or a control
 * byte, is refused (500: the program's fault; a `;` would end the value).
 */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!NAME.test(name))
    throw new HttpError('BadCookieValue', `cookie name ${JSON.stringify(name)} is not a token`);
  if (value.includes(';') || CONTROL.test(value))
    throw new HttpError('BadCookieValue', `cookie "${name}" value holds ";" or a control byte`);
  const attr = (v: string | undefined, what: string) => {
    if (v !== undefined && (v.includes(';') || CONTROL.test(v)))
      throw new HttpError('BadCookieValue', `cookie "${name}" ${what} holds ";" or a control byte`);
    return v;
  };
  let out = `${name}=${value}; Path=${attr(options.path, 'path') ?? '/'}`;
  if (options.domain !== undefined) out += `; Domain=${attr(options.domain, 'domain')}`;
  if (options.maxAgeSeconds !== undefined)
    out += `; Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`;
  if (options.httpOnly !== false) out += '; HttpOnly';
  if (options.secure) out += '; Secure';
  out += `; SameSite=${options.sameSite ?? 'Lax'}`;
  return out;
}

/** One cookie's value from a `Cookie` header, or null (the first of several of one name, as browsers send the most specific first). */
export function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
    }
  }
  return null;
}
