import type { OutboundCall } from '../../fetch/scope';
import type { SERVER_SIDE } from '../../fetch/server-side';
import { infoFaces, type IdempotencyRun } from './idempotency-run';

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
  readonly #run: IdempotencyRun;

  static {
    infoFaces.open = (run) => new IdempotencyInfo(run);
  }

  /** Made by fw as an idempotent request is read: a program never makes one. */
  private constructor(run: IdempotencyRun) {
    this.#run = run;
  }

  /** The name of the route's space. */
  get space(): string {
    return this.#run.space;
  }

  /** The caller the route's `by` named (`''` on a route with one caller). */
  get caller(): string {
    return this.#run.caller;
  }

  /** The `Idempotency-Key`, normalised (the quoted form unwrapped). */
  get key(): string {
    return this.#run.key;
  }

  /**
   * The fencing token of this run's claim, minted as the claim was won (0 before): it grows with
   * every claim of the key, in the order they were won, from every instance and on every route,
   * atomic or not. Pass it to your own conditional writes (`UPDATE … WHERE fence < $token`) so a
   * holder whose lease lapsed cannot overwrite a later one's work. Microseconds since 1970 × 4.096
   * (milliseconds × 4096 and a part below), from the store's clock where it keeps time (`RedisStore`:
   * the `TIME` of the master owning the key; `PgStore`: the database's), else from the claiming
   * process's clock (`MemoryStore`, one process; a store of your own: grows across instances while
   * their clocks agree to within the time between two claims of a key, at least a handler's run).
   * @example await db.query('UPDATE orders SET state = $1, fence = $2 WHERE id = $3 AND fence < $2', [s, c.idempotency!.token, id]);
   */
  get token(): bigint {
    return this.#run.token;
  }

  /**
   * The derived `Idempotency-Key` of an outbound call (`fw-http/fetch` asks it through
   * `c.idempotencyKey`): the same for the same call on every run of this request.
   * @example const key = c.idempotency!.outboundKey({ target: 'bank', method: 'POST', template: '/charges' });
   */
  outboundKey(call: OutboundCall): string {
    return this.#run.outboundKey(call);
  }
}
