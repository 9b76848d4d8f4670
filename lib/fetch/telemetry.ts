import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Histogram, Meter, Span, TextMapSetter, Tracer } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { Scope } from './scope';

/** The instrumentation scope fw's spans and metrics are recorded under. */
export const INSTRUMENTATION = 'fw-http';

/** Seconds buckets the OTel HTTP semantic conventions advise for request durations. */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

// @opentelemetry/api (44 modules) is loaded once the program has registered something with it,
// not with fw: the API keeps whatever is registered (tracer and meter providers, propagator,
// context manager) in one object under this global symbol, so while it is absent no SDK is there
// and fw would record nothing, exactly as the API's no-ops would. lib/http's telemetry asks the same.
const REGISTERED = Symbol.for('opentelemetry.js.api.1');
let api: typeof OtelApi | null = null;
/** The API's own no-op provider: what a proxy delegates to while no SDK is registered. */
let noopTracerProvider: unknown = null;

/** The API, once anything is registered with it; null before (nothing would be recorded). */
function registeredApi(): typeof OtelApi | null {
  if (api !== null) return api;
  if ((globalThis as Record<symbol, unknown>)[REGISTERED] === undefined) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until something is registered with the API
  api = require('@opentelemetry/api') as typeof OtelApi;
  noopTracerProvider = new api.ProxyTracerProvider().getDelegate();
  return api;
}

/** A tracer when an SDK's tracer provider is registered, else null (the API would only hand out no-op spans). */
export function activeTracer(): Tracer | null {
  const a = registeredApi();
  if (a === null) return null;
  const p = a.trace.getTracerProvider();
  const real = p instanceof a.ProxyTracerProvider ? p.getDelegate() : p;
  return real === noopTracerProvider ? null : a.trace.getTracer(INSTRUMENTATION);
}

/** A meter when an SDK's meter provider is registered, else null. */
export function activeMeter(): Meter | null {
  const a = registeredApi();
  if (a === null) return null;
  const meter = a.metrics.getMeter(INSTRUMENTATION);
  return meter === a.createNoopMeter() ? null : meter;
}

/** Appends to the flat `[name, value, …]` header list undici takes. */
const FLAT_SETTER: TextMapSetter<string[]> = {
  set(carrier, key, value) {
    carrier.push(key, value);
  },
};

/** What one call's telemetry needs to know about it. */
export interface CallFacts {
  readonly scope: Scope;
  readonly method: string;
  readonly origin: string;
  readonly path: string;
  /** The Target's name, or null for a plain client call. */
  readonly target: string | null;
}

/**
 * A client's telemetry, resolved when the client starts: null there when neither a tracer nor a
 * meter provider is registered, so a call without an SDK pays one null check.
 */
export class FetchTelemetry {
  readonly #api: typeof OtelApi;
  readonly #tracer: Tracer | null;
  readonly #duration: Histogram | null;

  private constructor(api: typeof OtelApi, tracer: Tracer | null, duration: Histogram | null) {
    this.#api = api;
    this.#tracer = tracer;
    this.#duration = duration;
  }

  static resolve(): FetchTelemetry | null {
    const tracer = activeTracer();
    const meter = activeMeter();
    if ((tracer === null && meter === null) || api === null) return null;
    const duration =
      meter?.createHistogram('http.client.request.duration', {
        description: 'Duration of outbound HTTP calls, per Target',
        unit: 's',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }) ?? null;
    return new FetchTelemetry(api, tracer, duration);
  }

  /**
   * Starts a call's client span (a child of the scope's trace context) and adds `traceparent`
   * (and `tracestate`) to `headers` unless the call names one itself.
   */
  begin(facts: CallFacts, headers: string[]): CallWatch {
    let span: Span | null = null;
    const url = new URL(facts.origin);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const base: Attributes = {
      'http.request.method': facts.method,
      'server.address': url.hostname,
      'server.port': port,
    };
    if (facts.target !== null) base['fw.target'] = facts.target;
    const { context, propagation, trace } = this.#api;
    if (this.#tracer !== null) {
      const parent = facts.scope.traceContext?.() ?? context.active();
      span = this.#tracer.startSpan(
        facts.target === null ? facts.method : `${facts.method} ${facts.target}`,
        {
          kind: this.#api.SpanKind.CLIENT,
          attributes: { ...base, 'url.full': facts.origin + facts.path },
        },
        parent,
      );
      if (!hasHeader(headers, 'traceparent'))
        propagation.inject(trace.setSpan(parent, span), headers, FLAT_SETTER);
    } else {
      const parent = facts.scope.traceContext?.() ?? null;
      if (parent !== null && !hasHeader(headers, 'traceparent'))
        propagation.inject(parent, headers, FLAT_SETTER);
    }
    return new CallWatch(span, this.#duration, base, this.#api.SpanStatusCode.ERROR);
  }
}

function hasHeader(flat: readonly string[], lower: string): boolean {
  for (let i = 0; i < flat.length; i += 2) if (flat[i].toLowerCase() === lower) return true;
  return false;
}

/** One call under way: ended once with its status, or with the error that ended it. */
export class CallWatch {
  readonly #span: Span | null;
  readonly #duration: Histogram | null;
  readonly #attributes: Attributes;
  /** `SpanStatusCode.ERROR`, from the API the telemetry loaded. */
  readonly #error: OtelApi.SpanStatusCode;
  readonly #start = performance.now();

  constructor(
    span: Span | null,
    duration: Histogram | null,
    attributes: Attributes,
    error: OtelApi.SpanStatusCode,
  ) {
    this.#span = span;
    this.#duration = duration;
    this.#attributes = attributes;
    this.#error = error;
  }

  /** The call got an answer with `status`. */
  answered(status: number): void {
    this.#attributes['http.response.status_code'] = status;
    if (status >= 400) this.#attributes['error.type'] = String(status);
    const span = this.#span;
    if (span !== null) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) span.setStatus({ code: this.#error });
    }
    this.#end();
  }

  /** The call failed with `err` (a `FetchError` with its code, or another error). */
  failed(err: unknown): void {
    const code = (err as { code?: unknown } | null)?.code;
    this.#attributes['error.type'] =
      typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown';
    const span = this.#span;
    if (span !== null) {
      span.setAttribute('error.type', this.#attributes['error.type'] as string);
      if (err instanceof Error) span.recordException(err);
      span.setStatus({
        code: this.#error,
        message: err instanceof Error ? err.message : String(err),
      });
    }
    this.#end();
  }

  #end(): void {
    this.#duration?.record((performance.now() - this.#start) / 1000, this.#attributes);
    this.#span?.end();
  }
}
