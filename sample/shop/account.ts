import { fail, type Ctx } from 'fw-http';
import { type SERVER_SIDE } from 'fw-http/fetch';
import { bearsJwt, jwtCaller } from './dev-issuer';

// A Map, not an object literal: `TOKENS['toString']` would find Object.prototype's member.
const TOKENS: ReadonlyMap<string, string> = new Map([
  ['alice-token', 'alice'],
  ['bob-token', 'bob'],
]);

/** The caller, worked out once per request from the bearer token: a demo token or a JWT of the development issuer. */
export class Account {
  /** Filled by the server (from the token): a typed client leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  /** The scheme `resolve` reads: the document lists `/orders` as needing a bearer token. */
  static authorization = 'bearer' as const;

  constructor(readonly id: string) {}

  static resolve(c: Ctx): Account | Promise<Account> {
    if (bearsJwt(c)) return jwtCaller(c).then((jwt) => new Account(jwt.subject));
    const id = TOKENS.get(c.authorization('bearer').value);
    if (id === undefined) throw fail.challenge('bearer', 'unknown bearer token');
    return new Account(id);
  }
}
