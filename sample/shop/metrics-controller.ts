import { Controller, Get, Returns } from 'fw-http';
import { Metrics, PrometheusText } from './metrics';

/** `GET /metrics`: request durations by route, idempotency outcomes, shed and rate-limited requests. */
@Controller()
export class MetricsController {
  constructor(readonly metrics: Metrics) {}

  @Get('/metrics')
  @Returns(PrometheusText)
  async scrape(): Promise<PrometheusText> {
    return new PrometheusText(await this.metrics.text());
  }
}
