/** How a remote key set is fetched and kept; every field has a default (see `JWKS_DEFAULTS`). */
export interface RemoteKeyOptions {
  /** A fetch (discovery document or key set) must finish within this. Default 5 s. */
  readonly timeoutMs?: number;
  /** After a fetch, a token naming an unknown `kid` refetches no sooner than this. Default 30 s. */
  readonly cooldownMs?: number;
  /** Keys are refetched once older than this. Default 10 min. */
  readonly maxAgeMs?: number;
  /** A key set (or discovery document) larger than this is refused. Default 256 KiB. */
  readonly maxBytes?: number;
  /** After a failed fetch, requests answer 503 at once for this long rather than fetch again. Default 1 s. */
  readonly retryMs?: number;
}

export const JWKS_DEFAULTS: Readonly<Required<RemoteKeyOptions>> = Object.freeze({
  timeoutMs: 5_000,
  cooldownMs: 30_000,
  maxAgeMs: 600_000,
  maxBytes: 256 * 1024,
  retryMs: 1_000,
});
