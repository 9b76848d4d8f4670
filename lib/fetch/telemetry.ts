import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Histogram, Span, TextMapSetter, Tracer } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import { activeMeter, activeTracer, DURATION_BUCKETS, registeredApi } from '../otel';
import type { Scope } from './scope';

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
  /** Which retry this try is (OpenTelemetry's `http.request.resend_count`); 0 for a first try. */
  readonly resend?: number;
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
    const api = registeredApi();
    if (api === null) return null;
    const tracer = activeTracer(api);
    const meter = activeMeter(api);
    if (tracer === null && meter === null) return null;
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
    const resend = facts.resend ? { 'http.request.resend_count': facts.resend } : {};
    const { context, propagation, trace } = this.#api;
    if (this.#tracer !== null) {
      const parent = facts.scope.traceContext?.() ?? context.active();
      span = this.#tracer.startSpan(
        facts.target === null ? facts.method : `${facts.method} ${facts.target}`,
        {
          kind: this.#api.SpanKind.CLIENT,
          attributes: { ...base, ...resend, 'url.full': facts.origin + facts.path },
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
  for (let i = 0; i < flat.length; i += 2) if (flat[i]!.toLowerCase() === lower) return true;
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
