import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SERVER_SIDE } from '../../fetch/server-side';
import type { Ctx } from '../request/ctx';
import type { SessionOptions } from '../request/session-options';
import type { Capability } from '../route/extensions';
import { readCookie } from '../core/cookies';
import { HttpError } from '../core/errors';

export type { SessionOptions } from '../request/session-options';

/** The shortest `sessionSecret` taken, in bytes: SHA-256's output length, below which RFC 2104 §3 calls HMAC keys weak. */
export const SESSION_SECRET_MIN_BYTES = 32;

/**
 * Throws `WeakSessionSecret` for a secret shorter than 32 bytes (UTF-8), so a guessable key stops
 * the program when `app.sessions()` is called rather than signing cookies anyone could forge.
 * No secret at all is allowed: asking for a `Session` then answers 500 (the
 * program's fault, not the client's).
 */
export function checkSessionOptions(options: SessionOptions): void {
  const secret = options.sessionSecret;
  if (secret === undefined || secret === '') return;
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < SESSION_SECRET_MIN_BYTES) {
    throw new HttpError(
      'WeakSessionSecret',
      `app.sessions: sessionSecret is ${bytes} bytes; at least ${SESSION_SECRET_MIN_BYTES} are needed (e.g. openssl rand -base64 32)`,
    );
  }
}

/**
 * Sessions as a capability: `app.sessions(options)` is `app.use(sessionCookies(options))`. A weak
 * secret throws `WeakSessionSecret` when it is registered (at `app.use`).
 */
export function sessionCookies(options: SessionOptions): Capability {
  return {
    name: 'sessions',
    register: (host) => {
      checkSessionOptions(options);
      host.provide(new SessionSettings(options));
    },
  };
}

/** The app's `app.sessions(options)`, provided to the app: `Session.resolve` reads it with `c.provided`. */
class SessionSettings {
  constructor(readonly options: SessionOptions) {}
}

/** A JSON value a session may hold. */
export type SessionValue =
  | string
  | number
  | boolean
  | null
  | readonly SessionValue[]
  | { readonly [key: string]: SessionValue };

/**
 * The client's session: a small JSON record kept in a signed cookie (HMAC-SHA256, `HttpOnly;
 * SameSite=Lax; Path=/`), enabled by `app.sessions({ sessionSecret })`. A handler asks for it by
 * type; a missing, expired or badly signed cookie is an empty session. Changes are sent as
 * `Set-Cookie` with the answer, so make them before answering.
 * @example @Get('/me') me(session: Session) { return { account: session.get('account') } }
 */
export class Session {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  readonly #c: Ctx;
  readonly #o: Required<SessionOptions> & { readonly sessionSecret: string };
  #data: Record<string, SessionValue>;

  /** @internal */
  constructor(
    c: Ctx,
    options: Required<SessionOptions> & { readonly sessionSecret: string },
    data: Record<string, SessionValue>,
  ) {
    this.#c = c;
    this.#o = options;
    this.#data = data;
  }

  /** The session of this request (worked out once per request). 500 when the app has no `sessionSecret`. */
  static resolve(c: Ctx): Session {
    const o = c.provided(SessionSettings)?.options;
    if (o == null || !o.sessionSecret)
      throw new HttpError(
        'NoSessionSecret',
        'a Session was asked for but app.sessions({ sessionSecret }) is not set',
      );
    const options = {
      cookie: 'fw_session',
      maxAgeSeconds: 7 * 24 * 3600,
      secure: false,
      ...o,
      sessionSecret: o.sessionSecret,
    };
    return new Session(
      c,
      options,
      verify(readCookie(c.header('cookie') ?? undefined, options.cookie), options.sessionSecret) ??
        {},
    );
  }

  get<T extends SessionValue = SessionValue>(key: string): T | undefined {
    return Object.hasOwn(this.#data, key) ? (this.#data[key] as T) : undefined;
  }

  /** True when the session holds nothing (a new client, or a missing, expired or badly signed cookie). */
  get empty(): boolean {
    return Object.keys(this.#data).length === 0;
  }

  set(key: string, value: SessionValue): void {
    this.#data = { ...this.#data, [key]: value };
    this.#send();
  }

  delete(key: string): void {
    if (!Object.hasOwn(this.#data, key)) return;
    const { [key]: _, ...rest } = this.#data;
    this.#data = rest;
    this.#send();
  }

  /** Ends the session: the cookie is removed from the client. */
  clear(): void {
    this.#data = {};
    this.#send();
  }

  #send(): void {
    const { cookie: name, maxAgeSeconds, secure, sessionSecret } = this.#o;
    const empty = this.empty;
    const value = empty
      ? ''
      : sign({ d: this.#data, e: Math.floor(Date.now() / 1000) + maxAgeSeconds }, sessionSecret);
    // One Set-Cookie for the session however often it changes: setCookie replaces the one set before.
    this.#c.setCookie(name, value, {
      maxAgeSeconds: empty ? 0 : maxAgeSeconds,
      secure,
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
    });
  }
}

interface Signed {
  readonly d: Record<string, SessionValue>;
  /** Expiry, seconds since the epoch: signed, so an old cookie kept past Max-Age is still refused. */
  readonly e: number;
}

const mac = (payload: string, secret: string) =>
  createHmac('sha256', secret).update(payload).digest('base64url');

function sign(value: Signed, secret: string): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${mac(payload, secret)}`;
}

/** The data of a well-signed, unexpired cookie, else null: a bad signature counts as no session. */
function verify(cookie: string | null, secret: string): Record<string, SessionValue> | null {
  if (cookie === null) return null;
  const dot = cookie.indexOf('.');
  if (dot === -1) return null;
  const payload = cookie.slice(0, dot);
  const given = Buffer.from(cookie.slice(dot + 1));
  const want = Buffer.from(mac(payload, secret));
  if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
  try {
    const v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Signed;
    if (
      typeof v !== 'object' ||
      v === null ||
      typeof v.d !== 'object' ||
      v.d === null ||
      Array.isArray(v.d) ||
      !(v.e > Date.now() / 1000)
    )
      return null;
    return v.d;
  } catch {
    return null;
  }
}
