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
 * `jku` or `x5u`). Requests wait for a fetch only when no keys are held yet, or for a token whose
 * `kid` is not among them; keys older than `maxAgeMs` keep serving while a refetch runs behind
 * them (stale-while-revalidate), so a slow or hanging issuer delays no request whose key is
 * known. An unknown `kid` refetches at most once per `cooldownMs`, so a flood of made-up `kid`s
 * costs the issuer one request per cooldown. One fetch at most is in flight, whoever asked for
 * it; fetches are bounded in time and size, and never follow a redirect. A set that cannot be
 * fetched when one is needed is a 503 `JwksUnavailable` (the cause in the log), not a 401: the
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
  /** When an unknown `kid` last started a fetch: the cooldown runs from there. */
  #kidFetchAt = -Infinity;
  /** A refetch behind held keys failed and no request has said so yet. */
  #unsaid: unknown = null;
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
    if (this.#local === null) await this.#load(now);
    else if (now - this.#fetchedAt >= this.#o.maxAgeMs) this.#refreshBehind(now);
    try {
      return await this.#local!(header, token);
    } catch (e) {
      if (!(e instanceof this.#jose.errors.JWKSNoMatchingKey) || !(await this.#refetchForKid()))
        throw e;
      return this.#local!(header, token);
    }
  };

  /**
   * The failure of a refetch behind held keys, once (then null): nobody waited on it, so the
   * verifier logs it on the next request.
   */
  takeRefreshFailure(): unknown {
    const failure = this.#unsaid;
    this.#unsaid = null;
    return failure;
  }

  /** When the held keys were fetched (`Date.now()`'s clock; -Infinity before the first). */
  get fetchedAt(): number {
    return this.#fetchedAt;
  }

  /**
   * A `kid` not among the held keys: waits on the fetch in flight, or starts one when none has
   * been started for an unknown `kid` within `cooldownMs`. False when it may not fetch (a 401).
   */
  async #refetchForKid(): Promise<boolean> {
    const now = Date.now();
    if (this.#pending === null) {
      if (now - this.#kidFetchAt < this.#o.cooldownMs) return false;
      this.#kidFetchAt = now;
    }
    await this.#load(now);
    return true;
  }

  /** Waits on the fetch in flight, or one of its own; within `retryMs` of a failure, the failure. */
  async #load(now: number): Promise<void> {
    if (this.#pending === null && now - this.#failedAt < this.#o.retryMs)
      throw unavailable(this.#failure);
    this.#pending ??= this.#fetch().finally(() => (this.#pending = null));
    await this.#pending;
  }

  /** Starts a refetch nobody waits on, unless one is in flight or the last failed within `retryMs`. */
  #refreshBehind(now: number): void {
    if (this.#pending !== null || now - this.#failedAt < this.#o.retryMs) return;
    this.#pending = this.#fetch().finally(() => (this.#pending = null));
    // The held keys keep serving; the failure is said once, by the next request (see takeRefreshFailure).
    this.#pending.catch((e: unknown) => (this.#unsaid = e));
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
