import type { OpenSpace } from '../../../cache';
import type { Ctx } from '../../request/ctx';
import { namedKey } from './read-key';
import { then } from './then';

/** A claim held while its handler runs. */
interface Holding {
  readonly id: string;
  readonly claim: Buffer;
  readonly c: Ctx;
  /** When the store last confirmed the claim (performance.now()). */
  renewedAt: number;
}

/**
 * The claims of one route whose handlers are running, renewed together by one timer every third
 * of the lease (a claim made just before a tick is renewed early, which only lengthens its hold);
 * the timer runs only while a claim is held. No timer and no async frame per request.
 *
 * A renewal the store refuses means the claim is gone (the process stalled past the lease, or the
 * store restarted empty or failed over), and so does a whole lease without one the store
 * confirmed (cut off from it): another instance may be running the same request now.
 * The handler's `c.signal` is then aborted, so it can stop before it does more, and the loss is
 * logged. Its answer cannot be kept over a claim that is gone; it is marked not kept when it ends.
 */
export class ClaimRenewer {
  readonly #holding = new Set<Holding>();
  readonly #space: OpenSpace;
  readonly #leaseMs: number;
  readonly #label: string;
  #timer: NodeJS.Timeout | null = null;

  constructor(space: OpenSpace, leaseMs: number, label: string) {
    this.#space = space;
    this.#leaseMs = leaseMs;
    this.#label = label;
  }

  /** Settles as `running` does, the claim renewed meanwhile. */
  while(c: Ctx, id: string, claim: Buffer, running: PromiseLike<unknown>): Promise<unknown> {
    const h: Holding = { id, claim, c, renewedAt: performance.now() };
    this.#holding.add(h);
    this.#timer ??= setInterval(() => this.#renewAll(), Math.max(1, Math.floor(this.#leaseMs / 3)));
    return Promise.resolve(running).then(
      (v) => (this.#done(h), v),
      (e: unknown) => (this.#done(h), Promise.reject(e)),
    );
  }

  #done(h: Holding): void {
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
        if (ok) h.renewedAt = Math.max(h.renewedAt, asked);
        else if (this.#holding.has(h)) this.#lost(h);
      },
      () => this.#unrenewed(h),
    );
  }

  /** Lost: said once, not renewed again, and the handler's signal aborted. */
  #lost(h: Holding): void {
    this.#done(h);
    const what = `claim on ${named(h)} was lost while the handler ran`;
    h.c.core.log(
      `error: ${this.#label}: ${what} (stalled or cut off from the store past its lease of ${this.#leaseMs} ms): its signal is aborted, and another instance may run the request`,
    );
    h.c.abortRun(new Error(`${this.#label}: ${what}`));
  }

  /** Not renewed (the store unavailable): lost once a whole lease has passed unconfirmed. */
  #unrenewed(h: Holding): void {
    if (!this.#holding.has(h)) return;
    if (performance.now() - h.renewedAt >= this.#leaseMs) return this.#lost(h);
    h.c.core.log(`warning: ${this.#label}: claim on ${named(h)} not renewed (store unavailable)`);
  }
}

/** The held request's key as a log line names it (worked out only when there is a line to write). */
function named(h: Holding): string {
  const { caller, key } = h.c.idempotency!;
  return namedKey(caller, key);
}
