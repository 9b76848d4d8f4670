import type { KeepMode, OpenSpace } from '../../../cache';
import type { Ctx } from '../../request/ctx';
import type { AtomicRun } from './atomic-run';
import type { CallerBudget } from './caller-budget';
import type { RequestParts } from './kept-answers';
import type { ClaimRenewer } from './claim-renewer';
import type { SpaceState } from './space-state';

/** What a first request needs of its route (`IdempotentRoute`): its settings and the steps it shares with replays. */
export interface RouteSteps {
  readonly space: OpenSpace;
  readonly state: SpaceState;
  readonly label: string;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly keep: KeepMode;
  readonly overhead: number;
  readonly callers: CallerBudget | null;
  readonly atomic: AtomicRun | null;
  /** How a duplicate of a key in flight waits for the answer (atomic routes), or null: 409 at once. */
  readonly waits: DuplicateWait | null;
  /** The store claims and reads in one round trip (`putIfAbsentOrGet`), and the route is not atomic. */
  readonly claimsInOne: boolean;
  readonly renewer: ClaimRenewer;
  readonly where: string;
  refuseNotKept(c: Ctx, id: string): void;
  answerExisting(c: Ctx, id: string, bytes: Buffer, parts: RequestParts): void;
  storeDown(e: unknown, c: Ctx): never;
}

/** How long a duplicate of a key in flight waits for its answer, and how many may wait per key in this process. */
export interface DuplicateWait {
  readonly waitMs: number;
  readonly maxWaiters: number;
}
