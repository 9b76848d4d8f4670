import type { OpenSpace } from '../../../cache';
import { CallerBudget } from './caller-budget';
import { FillWatch } from './fill-watch';
import { StoreOutage } from './store-outage';
import { MAX_NOT_KEPT } from './idempotent-mark';

/** What every idempotent route on one opened space shares in this process. */
export class SpaceState {
  /**
   * Record id → until when (performance.now()) a retry is refused: answered, but the answer could
   * not be kept. As long as the record would have lived (its TTL): within it a retry to this
   * process never runs the handler again.
   */
  readonly notKept = new Map<string, number>();
  /**
   * Record ids whose handler runs in this process now. A retry of one is 409 before the store is
   * asked: the store may have lost the claim (restarted empty, failed over, paused past the lease).
   */
  readonly held = new Set<string>();
  /** Record id → how many duplicates of it wait here for its answer (atomic routes). */
  readonly waiting = new Map<string, number>();
  readonly callers: CallerBudget;
  readonly fill = new FillWatch();
  readonly outage = new StoreOutage();

  constructor(space: OpenSpace) {
    this.callers = new CallerBudget(space.maxBytesPerCaller);
  }

  /** Remembers that the answer to `id` was sent but not kept, for `ttlMs`: a retry here is refused meanwhile. */
  notKeptFor(id: string, ttlMs: number): void {
    if (this.notKept.size >= MAX_NOT_KEPT) this.notKept.delete(this.notKept.keys().next().value!);
    this.notKept.set(id, performance.now() + ttlMs);
  }

  /** The state of `space`, made on first use. */
  static of(space: OpenSpace): SpaceState {
    let st = states.get(space);
    if (st === undefined) states.set(space, (st = new SpaceState(space)));
    return st;
  }
}

const states = new WeakMap<OpenSpace, SpaceState>();
