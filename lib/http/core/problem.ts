import { declareOwn } from '../../json/validator';
import { IS_INT, IS_STRING } from '../../json/validator-names';
import { phrase, PROBLEM_TYPE, type FailureFacts } from './error-mapping';

/** RFC 9457's members, which a failure's details never replace. */
const MEMBERS = new Set(['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId']);

/**
 * The RFC 9457 failure shape: `app.failures(Problem)` answers every failure as
 * `application/problem+json` with `type` (`about:blank`), `title` (the status phrase), `status`,
 * `detail` (the message), `instance` (the request path), and as extension members the failure's
 * `code`, the `requestId` and each of its details.
 *
 * @example
 * app.failures(Problem);
 * // throw fail.unprocessable({ code: 'InsufficientFunds', message: 'balance too low', details: { balance: 3 } })
 * // → 422 {"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"balance too low",
 * //         "instance":"/transfers","code":"InsufficientFunds","requestId":"…","balance":3}
 */
export class Problem {
  static readonly contentType = PROBLEM_TYPE;

  type!: string;
  title!: string;
  status!: number;
  detail!: string;
  instance!: string;
  code!: string;
  requestId!: string;

  static failure(status: number, message: string, facts: FailureFacts): object {
    const out: Record<string, unknown> = {
      type: 'about:blank',
      title: phrase(status),
      status,
      detail: message,
      instance: facts.path,
      code: facts.code,
      requestId: facts.requestId,
    };
    if (facts.details !== null)
      for (const k of Object.keys(facts.details))
        if (!MEMBERS.has(k) && k !== '__proto__') out[k] = facts.details[k];
    return out;
  }
}

// Declared as `@IsString()`/`@IsInt()` fields would be, without loading class-validator with fw.
const text = { checks: [{ name: IS_STRING }] };
declareOwn(Problem, {
  type: text,
  title: text,
  status: { checks: [{ name: IS_INT }] },
  detail: text,
  instance: text,
  code: text,
  requestId: text,
});
