import { checkLimit } from './client-settings';
import { FetchError } from './errors';
import type { HeaderLine } from './header-line';
import { spell } from '../json';

/**
 * The last argument of every call. All fields are optional, so `{}` is an ordinary call.
 *
 * @example
 * await client.get(c, url, { headers: [{ name: 'Accept', value: 'application/json' }], timeoutMs: 2_000 });
 */
export interface Call {
  /**
   * Written in the given order. A line for a header the client has a slot for (host,
   * authorization, user-agent, content-type, connection, accept-encoding) is sent once: this
   * copy (the last, if named twice). A line shadows a target's standing header of the same name.
   */
  readonly headers?: readonly HeaderLine[];
  /** This call's deadline, over the target's and the client's. 0 = none. */
  readonly timeoutMs?: number;
  /** This call's bound on silence, over the target's and the client's. 0 = none. */
  readonly stallMs?: number;
  /** This call's body ceiling, over the target's and the client's. */
  readonly maxBody?: number;
}

/** A request body: text (sent as UTF-8) or bytes. */
export type BodyBytes = string | Uint8Array;

/** What a JSON call takes: anything JSON can write except text, which goes through `post`. */
export type JsonValue = object | number | boolean | null;

export interface Limits {
  readonly timeoutMs: number;
  readonly stallMs: number;
  readonly maxBody: number;
}

/** The call's limits over `base` (the target's over the client's, already merged). */
export function callLimits(call: Call, base: Limits): Limits {
  checkLimit('call', 'timeoutMs', call.timeoutMs);
  checkLimit('call', 'stallMs', call.stallMs);
  checkLimit('call', 'maxBody', call.maxBody);
  return {
    timeoutMs: call.timeoutMs ?? base.timeoutMs,
    stallMs: call.stallMs ?? base.stallMs,
    maxBody: call.maxBody ?? base.maxBody,
  };
}

export function bodyBytes(body: BodyBytes | null | undefined): Buffer | null {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array)
    return Buffer.isBuffer(body)
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new FetchError('BadBody', `a body is text or bytes, got a ${typeof body}`);
}

/** JSON text of `value`; text and undefined are refused at run time as well as by the type. */
export function jsonBytes(value: JsonValue): Buffer {
  if (typeof value === 'string' || value instanceof String) {
    throw new FetchError(
      'BadBody',
      'a JSON call was given text; send text with post/put/patch/send',
    );
  }
  const text: string | undefined = JSON.stringify(spell(value));
  if (text === undefined)
    throw new FetchError(
      'BadBody',
      `a JSON call was given a value JSON cannot write (${typeof value})`,
    );
  return Buffer.from(text, 'utf8');
}
