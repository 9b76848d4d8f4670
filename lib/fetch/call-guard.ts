import { FetchError } from './errors';
import type { Gate, GateWaiter } from './gate';
import type { Scope } from './scope';

function onDeadline(guard: CallGuard): void {
  guard.fail(new FetchError('TimedOut', `no answer within ${guard.timeoutMs} ms`));
}

/** How a call's waits learn that it was ended early: the reason, and listeners run once when it is set. */
export interface CallEnd {
  /** The error that ended the call early, or null. */
  readonly reason: FetchError | null;
  /** Runs `fn` once when the call ends early; at once when it has already ended. */
  onEnd(fn: () => void): void;
  offEnd(fn: () => void): void;
}

/**
 * Everything that can end one call early, in one place: its deadline, its scope's signal and the
 * client closing under it. They all set one reason, the `FetchError` to throw; every wait of the
 * call (permit, gate, head, body) listens for it. The guard also owns the permits the call holds,
 * so `release()` — run on every way out — gives back exactly what was taken.
 *
 * Not an `AbortController`: one per call (the signal, its event-target listeners, the garbage)
 * held the client to 0.95× of `undici.request` in `npm run bench`, against about 1.3× without,
 * and nothing outside the call listens.
 *
 * The deadline starts when the call is made, so waiting for a permit counts: a call
 * never waits without bound.
 */
export class CallGuard implements CallEnd {
  readonly timeoutMs: number;
  reason: FetchError | null = null;
  #listeners: (() => void)[] | null = null;
  readonly #active: Set<CallGuard>;
  #timer: NodeJS.Timeout | null = null;
  #scopeSignal: AbortSignal | null = null;
  #scope: Scope | null;
  #held: Gate[] = [];
  #released = false;

  constructor(active: Set<CallGuard>, scope: Scope | null, timeoutMs: number) {
    this.timeoutMs = timeoutMs;
    this.#active = active;
    this.#scope = scope;
    active.add(this);
    if (timeoutMs > 0) this.#timer = setTimeout(onDeadline, timeoutMs, this);
    const signal = scope?.signal;
    if (signal) {
      this.#scopeSignal = signal;
      if (signal.aborted) this.#onScopeAbort();
      else signal.addEventListener('abort', this.#onScopeAbort, { once: true });
    }
  }

  throwIfAborted(): void {
    if (this.reason !== null) throw this.reason;
  }

  /**
   * Asks the scope's signal again as a request goes out, and throws when the call has ended.
   * Reading a scope's `signal` may end it on the spot, with no round trip: an idempotent handler's
   * `Ctx` aborts it there once its claim's lease is past (a process that stalled), so no request
   * leaves for an effect another instance may be making now.
   */
  beforeSend(): void {
    const scope = this.#scope;
    if (scope !== null && this.reason === null && scope.signal?.aborted === true)
      this.#onScopeAbort();
    this.throwIfAborted();
  }

  onEnd(fn: () => void): void {
    if (this.reason !== null) fn();
    else (this.#listeners ??= []).push(fn);
  }

  offEnd(fn: () => void): void {
    const all = this.#listeners;
    const i = all === null ? -1 : all.indexOf(fn);
    if (i !== -1) all!.splice(i, 1);
  }

  /** Ends the call with `err` (first one wins) and tells every wait listening. */
  fail(err: FetchError): void {
    if (this.reason !== null) return;
    this.reason = err;
    const all = this.#listeners;
    this.#listeners = null;
    if (all !== null) for (const fn of all) fn();
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
      const onAbort = (): void => {
        gate.leave(waiter);
        reject(this.reason);
      };
      const waiter: GateWaiter = {
        // Synchronous, so the permit is on the books before any abort can run.
        grant: () => {
          this.offEnd(onAbort);
          if (this.#released) gate.release();
          else this.#held.push(gate);
          resolve();
        },
      };
      gate.join(waiter);
      this.onEnd(onAbort);
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
    this.#scope = null;
    // The client's permit was taken last; hand it back first so a queued caller of another
    // target is not held up behind this target's gate.
    for (let i = this.#held.length - 1; i >= 0; i--) this.#held[i]!.release();
    this.#held.length = 0;
  }

  readonly #onScopeAbort = (): void => {
    this.fail(
      new FetchError('Canceled', 'the scope of the call was aborted', {
        cause: this.#scopeSignal?.reason,
      }),
    );
  };
}
