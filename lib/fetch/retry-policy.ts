import { checkLimit } from './client-settings';
import { FetchError, isFetchError } from './errors';
import type { HeaderLine } from './header-line';
import type { FetchResponse } from './response';
import type { Scope } from './scope';

/**
 * How a Target retries: `Target('payments', { retry: { attempts: 4, on: [503, 'ECONNRESET'] } })`.
 * Only calls that are safe to send twice are retried: an idempotent method (GET, HEAD, OPTIONS,
 * PUT, DELETE) or a call carrying an `Idempotency-Key`.
 */
export interface RetryOptions {
  /** Tries in all, the first included; 1 never retries. Default 3. */
  readonly attempts?: number;
  /**
   * The wait before the n-th retry is a random time up to `min(maxMs, baseMs × 2^(n-1))` ("full
   * jitter", so retries from many callers spread out). Default `{ baseMs: 100, maxMs: 2_000 }`.
   * An answer's `Retry-After` replaces it.
   */
  readonly backoff?: { readonly baseMs?: number; readonly maxMs?: number };
  /** What is retried: answer statuses and error codes (fw's or the socket's). Default `RETRY_ON`. */
  readonly on?: readonly (number | string)[];
  /**
   * The longest one call may take over all its tries and waits. Default the call's `timeoutMs`
   * (the target's, else the client's), else 30 s; a retry that could not start before it is not made.
   */
  readonly budgetMs?: number;
}

/**
 * Retried by default: answers that say "not now" (429, 502, 503, 504), silence past `stallMs`, and
 * connections that failed or broke. Not `TimedOut` (the call's deadline, shared by its tries, is
 * spent) nor `Canceled` (the scope is gone).
 */
export const RETRY_ON: readonly (number | string)[] = Object.freeze([
  429,
  502,
  503,
  504,
  'Stalled',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const DEFAULT_BUDGET_MS = 30_000;

/** One try of a call, given the time it has left. */
export type Attempt = (timeoutMs: number, resend: number) => Promise<FetchResponse>;

/** What a retried call is: its scope (for cancellation), method, headers and deadline. */
export interface RetriedCall {
  readonly scope: Scope;
  readonly method: string;
  readonly headers: readonly (readonly HeaderLine[] | undefined)[];
  readonly timeoutMs: number;
}

/** A Target's retry settings, checked once when it is declared. */
export class RetryPolicy {
  readonly #attempts: number;
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #on: ReadonlySet<number | string>;
  readonly #budgetMs: number | null;

  constructor(target: string, options: RetryOptions) {
    const where = `target ${target} retry`;
    checkLimit(where, 'attempts', options.attempts, 1);
    checkLimit(where, 'backoff.baseMs', options.backoff?.baseMs);
    checkLimit(where, 'backoff.maxMs', options.backoff?.maxMs);
    checkLimit(where, 'budgetMs', options.budgetMs, 1);
    for (const item of options.on ?? [])
      if (typeof item !== 'string' && !(Number.isInteger(item) && item >= 100 && item <= 599))
        throw new FetchError(
          'BadSettings',
          `${where} on: ${String(item)} is neither a status nor a code`,
        );
    this.#attempts = options.attempts ?? 3;
    this.#baseMs = options.backoff?.baseMs ?? 100;
    this.#maxMs = options.backoff?.maxMs ?? 2_000;
    this.#on = new Set(options.on ?? RETRY_ON);
    this.#budgetMs = options.budgetMs ?? null;
  }

  /** True when `call` may be sent more than once. */
  covers(call: RetriedCall): boolean {
    if (this.#attempts < 2) return false;
    if (SAFE_METHODS.has(call.method.toUpperCase())) return true;
    return call.headers.some((lines) =>
      lines?.some((l) => l.name.toLowerCase() === 'idempotency-key'),
    );
  }

  /** Runs `attempt` until it answers something not retried, the tries run out, or the deadline would pass. */
  async run(call: RetriedCall, attempt: Attempt): Promise<FetchResponse> {
    const budget = this.#budget(call.timeoutMs);
    const deadline = performance.now() + budget;
    for (let n = 0; ; n++) {
      const left = Math.ceil(deadline - performance.now());
      let outcome: { res: FetchResponse } | { err: unknown };
      try {
        outcome = { res: await attempt(Math.max(left, 1), n) };
      } catch (err) {
        outcome = { err };
      }
      const wait = this.#waitAfter(outcome, n);
      if (wait === null || performance.now() + wait >= deadline) {
        if ('res' in outcome) return outcome.res;
        throw outcome.err;
      }
      await pause(wait, call.scope.signal);
    }
  }

  #budget(timeoutMs: number): number {
    const own = timeoutMs > 0 ? timeoutMs : DEFAULT_BUDGET_MS;
    return this.#budgetMs === null ? own : Math.min(own, this.#budgetMs);
  }

  /** How long to wait before the next try, or null when this outcome is final. */
  #waitAfter(outcome: { res: FetchResponse } | { err: unknown }, n: number): number | null {
    if (n + 1 >= this.#attempts) return null;
    if ('res' in outcome) {
      if (!this.#on.has(outcome.res.status)) return null;
      return retryAfterMs(outcome.res.header('retry-after')) ?? this.#backoff(n);
    }
    return this.#on.has(codeOf(outcome.err)) ? this.#backoff(n) : null;
  }

  #backoff(n: number): number {
    return Math.floor(Math.random() * Math.min(this.#maxMs, this.#baseMs * 2 ** n));
  }
}

/** fw's code, else the socket's or undici's (`ECONNRESET`, `UND_ERR_SOCKET`), else the cause's. */
export function codeOf(err: unknown): string {
  if (isFetchError(err)) return err.code;
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : '';
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Waits `ms`, or fails `Canceled` as soon as the scope ends. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    const canceled = () => {
      clearTimeout(timer);
      fail(new FetchError('Canceled', 'the scope ended while the call waited to retry'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', canceled);
      done();
    }, ms);
    if (signal?.aborted) canceled();
    else signal?.addEventListener('abort', canceled, { once: true });
  });
}
