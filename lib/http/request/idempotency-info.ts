import type { OutboundCall } from '../../fetch/scope';
import type { SERVER_SIDE } from '../../fetch/server-side';
import { OutboundKeys } from './outbound-keys';
import type { StepRecords } from './step';

/**
 * What an idempotent handler knows about the request it answers (`c.idempotency`): the key as
 * normalised (the quoted form unwrapped), the caller `by` named (`''` on a route with one caller),
 * the space, and a fencing token that only grows. Null on a route that is not idempotent.
 *
 * Outbound calls through `fw-http/fetch` to a Target marked `{ idempotencyKeys: true }` carry an
 * `Idempotency-Key` derived from (space, caller, key) and the call's identity: the enclosing
 * `c.step` (if any), the target, the method and the path template, and how many calls of that
 * identity came before it. A rerun sends each call the key it had on the run before, so an
 * upstream that honours keys deduplicates what a crashed run already did; a step read back or a
 * branch not taken moves no other call's key.
 */
export class IdempotencyInfo {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  readonly space: string;
  readonly caller: string;
  readonly key: string;
  /**
   * Grows with every claim of the space's keys: on an atomic route the transaction id of the
   * claim (Postgres's own counter); elsewhere milliseconds since 1970 × 4096 plus a count in this
   * process, which grows as long as the servers' clocks do not go back. Pass it to your own
   * conditional writes (`WHERE fence < $token`) so a holder whose lease lapsed cannot overwrite a
   * later one's work.
   */
  readonly token: bigint;
  #steps: StepRecords | null = null;
  readonly #outbound: OutboundKeys;

  constructor(space: string, caller: string, key: string, token: bigint) {
    this.space = space;
    this.caller = caller;
    this.key = key;
    this.token = token;
    this.#outbound = new OutboundKeys(space, caller, key);
  }

  /** @internal Where `c.step` records its results: the route's space (not on an atomic route). */
  withSteps(records: StepRecords): this {
    this.#steps = records;
    return this;
  }

  /** @internal Where `c.step` records, or null (then a step just runs). */
  get steps(): StepRecords | null {
    return this.#steps;
  }

  /**
   * The derived `Idempotency-Key` of an outbound call (`fw-http/fetch` asks it through
   * `c.idempotencyKey`): the same for the same call on every run of this request.
   * @example const key = c.idempotency!.outboundKey({ target: 'bank', method: 'POST', template: '/charges' });
   */
  outboundKey(call: OutboundCall): string {
    return this.#outbound.next(call);
  }

  /** @internal Runs `fn` as step `name`: its outbound calls are counted within the step. */
  inStep<T>(name: string, fn: () => T): T {
    return this.#outbound.inStep(name, fn);
  }
}

let lastMs = 0;
let count = 0;
/** A fencing token from the clock: ms × 4096 + a count, never less than the one before in this process. */
export function clockToken(): bigint {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    count = 0;
  } else count++;
  return BigInt(lastMs) * 4096n + BigInt(count);
}
