import { isFetchError } from './errors';
import type { FetchResponse } from './response';
import { codeOf, pause, retryAfterMs } from './retry-policy';
import type { Scope } from './scope';

/** Tries of one typed call unless its options say otherwise. */
export const CLIENT_ATTEMPTS = 5;
/** The deadline of a retried call whose target and client set none (0). */
export const CLIENT_DEADLINE_MS = 30_000;

/** The connection broke or never answered: the request may have reached the handler. */
const DROPPED = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'Stalled',
  'TimedOut',
]);
/** The request never left: safe to send again whatever the route. */
const NOT_SENT = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT']);

/** What the loop needs to know about one logical call. */
export interface RetryPlan {
  readonly scope: Scope;
  /** Sending it twice is harmless: an `@Idempotent` route under one key, or GET/HEAD. */
  readonly replayable: boolean;
  readonly attempts: number;
  readonly deadlineMs: number;
  /** One try's own bound, or null for "what is left". */
  readonly tryTimeoutMs: number | null;
  /** The statuses the route answers with a value of its own (a declared 409 is not "in flight"). */
  readonly answers: ReadonlySet<number>;
}

/**
 * Sends a typed call until it answers, retrying with the same request (so the same
 * `Idempotency-Key`) on a dropped connection, a try's timeout, fw's 409 "still being answered" and a
 * 503 with `Retry-After`, all within one deadline. A request that may have been delivered is
 * resent only when `replayable`; one that never left (connection refused) always may be.
 */
export async function sendRetried(
  plan: RetryPlan,
  send: (timeoutMs: number) => Promise<FetchResponse>,
): Promise<{ res: FetchResponse; attempts: number }> {
  const deadline = performance.now() + plan.deadlineMs;
  for (let n = 1; ; n++) {
    const left = Math.ceil(deadline - performance.now());
    const timeoutMs = Math.max(
      1,
      plan.tryTimeoutMs === null ? left : Math.min(left, plan.tryTimeoutMs),
    );
    let wait: number | null;
    try {
      const res = await send(timeoutMs);
      wait = n < plan.attempts && plan.replayable ? answerWait(res, plan.answers) : null;
      if (wait === null || performance.now() + wait >= deadline) return { res, attempts: n };
    } catch (err) {
      wait = n < plan.attempts ? errorWait(err, plan.replayable, n) : null;
      if (wait === null || performance.now() + wait >= deadline) throw err;
    }
    await pause(wait, plan.scope.signal);
  }
}

/** The wait before resending after an answer, or null when the answer is final. */
function answerWait(res: FetchResponse, answers: ReadonlySet<number>): number | null {
  const after = retryAfterMs(res.header('retry-after'));
  if (after === null) return null;
  if (res.status === 503) return after;
  // fw's "Idempotency-Key is still being answered": a failure body, not the route's own 409.
  if (res.status === 409 && !(answers.has(409) && !isFailureBody(res))) return after;
  return null;
}

function errorWait(err: unknown, replayable: boolean, n: number): number | null {
  if (isFetchError(err) && err.code === 'Canceled') return null;
  const code = codeOf(err);
  if (NOT_SENT.has(code) || (replayable && DROPPED.has(code)))
    return Math.floor(Math.random() * Math.min(2_000, 100 * 2 ** (n - 1)));
  return null;
}

/** fw's failure shape (`{ error, status }`, or `application/problem+json`), as opposed to a declared value. */
export function isFailureBody(res: FetchResponse): boolean {
  const type = res.header('content-type') ?? '';
  if (type.startsWith('application/problem+json')) return true;
  if (!type.startsWith('application/json')) return false;
  try {
    const body = JSON.parse(res.body) as { error?: unknown; status?: unknown } | null;
    return typeof body?.error === 'string' && body.status === res.status;
  } catch {
    return false;
  }
}
