import { metrics } from '@opentelemetry/api';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** Reads the meter provider's metrics when asked (the scrape): no timer, no export of its own. */
class ScrapeReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The sample's metrics: an OpenTelemetry SDK `MeterProvider` registered as the global one, read
 * at each scrape and written in the Prometheus text format. fw itself only speaks
 * `@opentelemetry/api`; this SDK wiring is the program's choice (here, the sample's).
 */
export class Metrics {
  static readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly #reader = new ScrapeReader();
  readonly #serializer = new PrometheusSerializer();

  private constructor() {
    const provider = new MeterProvider({ readers: [this.#reader] });
    // The first registration wins (a test's own provider, or another shop in this process).
    metrics.setGlobalMeterProvider(provider);
  }

  static #shared: Metrics | null = null;

  /** The process's one `Metrics`: made (and its provider registered) before any app is built. */
  static shared(): Metrics {
    return (Metrics.#shared ??= new Metrics());
  }

  /** Every metric as Prometheus text. */
  async text(): Promise<string> {
    const { resourceMetrics } = await this.#reader.collect();
    return this.#serializer.serialize(resourceMetrics);
  }
}

/** The scrape's answer: Prometheus text, written by the answer type itself. */
export class PrometheusText {
  static contentType = Metrics.contentType;
  static openapi = { type: 'string' };
  constructor(readonly text: string) {}
  write(out: { write(chunk: string): void }): void {
    out.write(this.text);
  }
}
