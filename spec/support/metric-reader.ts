import { metrics } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader collected on demand, nothing exported. */
class OnDemand extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The real SDK's MeterProvider, registered globally for this spec file (jest gives each file its
 * own globals), with a reader the spec collects when it wants to look.
 */
export function globalMetricReader(): MetricReader {
  const reader = new OnDemand();
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  return reader;
}
