/**
 * What may refuse a request's calls to the outside world (fw's outbound calls, `c.step`) while
 * they start: an atomic handler's open transaction sets one, so a connection and its locks are
 * never held across an upstream's slowness. Kept beside the request rather than on it: only the
 * feature that sets a gate can lift it.
 */
const gates = new WeakMap<object, (what: string) => void>();

/** Sets (or with null lifts) the gate of request `c`. */
export function gateOutside(c: object, gate: ((what: string) => void) | null): void {
  if (gate === null) gates.delete(c);
  else gates.set(c, gate);
}

/** Throws when request `c`'s gate refuses `what` ("an outbound call", `c.step "name"`). */
export function passOutside(c: object, what: string): void {
  const gate = gates.get(c);
  if (gate !== undefined) gate(what);
}
