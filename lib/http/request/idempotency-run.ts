import type { OutboundCall } from '../../fetch/scope';
import { OutboundKeys } from './outbound-keys';
import type { StepRecords } from './step';

/**
 * How fw opens the public face of a run (`IdempotencyInfo`): filled once, as that class is defined
 * (its `#run` is readable nowhere else). Use `idempotency-of.ts`, which types it.
 */
export const infoFaces = {
  open: (_run: IdempotencyRun): object => {
    throw new Error('the IdempotencyInfo class is not loaded');
  },
};

/**
 * One run of an idempotent request as the engine keeps it: the key, the caller and the space; the
 * claim's fencing token once won; where `c.step` records and the names it used; and the derived
 * keys of its outbound calls. The handler sees it as `c.idempotency` (an `IdempotencyInfo`).
 */
export class IdempotencyRun {
  readonly space: string;
  readonly caller: string;
  readonly key: string;
  /** The fencing token of the run's claim, once won (0 before). */
  token = 0n;
  /** Where `c.step` records its results (the route's space), or null: then a step just runs. */
  steps: StepRecords | null = null;
  /** The step names this run used (a name used twice in one run is refused). */
  stepNames = new Set<string>();
  #outbound: OutboundKeys;
  /** The run's `IdempotencyInfo` (typed by `infoOf`). */
  face: object | null = null;

  constructor(space: string, caller: string, key: string) {
    this.space = space;
    this.caller = caller;
    this.key = key;
    this.#outbound = new OutboundKeys(space, caller, key);
  }

  /** The derived `Idempotency-Key` of an outbound call: the same for the same call on every run. */
  outboundKey(call: OutboundCall): string {
    return this.#outbound.next(call);
  }

  /** The name of the step of this run the caller is inside of (across awaits), or null. */
  stepNow(): string | null {
    return this.#outbound.stepNow();
  }

  /** Runs `fn` as step `name`: its outbound calls are counted within the step. */
  inStep<T>(name: string, fn: () => T): T {
    return this.#outbound.inStep(name, fn);
  }

  /**
   * The run starts over in this process (an atomic transaction tried again): its steps and
   * outbound calls count from the start, so each call gets the key it had the first time.
   */
  rerun(): void {
    this.stepNames = new Set();
    this.#outbound = new OutboundKeys(this.space, this.caller, this.key);
  }
}
