import type { Ctx } from '../../request/ctx';
import { MarkKey } from '../../route/mark-key';
import { markRoute } from '../../route/decorators';
import type { Isolation } from '../atomic-run';

/** What an `@Idempotent` route declares. */
export interface IdempotentMark {
  /** The space declaration (from `fw-http/cache`'s `Space(...)`); the opened space is found among provided services. */
  readonly space: object;
  /** Names the caller: a non-empty string; null or undefined answers 403; anything else 500. */
  readonly by?: (c: Ctx) => string | null | undefined | Promise<string | null | undefined>;
  /**
   * On a space opened on a `PgStore`: the claim, the handler's writes (through its `Tx`) and the
   * kept answer commit in one transaction, so a crash before the commit leaves nothing and a retry
   * runs on a clean slate. A duplicate in flight waits on the key row's lock (up to the space's
   * `leaseMs`, then 409) and then gets the committed answer.
   */
  readonly atomic?: boolean;
  /** The atomic transaction's isolation level. Default `'read committed'`. */
  readonly isolation?: Isolation;
  /**
   * How long an atomic handler may hold its transaction, in ms (default the space's `leaseMs`):
   * past it the statement running is cancelled, the connection destroyed, nothing is committed
   * and the request answers 503 `DatabaseDeadline` with Retry-After.
   * @example @Idempotent(Orders, { atomic: true, deadlineMs: 5_000 })
   */
  readonly deadlineMs?: number;
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
/** At most this many "answered, not kept" markers per space (the oldest goes first past it). */
export const MAX_NOT_KEPT = 10_000;
