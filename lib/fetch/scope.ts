import type { Context } from '@opentelemetry/api';

/**
 * What an outbound call needs from the scope it runs in: a request's `Ctx` or a `Run`
 * (a background job with no request). Both live in `fw`; this module only knows the shape,
 * so `fw-http/fetch` never imports `fw`.
 */
export interface Scope {
  /** The id to forward as `X-Request-Id`; `null` under a `Run`, which never forwards one. */
  requestId(): string | null;
  /**
   * Aborted when the scope ends early (client gone, server shutting down); calls under it fail
   * `Canceled`. Read when a call is made and again as each of its requests goes out, so a scope
   * may end itself on being asked (an idempotent handler whose claim's lease is past).
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * The OpenTelemetry context a call's client span is a child of (a request's server span), or
   * null. Without it a call's span is a child of the active context.
   */
  traceContext?(): Context | null;
  /**
   * The `Idempotency-Key` derived for `call` under an idempotent handler (the same for the same
   * call on every rerun of that request), or null. Asked once per call that changes something,
   * to a target opened with `{ idempotencyKeys: true }`.
   */
  idempotencyKey?(call: OutboundCall): string | null;
  /**
   * Asked as a call is made, before anything goes out: throws to refuse the call (an atomic
   * handler whose transaction is open refuses calls that would hold it across the outside world).
   */
  beforeCall?(): void;
  /** Where a call made under this scope reports a failure the program must fix (a request's log). */
  readonly log?: { error(line: string): void };
}

/**
 * What names an outbound call for its derived `Idempotency-Key`: never its arguments, so a rerun
 * that fills the template with other values still sends the key of the call it repeats.
 */
export interface OutboundCall {
  /** The Target's name. */
  readonly target: string;
  readonly method: string;
  /** The path template as the call gives it (`/reserve/{sku}`), before it is filled. */
  readonly template: string;
}
