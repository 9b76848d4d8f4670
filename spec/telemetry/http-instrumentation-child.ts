// Run by http-instrumentation.spec.ts in a child node, as a program sets up OpenTelemetry: the SDK
// and @opentelemetry/instrumentation-http registered before the server starts (jest's own require
// never passes the instrumentation's hook, so it cannot be tried in the test's process). Sends each
// scenario's requests, then prints one line of JSON: scenario → the spans that ended.
import { context, propagation, trace, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import type * as Scenarios from './http-instrumentation-app';
import { globalMetricReader } from '../support/metric-reader';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const reader = globalMetricReader();
const instrumentation = new HttpInstrumentation();
instrumentation.setTracerProvider(provider);
instrumentation.enable();

// Loaded after the instrumentation, as `node --require ./otel.js app.js` would.
const { scenarios } = require('./http-instrumentation-app') as typeof Scenarios;

/** What the parent reads of a span. */
const shape = (s: ReadableSpan) => ({
  scope: s.instrumentationScope.name,
  name: s.name,
  kind: SpanKind[s.kind],
  spanId: s.spanContext().spanId,
  parentId: s.parentSpanContext?.spanId ?? null,
  attributes: s.attributes,
  events: s.events.map((e) => e.name),
});

async function main(): Promise<void> {
  const out: Record<string, unknown> = {};
  for (const [name, run] of Object.entries(scenarios)) {
    exporter.reset();
    const ended = await run();
    // A span ends as its answer closes: wait for those the scenario says it made.
    while (exporter.getFinishedSpans().length < ended) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50)); // and for any more than that, which would be wrong
    out[name] = exporter.getFinishedSpans().map(shape);
  }
  // The routes the instrumentation's own duration metric was recorded under.
  const { resourceMetrics } = await reader.collect();
  out.metricRoutes = resourceMetrics.scopeMetrics
    .filter((m) => m.scope.name === '@opentelemetry/instrumentation-http')
    .flatMap((m) => m.metrics)
    .filter((m) => m.descriptor.name === 'http.server.request.duration')
    .flatMap((m) => m.dataPoints.map((p) => p.attributes['http.route'] ?? null));
  process.stdout.write(JSON.stringify(out) + '\n');
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${String((e as Error)?.stack ?? e)}\n`);
    process.exit(1);
  },
);
