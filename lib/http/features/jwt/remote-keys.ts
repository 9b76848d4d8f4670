import type * as Jose from 'jose';
import { HttpError } from '../../core/errors';
import type { JoseApi } from './jose-peer';
import { JWKS_DEFAULTS, type RemoteKeyOptions } from './remote-key-options';

export { JWKS_DEFAULTS, type RemoteKeyOptions } from './remote-key-options';

type KeyLookup = (
  header: Jose.JWSHeaderParameters,
  token: Jose.FlattenedJWSInput,
) => Promise<Jose.KeyLike>;

/**
 * A key set fetched from one URL fixed at startup, never from anything a token says (its `iss`,
 * `jku` or `x5u`). Keys are kept for `maxAgeMs`; a `kid` not among them refetches at most once per
 * `cooldownMs`, so a flood of made-up `kid`s costs the issuer one request per cooldown. Fetches
 * are shared by concurrent requests, bounded in time and size, and never follow a redirect.
 * A set that cannot be fetched is a 503 `JwksUnavailable` (the cause in the log), not a 401: the
 * token may well be good.
 */
export class RemoteKeys {
  readonly #jose: JoseApi;
  readonly #where: () => Promise<string>;
  readonly #o: Readonly<Required<RemoteKeyOptions>>;
  #local: KeyLookup | null = null;
  #fetchedAt = -Infinity;
  #failedAt = -Infinity;
  #failure: unknown = null;
  #pending: Promise<void> | null = null;
  /** Fetches started (a test reads it to see refetches bounded). */
  fetches = 0;

  /** `where` gives the key set's URL (the configured one, or the one the discovery document names). */
  constructor(jose: JoseApi, where: () => Promise<string>, options: RemoteKeyOptions = {}) {
    this.#jose = jose;
    this.#where = where;
    this.#o = { ...JWKS_DEFAULTS, ...options };
  }

  /** The key lookup `jwtVerify` takes. */
  readonly lookup: KeyLookup = async (header, token) => {
    const now = Date.now();
    if (this.#local === null || now - this.#fetchedAt >= this.#o.maxAgeMs) {
      try {
        await this.#reload(now);
      } catch (e) {
        // Keys already held keep serving while the issuer is away (a stale set beats none).
        if (this.#local === null) throw e;
      }
    }
    try {
      return await this.#local!(header, token);
    } catch (e) {
      const unknownKid = e instanceof this.#jose.errors.JWKSNoMatchingKey;
      if (!unknownKid || Date.now() - this.#fetchedAt < this.#o.cooldownMs) throw e;
      await this.#reload(Date.now());
      return this.#local!(header, token);
    }
  };

  async #reload(now: number): Promise<void> {
    if (this.#pending === null && now - this.#failedAt < this.#o.retryMs)
      throw unavailable(this.#failure);
    this.#pending ??= this.#fetch().finally(() => (this.#pending = null));
    await this.#pending;
  }

  async #fetch(): Promise<void> {
    this.fetches++;
    try {
      const url = await this.#where();
      const set = await fetchJson(url, this.#o);
      if (!isKeySet(set))
        throw new Error(`${url} did not answer a JSON Web Key Set ({ "keys": [...] })`);
      this.#local = this.#jose.createLocalJWKSet(set);
      this.#fetchedAt = Date.now();
    } catch (e) {
      this.#failedAt = Date.now();
      this.#failure = e;
      throw unavailable(e);
    }
  }
}

const unavailable = (cause: unknown): HttpError =>
  new HttpError('JwksUnavailable', "the token's signing keys cannot be fetched right now", null, {
    cause,
  });

const isKeySet = (v: unknown): v is Jose.JSONWebKeySet =>
  typeof v === 'object' &&
  v !== null &&
  Array.isArray((v as { keys?: unknown }).keys) &&
  (v as { keys: unknown[] }).keys.every((k) => typeof k === 'object' && k !== null);

/** GETs JSON from `url`: 200 only, no redirect, at most `maxBytes`, all of it within `timeoutMs`. */
export async function fetchJson(
  url: string,
  o: { readonly timeoutMs: number; readonly maxBytes: number },
): Promise<unknown> {
  const signal = AbortSignal.timeout(o.timeoutMs);
  const res = await fetch(url, {
    redirect: 'error',
    signal,
    headers: { accept: 'application/json' },
  });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? -1);
  if (declared > o.maxBytes) {
    await res.body?.cancel();
    throw new Error(`${url} answered ${declared} bytes, more than ${o.maxBytes}`);
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of res.body ?? []) {
    size += part.length;
    if (size > o.maxBytes) throw new Error(`${url} answered more than ${o.maxBytes} bytes`);
    parts.push(part);
  }
  const text = Buffer.concat(parts).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${url} did not answer JSON`);
  }
}
