import { IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type * as OtelApi from '@opentelemetry/api';
import type {
  Attributes,
  Context,
  Counter,
  Histogram,
  Meter,
  Span,
  Tracer,
  UpDownCounter,
} from '@opentelemetry/api';
import { MemoryStore, OpenSpace } from '../../cache';
import { activeMeter, activeTracer, DURATION_BUCKETS, registeredApi } from '../../otel';
import type { Ctx } from '../request/ctx';
import type { RequestTelemetry } from '../request/exchange';
import { exchangeOf } from '../request/exchange-of';

/** Instruments of the server side, made once per app. */
interface Instruments {
  readonly duration: Histogram;
  readonly active: UpDownCounter;
  readonly shed: Counter;
  readonly rateLimited: Counter;
  readonly rateEvictions: Counter;
  readonly idempotency: Counter;
  readonly deprecated: Counter;
}

/** Byte gauges of the memory stores provided, and of those under provided spaces (as a shop provides them): each once. */
function observeStores(meter: Meter, provided: readonly unknown[]): void {
  const stores = [
    ...new Set(
      provided.flatMap((p) =>
        p instanceof MemoryStore
          ? [p]
          : p instanceof OpenSpace && p.memoryStore !== null
            ? [p.memoryStore]
            : [],
      ),
    ),
  ];
  if (stores.length) {
    meter
      .createObservableGauge('fw.store.bytes', {
        description: 'Bytes a provided MemoryStore counts against its budget',
        unit: 'By',
      })
      .addCallback((r) => stores.forEach((s, i) => r.observe(s.bytesUsed, { 'fw.store': i })));
    meter
      .createObservableGauge('fw.store.budget', {
        description: 'The byte budget of a provided MemoryStore',
        unit: 'By',
      })
      .addCallback((r) => stores.forEach((s, i) => r.observe(s.bytes, { 'fw.store': i })));
  }
}

function instruments(meter: Meter, provided: readonly unknown[]): Instruments {
  observeStores(meter, provided);
  return {
    duration: meter.createHistogram('http.server.request.duration', {
      description: 'Duration of HTTP server requests',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    active: meter.createUpDownCounter('http.server.active_requests', {
      description: 'HTTP server requests in flight',
      unit: '{request}',
    }),
    shed: meter.createCounter('fw.server.shed', {
      description: 'Requests shed past maxRequestsInFlight (503 before routing)',
      unit: '{request}',
    }),
    rateLimited: meter.createCounter('fw.rate_limit.refused', {
      description:
        'Requests refused by @RateLimit (429 over the limit, 503 while a fail-closed store is down)',
      unit: '{request}',
    }),
    rateEvictions: meter.createCounter('fw.rate_limit.evictions', {
      description:
        "Clients' windows a @RateLimit forgot before they ended, to serve new clients past maxAddresses",
      unit: '{window}',
    }),
    deprecated: meter.createCounter('fw.deprecated.requests', {
      description: 'Requests to @Deprecated routes',
      unit: '{request}',
    }),
    idempotency: meter.createCounter('fw.idempotency.outcomes', {
      description:
        'Outcomes on @Idempotent routes: stored, replayed, in_flight (409), mismatch (422), not_kept, store_unavailable',
      unit: '{request}',
    }),
  };
}

/**
 * The app's OpenTelemetry side, through `@opentelemetry/api` only: a server span per request
 * (continuing the caller's W3C trace; or the one `@opentelemetry/instrumentation-http` opened for
 * it, with fw's attributes added), and the server's metrics. Resolved when the app is built:
 * with no SDK's provider registered by then it is null and a request pays one null check.
 */
export class ServerTelemetry {
  readonly api: typeof OtelApi;
  readonly tracer: Tracer | null;
  readonly instruments: Instruments | null;

  private constructor(api: typeof OtelApi, tracer: Tracer | null, instruments: Instruments | null) {
    this.api = api;
    this.tracer = tracer;
    this.instruments = instruments;
  }

  /** The app's telemetry, or null when neither a tracer nor a meter provider is registered. */
  static resolve(provided: readonly unknown[]): ServerTelemetry | null {
    const a = registeredApi();
    if (a === null) return null;
    const tracer = activeTracer(a);
    const meter = activeMeter(a);
    if (tracer === null && meter === null) return null;
    return new ServerTelemetry(a, tracer, meter === null ? null : instruments(meter, provided));
  }

  /** Starts the request's span and books; returns the context to run it in (null: no tracer). */
  begin(c: Ctx): Context | null {
    const watch = new RequestWatch(this, c);
    exchangeOf(c).telemetry = watch;
    return watch.context;
  }

  /** A request was shed before it had a Ctx. */
  shed(req: IncomingMessage): void {
    this.instruments?.shed.add(1, { 'http.request.method': req.method ?? 'GET' });
  }

  /** Runs `fn(c)` with the request's context active (so spans the handler starts are children). */
  static run<T>(ctx: Context, fn: (c: Ctx) => T, c: Ctx): T {
    // A context exists only where a ServerTelemetry resolved, so the API is loaded.
    return registeredApi()!.context.with(ctx, fn, undefined, c);
  }
}

/** What `http.response.status_code` a span and the duration carry when no answer was sent. */
const NO_ANSWER = 0;

/**
 * What an HTTP server instrumentation leaves in the request's context: `@opentelemetry/core`'s RPC
 * metadata (`{ type: 'http', span }`), under the API's key for it (`createContextKey` is
 * `Symbol.for`, so fw reads it without depending on core). A framework sets its `route` so the
 * instrumentation names its span and its metrics by the route template.
 */
interface RpcMetadata {
  readonly type?: unknown;
  readonly span?: unknown;
  route?: string;
}
const RPC_METADATA = 'OpenTelemetry SDK Context Key RPC_METADATA';

/** The request's span, fw's own or another instrumentation's, and the context to run it in. */
interface RequestSpan {
  readonly span: Span;
  readonly context: Context;
  /** Set when the span is another instrumentation's: it ends the span and writes its status code. */
  readonly adopted: RpcMetadata | null;
}

/**
 * The SERVER span `@opentelemetry/instrumentation-http` opened for this request, when it is
 * registered: it starts that span in the server's `request` event and runs the listeners (fw's
 * among them) in its context, with the RPC metadata naming the span. fw then adds its attributes
 * to that span rather than opening a second SERVER span under it. `app.inject` requests never
 * pass the instrumentation, so an active span there is some outer request's, not theirs.
 */
function adoptedSpan(api: typeof OtelApi, c: Ctx): RequestSpan | null {
  if (!(exchangeOf(c).req instanceof IncomingMessage)) return null;
  const active = api.context.active();
  const span = api.trace.getSpan(active);
  const meta = active.getValue(api.createContextKey(RPC_METADATA)) as RpcMetadata | undefined;
  if (span === undefined || meta?.type !== 'http' || meta.span !== span) return null;
  const kind = (span as { kind?: unknown }).kind;
  if (kind !== undefined && kind !== api.SpanKind.SERVER) return null;
  return { span, context: active, adopted: meta };
}

/** fw's own SERVER span, continuing the caller's W3C trace. */
function ownSpan(api: typeof OtelApi, tracer: Tracer, c: Ctx): RequestSpan {
  const { propagation, ROOT_CONTEXT, SpanKind, trace } = api;
  const req = exchangeOf(c).req;
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const host = req.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  const span = tracer.startSpan(
    c.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': c.method,
        'url.path': c.path,
        'url.scheme': c.protocol,
        'client.address': c.ip,
        'server.address': colon > host.lastIndexOf(']') ? host.slice(0, colon) : host,
        'network.protocol.version': req.httpVersion,
      },
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span), adopted: null };
}

class RequestWatch implements RequestTelemetry {
  readonly context: Context | null;
  readonly #owner: ServerTelemetry;
  readonly #span: Span | null;
  /** The instrumentation's RPC metadata when the span is its own (see `adoptedSpan`), else null. */
  readonly #adopted: RpcMetadata | null;
  readonly #method: string;
  readonly #res: ServerResponse;
  readonly #start = performance.now();
  #route: string | null = null;
  /** An error status (with the exception's message) was set by `failed`: the end keeps it. */
  #errored = false;

  constructor(owner: ServerTelemetry, c: Ctx) {
    this.#owner = owner;
    this.#method = c.method;
    this.#res = exchangeOf(c).res;
    const tracer = owner.tracer;
    const started =
      tracer === null ? null : (adoptedSpan(owner.api, c) ?? ownSpan(owner.api, tracer, c));
    this.#span = started?.span ?? null;
    this.context = started?.context ?? null;
    this.#adopted = started?.adopted ?? null;
    owner.instruments?.active.add(1, { 'http.request.method': c.method });
    exchangeOf(c).res.once('close', this.#end);
  }

  routed(route: string): void {
    this.#route = route;
    const span = this.#span;
    if (span === null) return;
    span.updateName(`${this.#method} ${route}`);
    span.setAttribute('http.route', route);
    // The instrumentation names its span, and its own duration metric, by this when it ends.
    if (this.#adopted !== null) this.#adopted.route = route;
  }

  note(
    feature: 'idempotency' | 'rate_limit' | 'rate_limit_eviction' | 'deprecated',
    outcome: string,
  ): void {
    const i = this.#owner.instruments;
    const route = this.#route ?? '';
    if (feature === 'deprecated') {
      i?.deprecated.add(1, { 'http.route': route });
      return;
    }
    if (feature === 'rate_limit_eviction') {
      i?.rateEvictions.add(1, { 'http.route': route });
      return;
    }
    if (feature === 'idempotency') {
      this.#span?.setAttributes({
        'fw.idempotency.outcome': outcome,
        'fw.idempotency.replayed': outcome === 'replayed',
      });
      i?.idempotency.add(1, { 'http.route': route, 'fw.idempotency.outcome': outcome });
    } else {
      this.#span?.setAttribute('fw.rate_limit.outcome', outcome);
      i?.rateLimited.add(1, { 'http.route': route, 'fw.rate_limit.outcome': outcome });
    }
  }

  failed(err: unknown, status: number): void {
    const span = this.#span;
    if (span === null || status < 500) return;
    this.#errored = true;
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({
      code: this.#owner.api.SpanStatusCode.ERROR,
      message: err instanceof Error ? err.message : String(err),
    });
  }

  readonly #end = (): void => {
    const res = this.#res;
    const status = res.headersSent ? res.statusCode : NO_ANSWER;
    const span = this.#adopted === null ? this.#span : null; // an adopted span is not fw's to end
    if (span !== null) {
      if (status !== NO_ANSWER) span.setAttribute('http.response.status_code', status);
      if ((status >= 500 || status === NO_ANSWER) && !this.#errored) {
        span.setStatus({
          code: this.#owner.api.SpanStatusCode.ERROR,
          ...(status === NO_ANSWER ? { message: 'connection closed before the answer' } : {}),
        });
      }
      if (status >= 500) span.setAttribute('error.type', String(status));
      span.end();
    }
    const i = this.#owner.instruments;
    if (i !== null) {
      const attributes: Attributes = { 'http.request.method': this.#method };
      if (this.#route !== null) attributes['http.route'] = this.#route;
      if (status !== NO_ANSWER) attributes['http.response.status_code'] = status;
      else attributes['error.type'] = 'closed';
      i.duration.record((performance.now() - this.#start) / 1000, attributes);
      i.active.add(-1, { 'http.request.method': this.#method });
    }
  };
}
