import type { Scope } from '../../fetch/scope';

/**
 * A scope with no request, for background jobs and scripts that call out: it never forwards a request id.
 * @example await client.get(new Run(), 'http://127.0.0.1:4000/stock/abc', {})
 */
export class Run implements Scope {
  readonly signal?: AbortSignal | undefined;
  constructor(options: { signal?: AbortSignal | undefined } = {}) {
    this.signal = options.signal;
  }
  requestId(): null {
    return null;
  }
}
