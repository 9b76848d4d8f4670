import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { OutboundCall } from '../../fetch/scope';

/** The step a call is made under, and whose keys it is (a step of another request is not ours). */
interface InStep {
  readonly owner: OutboundKeys;
  readonly name: string;
}

// A step's calls may be made after any number of awaits, and steps may run side by side: only
// the async context knows which step a call is made under.
const enclosing = new AsyncLocalStorage<InStep>();

/**
 * The derived `Idempotency-Key`s of one run of an idempotent request. A call's key is a hash of
 * the request (space, caller, key) and the call's identity (the enclosing `c.step`'s name or
 * none, the target, the method, the path template) with how many calls of that identity this run
 * made before it. A step read back on a rerun makes no call and a branch taken on one run only
 * makes calls of its own identities: neither moves another call's key. Only calls of one identity
 * (a loop over `/reserve/{sku}`) follow their order, whatever their arguments.
 */
export class OutboundKeys {
  readonly #request: string;
  readonly #counts = new Map<string, number>();

  constructor(space: string, caller: string, key: string) {
    this.#request = JSON.stringify([space, caller, key]);
  }

  /** The key of `call`, the next of its identity. */
  next(call: OutboundCall): string {
    const step = this.stepNow();
    const identity = JSON.stringify([step, call.target, call.method, call.template]);
    const n = (this.#counts.get(identity) ?? 0) + 1;
    this.#counts.set(identity, n);
    return createHash('sha256')
      .update(`fw-outbound-key:${this.#request}:${identity}:${n}`)
      .digest('base64url');
  }

  /** The name of this run's step the caller is inside of, or null. */
  stepNow(): string | null {
    const at = enclosing.getStore();
    return at !== undefined && at.owner === this ? at.name : null;
  }

  /** Runs `fn` as step `name`: the calls it makes, at once or later, are counted within the step. */
  inStep<T>(name: string, fn: () => T): T {
    return enclosing.run({ owner: this, name }, fn);
  }
}
