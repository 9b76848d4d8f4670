import type { Context } from '@opentelemetry/api';

/**
 * What an outbound call needs from the scope it runs in: a request's `Ctx` or a `Run`
 * (a background job with no request). Both live in `fw`; this module only knows the shape,
 * so `fw-http/fetch` never imports `fw`.
 */
export interface Scope {
  /** The id to forward as `X-Request-Id`; `null` under a `Run`, which never forwards one. */
  requestId(): string | null;
  /** Aborted when the scope ends early (client gone, server shutting down); calls under it fail `Canceled`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The OpenTelemetry context a call's client span is a child of (a request's server span), or
   * null. Without it a call's span is a child of the active context.
   */
  traceContext?(): Context | null;
  /**
   * The `Idempotency-Key` derived for the next outbound call under an idempotent handler (the
   * same sequence on every rerun of that request), or null. Asked once per call to a target
   * opened with `{ idempotencyKeys: true }`.
   */
  idempotencyKey?(): string | null;
}
