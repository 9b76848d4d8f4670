/**
 * The mark an app reads to find the outbound clients among what it is provided (a `Client`, or an
 * `OpenTarget`'s client) without importing lib/fetch: a program that never calls out loads none
 * of lib/fetch with fw-http.
 */
export const OUTBOUND_CLIENT: unique symbol = Symbol('fw.outboundClient');

/** What an app does with an outbound client: starts it with the app and closes it after. */
export interface OutboundClient {
  readonly started: boolean;
  start(): void;
  close(): Promise<void>;
}

/** The outbound client a provided value is or holds, or null. */
export function outboundClientOf(value: unknown): OutboundClient | null {
  if (typeof value !== 'object' || value === null) return null;
  return (value as { readonly [OUTBOUND_CLIENT]?: OutboundClient })[OUTBOUND_CLIENT] ?? null;
}
