import { FetchError } from './errors';
import type { Gate, GateWaiter } from './gate';
import type { Scope } from './scope';

function onDeadline(guard: CallGuard): void {
  guard.fail(new FetchError('TimedOut', `no answer within ${guard.timeoutMs} ms`));
}

/**
 * Everything that can end one call early, in one place: its deadline, its scope's signal and the
 * client closing under it. They all abort one `AbortSignal` whose reason is the `FetchError` to
 * throw; every wait of the call (permit, gate, head, body) listens to it. The guard also owns the
 * permits the call holds, so `release()` — run on every way out — gives back exactly what was taken.
 *
 * The deadline starts when the call is made, so waiting for a permit counts (OPEN-40).
 */
export class CallGuard {
  readonly timeoutMs: number;
  readonly #controller = new AbortController();
  readonly #active: Set<CallGuard>;
  #timer: NodeJS.Timeout | null = null;
  #scopeSignal: AbortSignal | null = null;
  #held: Gate[] = [];
  #released = false;

  constructor(active: Set<CallGuard>, scope: Scope | null, timeoutMs: number) {
    this.timeoutMs = timeoutMs;
    this.#active = active;
    active.add(this);
    if (timeoutMs > 0) this.#timer = setTimeout(onDeadline, timeoutMs, this);
    const signal = scope?.signal;
    if (signal) {
      this.#scopeSignal = signal;
      if (signal.aborted) this.#onScopeAbort();
      else signal.addEventListener('abort', this.#onScopeAbort, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The error that ended the call early, or null. */
  get reason(): FetchError | null {
    return this.#controller.signal.aborted ? (this.#controller.signal.reason as FetchError) : null;
  }

  throwIfAborted(): void {
    const reason = this.reason;
    if (reason) throw reason;
  }

  /** Ends the call with `err` (first one wins). */
  fail(err: FetchError): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(err);
  }

  /**
   * Takes a permit of `gate`: synchronously when one is free (returns null), else a promise that
   * settles when the queue hands one over or the call is ended first.
   */
  acquire(gate: Gate): Promise<void> | null {
    this.throwIfAborted();
    if (gate.tryTake()) {
      this.#held.push(gate);
      return null;
    }
    return new Promise<void>((resolve, reject) => {
      const signal = this.#controller.signal;
      const onAbort = (): void => {
        gate.leave(waiter);
        reject(signal.reason);
      };
      const waiter: GateWaiter = {
        // Synchronous, so the permit is on the books before any abort can run.
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          if (this.#released) gate.release();
          else this.#held.push(gate);
          resolve();
        },
      };
      gate.join(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives back every permit, stops the deadline and forgets the scope. Safe to call twice. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#active.delete(this);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#scopeSignal?.removeEventListener('abort', this.#onScopeAbort);
    this.#scopeSignal = null;
    // The client's permit was taken last; hand it back first so a queued caller of another
    // target is not held up behind this target's gate.
    for (let i = this.#held.length - 1; i >= 0; i--) this.#held[i].release();
    this.#held.length = 0;
  }

  readonly #onScopeAbort = (): void => {
    this.fail(new FetchError('Canceled', 'the scope of the call was aborted', { cause: this.#scopeSignal?.reason }));
  };
}
