import type { Ctx } from '../request/ctx';
import type { RequestTelemetry } from '../request/exchange';
import { exchangeOf } from '../request/exchange-of';

/**
 * Notes an outcome of fw's own features (an idempotent replay, a rate limit hit, a deprecated
 * route used) on the request's span and in its counters. Only when the app's telemetry is on:
 * otherwise a null check.
 */
export function noteOutcome(
  c: Ctx,
  feature: Parameters<RequestTelemetry['note']>[0],
  outcome: string,
): void {
  const t = exchangeOf(c).telemetry;
  if (t !== null) t.note(feature, outcome);
}
