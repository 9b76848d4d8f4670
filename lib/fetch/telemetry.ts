import {
  context,
  createNoopMeter,
  metrics,
  propagation,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Histogram,
  type Span,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { Scope } from './scope';

/** The instrumentation scope fw's spans and metrics are recorded under. */
export const INSTRUMENTATION = 'fw-http';

/** Seconds buckets the OTel HTTP semantic conventions advise for request durations. */
export const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/** The API's own no-op provider: what a proxy delegates to while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** A tracer when an SDK's tracer provider is registered, else null (the API would only hand out no-op spans). */
export function activeTracer(): Tracer | null {
  const p = trace.getTracerProvider();
  const real = p instanceof ProxyTracerProvider ? p.getDelegate() : p;
  return real === NOOP_TRACER_PROVIDER ? null : trace.getTracer(INSTRUMENTATION);
}

/** A meter when an SDK's meter provider is registered, else null. */
export function activeMeter(): ReturnType<typeof metrics.getMeter> | null {
  const meter = metrics.getMeter(INSTRUMENTATION);
  return meter === createNoopMeter() ? null : meter;
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
  readonly #tracer: Tracer | null;
  readonly #duration: Histogram | null;

  private constructor(tracer: Tracer | null, duration: Histogram | null) {
    this.#tracer = tracer;
    this.#duration = duration;
  }

  static resolve(): FetchTelemetry | null {
    const tracer = activeTracer();
    const meter = activeMeter();
    if (tracer === null && meter === null) return null;
    const duration =
      meter?.createHistogram('http.client.request.duration', {
        description: 'Duration of outbound HTTP calls, per Target',
        unit: 's',
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }) ?? null;
    return new FetchTelemetry(tracer, duration);
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
    if (this.#tracer !== null) {
      const parent = facts.scope.traceContext?.() ?? context.active();
      span = this.#tracer.startSpan(
        facts.target === null ? facts.method : `${facts.method} ${facts.target}`,
        {
          kind: SpanKind.CLIENT,
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
    return new CallWatch(span, this.#duration, base);
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
  readonly #start = performance.now();

  constructor(span: Span | null, duration: Histogram | null, attributes: Attributes) {
    this.#span = span;
    this.#duration = duration;
    this.#attributes = attributes;
  }

  /** The call got an answer with `status`. */
  answered(status: number): void {
    this.#attributes['http.response.status_code'] = status;
    if (status >= 400) this.#attributes['error.type'] = String(status);
    const span = this.#span;
    if (span !== null) {
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
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
        code: SpanStatusCode.ERROR,
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
