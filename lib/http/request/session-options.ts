/** `app.sessions(options)`: how the session cookie is signed and sent. */
export interface SessionOptions {
  /**
   * The HMAC-SHA256 key that signs the session cookie: at least 32 bytes (`SESSION_SECRET_MIN_BYTES`),
   * e.g. `openssl rand -base64 32`. Empty counts as not set (asking for a Session is then a 500).
   */
  readonly sessionSecret: string | undefined;
  /** The cookie's name. Default `fw_session`. */
  readonly cookie?: string;
  /** How long a session lasts from its last change (cookie `Max-Age` and a signed expiry). Default 7 days. */
  readonly maxAgeSeconds?: number;
  /** Adds `Secure` to the cookie (behind HTTPS). Default false. */
  readonly secure?: boolean;
}
