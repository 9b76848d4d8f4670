import { checkWhole } from '../../../options';

/** How a remote key set is fetched and kept; every field has a default (see `JWKS_DEFAULTS`). */
export interface RemoteKeyOptions {
  /** A fetch (discovery document or key set) must finish within this. Default 5 s. */
  readonly timeoutMs?: number;
  /**
   * A token naming a `kid` the held keys lack waits for a refetch, at most once per this long
   * (other such tokens within it are 401 at once, unless a fetch is already in flight: they wait
   * on it). Default 30 s; 0: every unknown `kid` may refetch, one fetch in flight at a time.
   */
  readonly cooldownMs?: number;
  /**
   * Keys older than this are refetched behind the requests that use them: those requests are
   * verified with the held keys at once, never made to wait. Default 10 min.
   */
  readonly maxAgeMs?: number;
  /** A key set (or discovery document) larger than this is refused. Default 256 KiB. */
  readonly maxBytes?: number;
  /**
   * After a failed fetch, no fetch for this long: a request that needs one answers 503 at once,
   * and held keys go on serving. Default 1 s; 0: the next request may fetch again.
   */
  readonly retryMs?: number;
}

export const JWKS_DEFAULTS: Readonly<Required<RemoteKeyOptions>> = Object.freeze({
  timeoutMs: 5_000,
  cooldownMs: 30_000,
  maxAgeMs: 600_000,
  maxBytes: 256 * 1024,
  retryMs: 1_000,
});

/** The least each option may be: a fetch needs some time and some bytes; a cooldown may be none. */
const LEAST: Readonly<Required<RemoteKeyOptions>> = {
  timeoutMs: 1,
  cooldownMs: 0,
  maxAgeMs: 1,
  maxBytes: 1,
  retryMs: 0,
};

/**
 * `options` over the defaults, each a whole number of at least its least (`AbortSignal.timeout`
 * would otherwise throw on the first request, and a NaN age would refetch on every one).
 * Throws a TypeError naming the resolver (`where`) and the option.
 */
export function remoteKeyOptions(
  options: RemoteKeyOptions | undefined,
  where: string,
): Readonly<Required<RemoteKeyOptions>> {
  const o = { ...JWKS_DEFAULTS, ...options };
  for (const name of Object.keys(JWKS_DEFAULTS) as (keyof RemoteKeyOptions)[]) {
    const unit = name.endsWith('Ms') ? 'ms' : 'bytes';
    checkWhole({ where }, `remote.${name}`, o[name], { unit, min: LEAST[name] });
  }
  return Object.freeze(o);
}
