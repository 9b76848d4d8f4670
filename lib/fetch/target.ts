import {
  bodyBytes,
  callLimits,
  jsonBytes,
  type BodyBytes,
  type Call,
  type JsonValue,
  type Limits,
} from './call';
import type { CallGuard } from './call-guard';
import type { Exchange } from './exchange';
import type { ResponseHead } from './head';
import { checkBoolean } from '../options';
import { badSettings, checkLimit } from './client-settings';
import type { Client } from './client';
import { engineOf, type Engine } from './engine';
import { FetchError } from './errors';
import { Gate } from './gate';
import { fetchHead } from './fetch-head';
import { callHeaders, checkHeader, type HeaderLine } from './header-line';
import { checkKeyReused, keyReused, saysKeyReused, type KeyReusedAnswer } from './key-reused';
import { OUTBOUND_CLIENT } from './outbound-client';
import { fillTemplate, type PathArgs, type TemplateIsPlain } from './path-template';
import type { FetchResponse } from './response';
import type { OutboundCall, Scope } from './scope';
import { RetryPolicy, type RetryOptions } from './retry-policy';
import { sendCall, type CallSpec } from './send-call';

/** How a service is declared: `Target(name, options)`. */
export interface TargetOptions {
  /** Calls to this service at once, under the client's ceiling; 0 = no gate of its own. Default 0. */
  readonly maxInFlight?: number;
  /** Default the client's. */
  readonly timeoutMs?: number;
  /** Default the client's. */
  readonly stallMs?: number;
  /** Default the client's. */
  readonly maxBody?: number;
  /** A path GET on every health probe, 2xx meaning ready; null: started means ready. Default null. */
  readonly ready?: string | null;
  /** Retries of calls that are safe to send twice (see `RetryOptions`). Default none. */
  readonly retry?: RetryOptions;
  /**
   * The service honours `Idempotency-Key` (Stripe, Adyen, an fw route with `@Idempotent`): calls
   * that change something (not GET, HEAD or OPTIONS) made inside an idempotent handler carry a
   * key derived from the handler's (space, caller, key) and the call (its enclosing `c.step`, this
   * target, the method, the path template, and how many such calls came before it), the same on
   * every rerun. A call that names its own Idempotency-Key keeps it. Default false.
   */
  readonly idempotencyKeys?: boolean;
  /**
   * The answer by which this service says a derived key came with another request than its first
   * (fw's own, a 422 with `Idempotency-Key-Mismatch: true`, is always known): such an answer fails
   * the call `OutboundKeyReused`. Stripe: `{ status: 400, code: 'idempotency_error' }`. Default none.
   */
  readonly keyReused?: KeyReusedAnswer;
}

/** Where and as whom an opened target calls. */
export interface OpenOptions {
  /** Scheme, host and optional path prefix; no query, no fragment; a trailing `/` is dropped. */
  readonly base: string;
  /** Sent on every call unless the call's headers name one. */
  readonly authorization?: string | null;
  /** Sent as `User-Agent` on every call unless the call's headers name one. */
  readonly userAgent?: string | null;
  /**
   * Standing headers; a call line of the same name replaces one. Like `authorization`, they are
   * not sent on when a followed redirect leaves the base's origin.
   */
  readonly headers?: readonly HeaderLine[];
}

/** The arguments after the template of `get`, `delete` and `url`: optional for a template without placeholders. */
export type ArgsThenCall<P extends string> =
  TemplateIsPlain<P> extends true
    ? [args?: PathArgs<P>, call?: Call]
    : [args: PathArgs<P>, call?: Call];

/** One templated call as a public method states it, before its path is filled and its body encoded. */
interface Templated {
  readonly scope: Scope;
  readonly method: string;
  /** The path template, e.g. `'/users/{id}'`. */
  readonly path: string;
  readonly args: unknown;
  readonly call: Call | undefined;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `call` with the scope's derived Idempotency-Key added, or null when it names one or the scope has none. */
function keyed(c: Scope, call: Call, identity: OutboundCall): Call | null {
  const lines = call.headers ?? [];
  if (lines.some((l) => l.name.toLowerCase() === 'idempotency-key')) return null;
  const key = c.idempotencyKey!(identity);
  if (key === null) return null;
  return { ...call, headers: [...lines, { name: 'Idempotency-Key', value: key }] };
}

/** The target's own probe scope: no request, so no request id. */
const PROBE_SCOPE: Scope = { requestId: () => null };

/** A probe's deadline unless the health route gives one (its `timeoutMs`) or the target's is shorter. */
export const PROBE_TIMEOUT_MS = 2_000;

function parseBase(base: string): { origin: string; prefix: string } {
  let url: URL;
  try {
    url = new URL(base);
  } catch (cause) {
    throw new FetchError('BaseNotAbsolute', `base ${JSON.stringify(base)} is not an absolute URL`, {
      cause,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('BaseNotAbsolute', `base ${JSON.stringify(base)} is not http(s)`);
  }
  if (url.username || url.password) {
    throw new FetchError(
      'BaseNotAbsolute',
      'base carries credentials; use the authorization open option',
    );
  }
  // A fragment is refused as a query is (`BaseHasQuery`): a base is a scheme, a host and a path.
  if (base.includes('?') || base.includes('#')) {
    throw new FetchError('BaseHasQuery', `base ${JSON.stringify(base)} has a query or fragment`);
  }
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

/**
 * A declared service, not yet bound to a client: `Target('payments', { maxInFlight: 8, ready: '/health' })`.
 * `open(client, options)` gives the `OpenTarget` that calls it.
 */
export class TargetType {
  readonly name: string;
  readonly options: Readonly<TargetOptions>;
  /** @internal the checked retry settings, or null */
  readonly retry: RetryPolicy | null;

  constructor(name: string, options: TargetOptions) {
    checkLimit(`target ${name}`, 'maxInFlight', options.maxInFlight);
    checkLimit(`target ${name}`, 'timeoutMs', options.timeoutMs);
    checkLimit(`target ${name}`, 'stallMs', options.stallMs);
    checkLimit(`target ${name}`, 'maxBody', options.maxBody);
    const ready = options.ready ?? null;
    if (ready !== null && (typeof ready !== 'string' || !ready.startsWith('/'))) {
      throw new FetchError(
        'BadSettings',
        `target ${name} ready must be a path starting with "/", got ${JSON.stringify(ready)}`,
      );
    }
    this.retry = options.retry === undefined ? null : new RetryPolicy(name, options.retry);
    checkKeyReused(name, options.keyReused, options.idempotencyKeys);
    if (options.idempotencyKeys !== undefined)
      checkBoolean(
        { where: `target ${name}`, refuse: badSettings },
        'idempotencyKeys',
        options.idempotencyKeys,
      );
    this.name = name;
    this.options = Object.freeze({ ...options, ready });
  }

  /** Binds the service to `client` at `base`. Throws `BaseNotAbsolute` / `BaseHasQuery` for a bad base. */
  open(client: Client, options: OpenOptions): OpenTarget {
    return new OpenTarget(this, client, options);
  }
}

/**
 * Declares a typed outbound service.
 *
 * @example
 * const Warehouse = Target('warehouse', { maxInFlight: 8, ready: '/health' });
 * const warehouse = Warehouse.open(client, { base: 'http://warehouse:8081/v1', authorization: 'Bearer …' });
 * app.provide(warehouse);
 * const res = await warehouse.get(c, '/stock/{sku}', { sku, verbose: true });
 */
export function Target(name: string, options: TargetOptions = {}): TargetType {
  return new TargetType(name, options);
}

/**
 * An opened target: calls take a path template and its arguments where a URL would go.
 * `'/users/{id}'` takes `{ id, …query }`, `'/users/{}'` a one-element tuple, a plain path a query
 * object or nothing. The framework finds a provided target's client by its `OUTBOUND_CLIENT` mark.
 */
export class OpenTarget {
  readonly name: string;
  /** The path the health route probes, or null. */
  readonly ready: string | null;
  readonly client: Client;
  /** The base as used: origin and path prefix, no trailing `/`. */
  readonly base: string;
  readonly #engine: Engine;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #gate: Gate | null;
  readonly #limits: Limits;
  readonly #retry: RetryPolicy | null;
  readonly #keys: boolean;
  readonly #keyReused: KeyReusedAnswer | null;
  readonly #standing: {
    headers: readonly HeaderLine[];
    authorization: string | null;
    userAgent: string | null;
    secret: ReadonlySet<string> | null;
  };

  /** @internal How an app finds this target's client among what it is provided. */
  get [OUTBOUND_CLIENT](): Client {
    return this.client;
  }

  constructor(type: TargetType, client: Client, options: OpenOptions) {
    const { origin, prefix } = parseBase(options.base);
    const engine = engineOf(client);
    const headers = Object.freeze(
      [...(options.headers ?? [])].map((l) => ({ name: l.name, value: l.value })),
    );
    for (const l of headers) checkHeader(l.name, l.value);
    if (options.authorization != null) checkHeader('authorization', options.authorization);
    if (options.userAgent != null) checkHeader('user-agent', options.userAgent);
    this.name = type.name;
    this.ready = type.options.ready ?? null;
    this.client = client;
    this.base = origin + prefix;
    this.#engine = engine;
    this.#origin = origin;
    this.#prefix = prefix;
    const max = type.options.maxInFlight ?? 0;
    this.#gate = max > 0 ? new Gate(max) : null;
    this.#retry = type.retry;
    this.#keys = type.options.idempotencyKeys === true;
    this.#keyReused = type.options.keyReused ?? null;
    this.#limits = {
      timeoutMs: type.options.timeoutMs ?? engine.settings.timeoutMs,
      stallMs: type.options.stallMs ?? engine.settings.stallMs,
      maxBody: type.options.maxBody ?? engine.settings.maxBody,
    };
    // Standing headers are where API keys live: a redirect that leaves the origin drops them (with Authorization).
    const secret = headers.length ? new Set(headers.map((l) => l.name.toLowerCase())) : null;
    this.#standing = {
      headers,
      authorization: options.authorization ?? null,
      userAgent: options.userAgent ?? null,
      secret,
    };
  }

  /** The full URL a call would use: base, filled path and query. */
  url<P extends string>(_c: Scope, path: P, ...[args]: ArgsThenCall<P>): string {
    return this.base + fillTemplate(path, args);
  }

  /**
   * Health probe: GETs `ready` with the target's headers; true for a 2xx, false for anything else
   * (a redirect, any error, no answer within `timeoutMs` or the target's own `timeoutMs`, whichever
   * is shorter). Without `ready`, true once the client is started.
   *
   * It takes neither the target's gate nor the client's permit: a flood of probes queued there
   * starved the business calls waiting for the same permits. The health route asks at most one
   * probe per target at a time, so going around the gates costs at most one connection per target.
   * Redirects are not followed: a probe has no business leaving the ready path (nor carrying the
   * standing headers elsewhere).
   */
  async probe(timeoutMs: number = PROBE_TIMEOUT_MS): Promise<boolean> {
    if (this.ready === null) return this.client.started;
    const own = this.#limits.timeoutMs;
    let guard: CallGuard;
    try {
      guard = this.#engine.guard(PROBE_SCOPE, own > 0 && own < timeoutMs ? own : timeoutMs);
    } catch {
      return false;
    }
    try {
      const s = this.#standing;
      const headers = callHeaders({
        call: [],
        standing: s.headers,
        authorization: s.authorization,
        userAgent: s.userAgent,
        requestId: null,
      });
      const request = {
        origin: this.#origin,
        path: this.#prefix + this.ready,
        method: 'GET',
        headers,
        body: null,
      };
      const head = {
        redirects: 'expose',
        stallMs: this.#limits.stallMs,
        highWaterMark: this.#engine.settings.readBufferSize,
      } as const;
      const { transfer } = await fetchHead(this.#engine, guard, request, head);
      await transfer.drain(this.#engine.settings.maxDrain);
      return transfer.status >= 200 && transfer.status < 300;
    } catch {
      return false;
    } finally {
      guard.release();
    }
  }

  /**
   * @internal Begins `exchange` on this target: its base, its standing headers, the call's
   * headers; the body is read through the exchange (the typed client's event streams).
   */
  begin(
    c: Scope,
    exchange: Exchange,
    call: {
      readonly method: string;
      readonly path: string;
      readonly args: unknown;
      readonly headers: readonly HeaderLine[];
      readonly timeoutMs: number;
      readonly stallMs?: number;
    },
  ): Promise<ResponseHead> {
    const s = this.#standing;
    return exchange.begin(this.client, {
      method: call.method,
      url: this.base + fillTemplate(call.path, call.args as never),
      headers: [...s.headers, ...call.headers],
      authorization: s.authorization,
      userAgent: s.userAgent,
      timeoutMs: call.timeoutMs,
      stallMs: call.stallMs ?? this.#limits.stallMs,
      scope: c,
    });
  }

  get<P extends string>(
    c: Scope,
    path: P,
    ...[args, call]: ArgsThenCall<P>
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method: 'GET', path, args, call }, null);
  }

  delete<P extends string>(
    c: Scope,
    path: P,
    ...[args, call]: ArgsThenCall<P>
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method: 'DELETE', path, args, call }, null);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, body, call
  post<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    body: BodyBytes,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method: 'POST', path, args, call }, body);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, body, call
  put<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    body: BodyBytes,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method: 'PUT', path, args, call }, body);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, body, call
  patch<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    body: BodyBytes | null,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method: 'PATCH', path, args, call }, body);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, method, path, args, body, call
  send<P extends string>(
    c: Scope,
    method: string,
    path: P,
    args: PathArgs<P>,
    body: BodyBytes | null,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#templated({ scope: c, method, path, args, call }, body);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, value, call
  postJson<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    value: JsonValue,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#json({ scope: c, method: 'POST', path, args, call }, value);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, value, call
  putJson<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    value: JsonValue,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#json({ scope: c, method: 'PUT', path, args, call }, value);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, path, args, value, call
  patchJson<P extends string>(
    c: Scope,
    path: P,
    args: PathArgs<P>,
    value: JsonValue,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#json({ scope: c, method: 'PATCH', path, args, call }, value);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-62): scope, method, path, args, value, call
  sendJson<P extends string>(
    c: Scope,
    method: string,
    path: P,
    args: PathArgs<P>,
    value: JsonValue,
    call?: Call,
  ): Promise<FetchResponse> {
    return this.#json({ scope: c, method, path, args, call }, value);
  }

  async #json(out: Templated, value: JsonValue): Promise<FetchResponse> {
    const path = this.#prefix + fillTemplate(out.path, out.args);
    return this.#call(out, path, jsonBytes(value), 'application/json');
  }

  async #templated(out: Templated, body: BodyBytes | null): Promise<FetchResponse> {
    // Filled before anything is sent: a template refusal never reaches the wire.
    const path = this.#prefix + fillTemplate(out.path, out.args);
    return this.#call(out, path, bodyBytes(body), null);
  }

  /** Sends `out` to the filled `path`, with the derived key and under the retry policy where they apply. */
  async #call(
    out: Templated,
    path: string,
    body: Buffer | null,
    contentType: string | null,
  ): Promise<FetchResponse> {
    const { scope: c, method } = out;
    let call = out.call ?? {};
    let derived: OutboundCall | null = null;
    if (this.#keys && !SAFE.has(method) && c.idempotencyKey !== undefined) {
      const identity = { target: this.name, method, template: out.path };
      const withKey = keyed(c, call, identity);
      if (withKey !== null) [call, derived] = [withKey, identity];
    }
    const spec: CallSpec = {
      scope: c,
      method,
      origin: this.#origin,
      path: path === '' || path.startsWith('?') ? '/' + path : path,
      body,
      call,
      limits: callLimits(call, this.#limits),
      contentType,
      standing: this.#standing,
      gate: this.#gate,
      target: this.name,
    };
    const res = await this.#send(spec);
    // Under a derived key the upstream holds a first run's request: a different one is never done.
    if (derived !== null && saysKeyReused(res, this.#keyReused))
      throw keyReused(c, derived, res.status);
    return res;
  }

  #send(spec: CallSpec): Promise<FetchResponse> {
    const retried = {
      scope: spec.scope,
      method: spec.method,
      headers: [spec.call.headers, this.#standing.headers],
      timeoutMs: spec.limits.timeoutMs,
    };
    if (this.#retry === null || !this.#retry.covers(retried)) return sendCall(this.#engine, spec);
    // Every try shares the call's deadline: each is given what is left of it.
    return this.#retry.run(retried, (timeoutMs, resend) =>
      sendCall(this.#engine, { ...spec, limits: { ...spec.limits, timeoutMs }, resend }),
    );
  }
}
