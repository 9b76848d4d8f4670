import type { OpenSpace } from '../../../cache';
import { HttpError } from '../../core/errors';
import type { Ctx } from '../../request/ctx';
import { Lease } from '../../request/lease';
import { namedKey } from './read-key';
import { then } from './then';
import { exchangeOf } from '../../request/exchange-of';

/** A claim held while its handler runs, and its lease as this process knows it. */
export interface Holding {
  readonly id: string;
  readonly claim: Buffer;
  readonly c: Ctx;
  readonly lease: Lease;
}

/**
 * The claims of one route whose handlers are running, renewed together by one timer every third
 * of the lease (a claim made just before a tick is renewed early, which only lengthens its hold);
 * the timer runs only while a claim is held. No timer and no async frame per request.
 *
 * A renewal the store refuses means the claim is gone (the process stalled past the lease, or the
 * store restarted empty or failed over), and so does `leaseMs − marginMs` without a write of it
 * the store confirmed (stalled, or cut off from the store): another instance may be running the
 * same request now. That second case is found without a round trip, by the lease's check, which
 * the handler's `c.signal`, its outbound calls and `c.step` make too (see `Lease`): a process
 * resuming from a stall learns it before its next effect, not a renewal later. The handler's
 * `c.signal` is then aborted (with `LeaseLost`), so it can stop before it does more, and the loss
 * is logged. Its answer cannot be kept over a claim that is gone; it is marked not kept when it ends.
 */
export class ClaimRenewer {
  readonly #holding = new Set<Holding>();
  readonly #space: OpenSpace;
  readonly #leaseMs: number;
  readonly #label: string;
  readonly #marginMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(space: OpenSpace, leaseMs: number, label: string, marginMs: number) {
    this.#space = space;
    this.#leaseMs = leaseMs;
    this.#label = label;
    this.#marginMs = marginMs;
  }

  /**
   * The claim on `id`, sent to the store at `sentAt`, is held from now: its lease goes on `c`
   * before the handler is called, so the handler's first check already counts.
   */
  hold(c: Ctx, id: string, claim: Buffer, sentAt: number): Holding {
    const lease: Lease = new Lease({
      sentAt,
      leaseMs: this.#leaseMs,
      marginMs: this.#marginMs,
      onLost: () => this.#lost(h),
    });
    const h: Holding = { id, claim, c, lease };
    exchangeOf(c).holdLease(lease);
    return h;
  }

  /** Settles as `running` does, the claim renewed meanwhile. */
  while<T>(h: Holding, running: PromiseLike<T>): Promise<T> {
    if (!h.lease.lost) {
      this.#holding.add(h);
      this.#timer ??= setInterval(
        () => this.#renewAll(),
        Math.max(1, Math.floor(this.#leaseMs / 3)),
      );
    }
    return Promise.resolve(running).then(
      (v) => (this.end(h), v),
      (e: unknown) => (this.end(h), Promise.reject(e as Error)),
    );
  }

  /** The handler is over (it answered at once, or `while` settled): its lease is checked no more. */
  end(h: Holding): void {
    exchangeOf(h.c).holdLease(null);
    this.#drop(h);
  }

  /** Not renewed any more; the timer stops with the last claim. */
  #drop(h: Holding): void {
    this.#holding.delete(h);
    if (this.#holding.size === 0 && this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  #renewAll(): void {
    for (const h of this.#holding) this.#renew(h);
  }

  #renew(h: Holding): void {
    // Past its limit here (this process stalled, or every renewal went unanswered): lost, and no
    // renewal is sent that could hold the key for a run already told to stop.
    if (!h.lease.check()) return;
    const asked = performance.now();
    let held;
    try {
      held = this.#space.put(h.id, h.claim, this.#leaseMs, { expect: h.claim });
    } catch {
      return this.#unrenewed(h);
    }
    void then(
      held,
      (ok) => {
        if (ok) h.lease.confirm(asked);
        else if (this.#holding.has(h)) h.lease.lose();
      },
      () => this.#unrenewed(h),
    );
  }

  /** Lost (the lease's `onLost`): said once, not renewed again, and the handler's signal aborted. */
  #lost(h: Holding): void {
    this.#drop(h);
    const what = `claim on ${named(h)} was lost while the handler ran`;
    exchangeOf(h.c).core.log(
      `error: ${this.#label}: ${what} (stalled or cut off from the store past its lease of ${this.#leaseMs} ms): its signal is aborted, and another instance may run the request`,
    );
    // The reason may become the client's answer (a handler rethrowing it): the route stays in the log.
    exchangeOf(h.c).abortRun(new HttpError('LeaseLost', what));
  }

  /** Not renewed (the store unavailable): lost once past the lease's limit unconfirmed. */
  #unrenewed(h: Holding): void {
    if (!this.#holding.has(h) || !h.lease.check()) return;
    exchangeOf(h.c).core.log(
      `warning: ${this.#label}: claim on ${named(h)} not renewed (store unavailable)`,
    );
  }
}

/** The held request's key as a log line names it (worked out only when there is a line to write). */
function named(h: Holding): string {
  const { caller, key } = h.c.idempotency!;
  return namedKey(caller, key);
}
