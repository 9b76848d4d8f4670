import { mapError } from '../../core/error-mapping';
import type { Ctx } from '../../request/ctx';
import type { CapturedAnswer } from '../../request/exchange';
import { exchangeOf } from '../../request/exchange-of';

/**
 * Kept answers that stand for an error: the 500 of an answer refused after its handler ran, or a
 * handler's failure on a space that keeps `'all'`. Sending one throws the error instead, so the
 * app answers it as it answers any error (the same bytes, as it maps the error the same way) and
 * logs it once; a retry replays the kept bytes.
 */
const failures = new WeakMap<CapturedAnswer, unknown>();

/** The failure answer of `e`, as the app would write it, to be kept as the handler's answer. */
export function failureAnswer(c: Ctx, e: unknown): CapturedAnswer {
  const failure = mapError(e, '');
  const answer: CapturedAnswer = {
    status: failure.status,
    type: exchangeOf(c).core.failureType,
    body: exchangeOf(c).core.failureBody({
      status: failure.status,
      message: failure.message,
      code: failure.code,
      details: failure.details,
      requestId: c.requestId(),
      path: c.path,
    }),
    own: null,
  };
  failures.set(answer, e);
  return answer;
}

/** Sends a captured answer; one standing for an error throws it instead. */
export function sendAnswer(c: Ctx, answer: CapturedAnswer): void {
  if (answer.status >= 400 && failures.has(answer)) throw failures.get(answer);
  exchangeOf(c).write(answer.status, answer.type, answer.body, answer.own);
}
