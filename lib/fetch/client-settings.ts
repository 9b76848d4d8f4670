import { checkWhole } from '../options';
import { FetchError } from './errors';

/**
 * What `new Client(settings)` takes. Every field is optional; the defaults are the spec's.
 *
 * @example
 * const client = new Client({ maxInFlight: 64, timeoutMs: 5_000 });
 */
export interface ClientSettings {
  /** Calls at once across all hosts; further callers wait, first come first served. Default 32. */
  readonly maxInFlight?: number;
  /** Bound on one whole call: permit wait, connect, send, head and body. 0 = none. Default 30 000. */
  readonly timeoutMs?: number;
  /** Most silence since the last received byte while the client waits for bytes. 0 = none. Default 0. */
  readonly stallMs?: number;
  /** Largest response body a `FetchResponse` call takes in. Default 8 MiB. */
  readonly maxBody?: number;
  /** Most unread body read to the end to keep a pooled connection; more and the connection is dropped. Default 64 KiB. */
  readonly maxDrain?: number;
  /** Read buffer of each connection (the socket's high-water mark). Default 8 KiB. */
  readonly readBufferSize?: number;
  /** Send the scope's request id as `X-Request-Id`. Default true. */
  readonly forwardRequestId?: boolean;
}

export type ResolvedClientSettings = {
  readonly [K in keyof ClientSettings]-?: NonNullable<ClientSettings[K]>;
};

export const CLIENT_DEFAULTS: ResolvedClientSettings = Object.freeze({
  maxInFlight: 32,
  timeoutMs: 30_000,
  stallMs: 0,
  maxBody: 8 * 1024 * 1024,
  maxDrain: 64 * 1024,
  readBufferSize: 8 * 1024,
  forwardRequestId: true,
});

/** A setting refused: `BadSettings`, naming it (an `OptionOwner`'s `refuse`). */
export const badSettings = (message: string): FetchError => new FetchError('BadSettings', message);

/** Throws `BadSettings` naming the field unless `value` is a whole number from `min` (or absent). */
export function checkLimit(where: string, field: string, value: number | undefined, min = 0): void {
  if (value !== undefined) checkWhole({ where, refuse: badSettings }, field, value, { min });
}

export function resolveClientSettings(settings: ClientSettings): ResolvedClientSettings {
  checkLimit('client', 'maxInFlight', settings.maxInFlight, 1);
  checkLimit('client', 'timeoutMs', settings.timeoutMs);
  checkLimit('client', 'stallMs', settings.stallMs);
  checkLimit('client', 'maxBody', settings.maxBody);
  checkLimit('client', 'maxDrain', settings.maxDrain);
  checkLimit('client', 'readBufferSize', settings.readBufferSize, 1);
  const resolved: { -readonly [K in keyof ResolvedClientSettings]: ResolvedClientSettings[K] } = {
    ...CLIENT_DEFAULTS,
  };
  for (const key of Object.keys(CLIENT_DEFAULTS) as (keyof ResolvedClientSettings)[]) {
    const value = settings[key];
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value;
  }
  return Object.freeze(resolved);
}
