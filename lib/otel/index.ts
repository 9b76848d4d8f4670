/**
 * What fw's telemetry shares: the instrumentation scope, the duration buckets, and the deferred
 * load of `@opentelemetry/api`. lib/http (server spans and metrics) and lib/fetch (client spans and
 * metrics) both record through it, and lib/fetch may not import lib/http, so it lives here. Like
 * lib/errors, this module imports nothing of fw's.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Meter, Tracer } from '@opentelemetry/api';

/** The instrumentation scope fw's spans and metrics are recorded under. */
export const INSTRUMENTATION = 'fw-http';

/** Seconds buckets the OTel HTTP semantic conventions advise for request durations. */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

// @opentelemetry/api (44 modules) is loaded once the program has registered something with it,
// not with fw: the API keeps whatever is registered (tracer and meter providers, propagator,
// context manager) in one object under this global symbol, so while it is absent no SDK is there
// and fw would record nothing, exactly as the API's no-ops would.
const REGISTERED = Symbol.for('opentelemetry.js.api.1');
let api: typeof OtelApi | null = null;
/** The API's own no-op provider: what a proxy delegates to while no SDK is registered. */
let noopTracerProvider: unknown = null;

/** The API, once anything is registered with it; null before (nothing would be recorded). */
export function registeredApi(): typeof OtelApi | null {
  if (api !== null) return api;
  if ((globalThis as Record<symbol, unknown>)[REGISTERED] === undefined) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until something is registered with the API
  api = require('@opentelemetry/api') as typeof OtelApi;
  noopTracerProvider = new api.ProxyTracerProvider().getDelegate();
  return api;
}

/** A tracer when an SDK's tracer provider is registered, else null (the API would only hand out no-op spans). */
export function activeTracer(a: typeof OtelApi): Tracer | null {
  const p = a.trace.getTracerProvider();
  const real = p instanceof a.ProxyTracerProvider ? p.getDelegate() : p;
  return real === noopTracerProvider ? null : a.trace.getTracer(INSTRUMENTATION);
}

/** A meter when an SDK's meter provider is registered, else null. */
export function activeMeter(a: typeof OtelApi): Meter | null {
  const meter = a.metrics.getMeter(INSTRUMENTATION);
  return meter === a.createNoopMeter() ? null : meter;
}
