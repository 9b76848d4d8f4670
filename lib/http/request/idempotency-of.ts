// The IdempotencyInfo class fills `infoFaces` as it is defined: loaded here, before a run opens.
import './idempotency-info';
import type { IdempotencyInfo } from './idempotency-info';
import { IdempotencyRun, infoFaces } from './idempotency-run';

// fw's way between an idempotent run (the engine's) and its public face, `c.idempotency`. No door
// exports this module.

/** Opens the run of an idempotent request, with its `IdempotencyInfo`. */
export function openIdempotency(space: string, caller: string, key: string): IdempotencyRun {
  const run = new IdempotencyRun(space, caller, key);
  run.face = infoFaces.open(run);
  return run;
}

/** The `IdempotencyInfo` of run `run`: what `c.idempotency` gives a handler. */
export function infoOf(run: IdempotencyRun): IdempotencyInfo {
  return run.face as IdempotencyInfo;
}
