import type * as Jose from 'jose';
import { HttpError } from '../../core/errors';

/** What fw uses of jose: verifying, and key sets local and fetched. */
export type JoseApi = Pick<
  typeof Jose,
  'jwtVerify' | 'createLocalJWKSet' | 'importSPKI' | 'errors'
>;

let jose: JoseApi | null = null;

/**
 * jose, loaded on the first `Bearer.jwt(…)`: an optional peer dependency (only apps that verify
 * JWTs install it), so an app without JWTs never loads it and its absence is said at the call that
 * needs it, with the command that fixes it. `load` is the `require` to use (tests pass one that
 * cannot find the package).
 */
export function joseApi(load: (id: string) => unknown = require): JoseApi {
  if (jose !== null && load === require) return jose;
  try {
    const api = load('jose') as JoseApi;
    if (load === require) jose = api;
    return api;
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw e;
    throw new HttpError(
      'PeerMissing',
      'Bearer.jwt() needs jose, an optional peer dependency of fw-http: npm install jose@5',
    );
  }
}
