import { fail, type Ctx } from 'fw-http';

// A Map, not an object literal: `TOKENS['toString']` would find Object.prototype's member.
const TOKENS: ReadonlyMap<string, string> = new Map([
  ['alice-token', 'alice'],
  ['bob-token', 'bob'],
]);

/** The caller, worked out once per request from the bearer token. */
export class Account {
  /** The scheme `resolve` reads: the document lists `/orders` as needing a bearer token. */
  static authorization = 'bearer' as const;

  constructor(readonly id: string) {}

  static resolve(c: Ctx): Account {
    const id = TOKENS.get(c.authorization('bearer').value);
    if (id === undefined) throw fail.challenge('bearer', 'unknown bearer token');
    return new Account(id);
  }
}
