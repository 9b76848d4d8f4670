import { fail } from '../../core/fail';
import type { Ctx } from '../../request/ctx';
import { noteOutcome } from '../outcome-notes';

/** An idempotency outcome for the request's span and the outcome counter (telemetry on only). */
export function note(c: Ctx, outcome: string): void {
  noteOutcome(c, 'idempotency', outcome);
}

/** 409 with `Retry-After: 1`: the key's first request is still being answered. */
export function inFlight(c: Ctx): Error {
  note(c, 'in_flight');
  c.setHeader('retry-after', '1');
  return fail.conflict('Idempotency-Key is still being answered');
}
