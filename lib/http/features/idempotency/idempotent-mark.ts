import type { Ctx } from '../../request/ctx';
import { MarkKey } from '../../route/mark-key';
import { markRoute } from '../../route/decorators';
import type { Isolation } from './atomic-run';

/** What an `@Idempotent` route declares. */
export interface IdempotentMark {
  /** The space declaration (from `fw-http/cache`'s `Space(...)`); the opened space is found among provided services. */
  readonly space: object;
  /** Names the caller: a non-empty string; null or undefined answers 403; anything else 500. */
  readonly by?: (c: Ctx) => string | null | undefined | Promise<string | null | undefined>;
  /**
   * On a space opened on a `PgStore`: the handler's writes (through its `Tx`) and the kept answer
   * commit in one transaction, after a check in it that the key's claim (committed first, with a
   * lease) is still this request's, so a crash before the commit leaves nothing of the handler's
   * and a rerun runs on a clean slate. The transaction opens at the handler's first `tx.query`:
   * outbound calls and steps made before it hold no connection and no lock. A duplicate in flight
   * waits off the pool (up to `waitMs`, then 409) and gets the committed answer.
   */
  readonly atomic?: boolean;
  /** The atomic transaction's isolation level. Default `'read committed'`. */
  readonly isolation?: Isolation;
  /**
   * How long an atomic handler may hold its transaction, from its first `tx.query` to the commit,
   * in ms (default the space's `leaseMs`): past it the statement running is cancelled, the
   * connection destroyed, nothing is committed and the request answers 503 `DatabaseDeadline`
   * with Retry-After.
   * @example @Idempotent(Orders, { atomic: true, deadlineMs: 5_000 })
   */
  readonly deadlineMs?: number;
  /**
   * Lets an atomic handler make outbound calls and steps while its transaction is open (refused
   * with 500 `TransactionHeld` otherwise). The cost: a connection of the pool, and every row lock
   * the transaction took, held for as long as the outside world takes to answer.
   * @example @Idempotent(Orders, { atomic: true, holdTransaction: true })
   */
  readonly holdTransaction?: boolean;
  /**
   * How long a duplicate of an atomic route's key in flight waits for the first request's answer,
   * in ms, polling the store with no connection held between polls (default the space's
   * `leaseMs`); past it, 409 with Retry-After.
   * @example @Idempotent(Orders, { atomic: true, waitMs: 5_000 })
   */
  readonly waitMs?: number;
  /**
   * How many duplicates of one key may wait at once in this process (default 16); one more gets
   * 409 with Retry-After at once.
   * @example @Idempotent(Orders, { atomic: true, maxWaiters: 4 })
   */
  readonly maxWaiters?: number;
}

/** The key of a route's `@Idempotent` mark: `record.marks.get(IDEMPOTENT)`. */
export const IDEMPOTENT = new MarkKey<IdempotentMark>('idempotent');

/**
 * Runs the handler once per `Idempotency-Key` (and caller) and replays the kept answer to retries.
 * @example @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
 */
export function Idempotent(
  space: object,
  options: Omit<IdempotentMark, 'space'> = {},
): MethodDecorator {
  return markRoute(IDEMPOTENT, { space, ...options });
}

/**
 * How long an in-flight claim holds its key when the space sets no `leaseMs`. Far shorter than a
 * record's TTL, so a process that dies mid-request blocks its key for at most this long; the claim
 * is renewed every third of it while the handler runs, so a long handler never loses it unless
 * its process stalls or loses the store for longer than the lease.
 */
export const CLAIM_LEASE_MS = 30_000;
/** Duplicates of one atomic route's key that may wait at once in a process, unless the route says. */
export const MAX_WAITERS = 16;
/** At most this many "answered, not kept" markers per space (the oldest goes first past it). */
export const MAX_NOT_KEPT = 10_000;
