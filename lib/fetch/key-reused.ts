import { checkWhole } from '../options';
import { badSettings } from './client-settings';
import { FetchError } from './errors';
import type { FetchResponse } from './response';
import type { OutboundCall, Scope } from './scope';

/**
 * How a service that is not fw says a key came back with another request: the answer's status and
 * the code its JSON body carries at `code`, `type`, `errorCode`, `error.code` or `error.type`.
 *
 * @example Target('stripe', { idempotencyKeys: true, keyReused: { status: 400, code: 'idempotency_error' } })
 */
export interface KeyReusedAnswer {
  readonly status: number;
  readonly code: string;
}

/**
 * The header of fw's 422 for a key used with another request (`Idempotency-Key-Mismatch: true`):
 * the failure body's shape is the upstream app's choice, the header is not.
 */
export const KEY_MISMATCH_HEADER = 'idempotency-key-mismatch';

/** Refuses a `keyReused` that is not `{ status, code }`, or one given where no key is derived. */
export function checkKeyReused(
  target: string,
  rule: KeyReusedAnswer | undefined,
  keys: boolean | undefined,
): void {
  if (rule === undefined) return;
  const bad = (why: string) =>
    new FetchError('BadSettings', `target ${target} keyReused ${why}, got ${JSON.stringify(rule)}`);
  if (rule === null || typeof rule !== 'object') throw bad('must be { status, code }');
  checkWhole({ where: `target ${target} keyReused`, refuse: badSettings }, 'status', rule.status, {
    min: 400,
    max: 599,
  });
  if (typeof rule.code !== 'string' || rule.code === '')
    throw bad('code must be a non-empty string');
  if (keys !== true) throw bad('needs idempotencyKeys: true (only derived keys are judged)');
}

/** True when `res` says the key it was sent under was used for another request. */
export function saysKeyReused(res: FetchResponse, rule: KeyReusedAnswer | null): boolean {
  if (res.status === 422 && res.header(KEY_MISMATCH_HEADER) === 'true') return true;
  if (rule === null || res.status !== rule.status) return false;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return false;
  }
  return codesOf(body).includes(rule.code);
}

/** Where services put an error's code: at the top, or under `error`. */
function codesOf(body: unknown): unknown[] {
  if (body === null || typeof body !== 'object') return [];
  const top = body as Record<string, unknown>;
  const error = (top.error !== null && typeof top.error === 'object' ? top.error : {}) as Record<
    string,
    unknown
  >;
  return [top.code, top.type, top.errorCode, error.code, error.type];
}

/**
 * The call's failure, logged on the scope: the upstream has the key from a first run whose
 * request was not this one, so it will never do what this request asks under it.
 */
export function keyReused(scope: Scope, call: OutboundCall, status: number): FetchError {
  const err = new FetchError(
    'OutboundKeyReused',
    `target ${call.target}: ${call.method} ${call.template} answered ${status}: its derived Idempotency-Key was used for another request: the request differs from the first run's. A rerun must send the same request: build it from the incoming request, the key, or a c.step result`,
  );
  scope.log?.error(err.message);
  return err;
}
