import { HttpError } from '../core/errors';
import { firstIssue, type StandardResult, type StandardSchema } from '../core/standard-schema';
import { isThenable } from '../core/thenable';
import type { Encoder } from '../route/extensions';
import { declaredWriter } from './declared-writer';

/**
 * The writer of a `@Returns(schema)` answer: the returned value goes through the
 * schema's `~standard.validate`, and what it gives back (its output) is what is written. The
 * declaration is the wire as for a class: zod's `z.object` and valibot's `v.object` leave out keys
 * they do not declare, so a `passwordHash` on the returned row never leaves; a schema that keeps
 * unknown keys (`z.looseObject`, `.passthrough()`) declares that it does. A value the schema
 * refuses is `AnswerMismatch` naming the route and the first failing path: the route answers 500
 * and logs it, as the document would otherwise lie. An async schema makes the answer async.
 */
export function schemaEncoder(schema: StandardSchema, label: string): Encoder {
  const standard = schema['~standard'];
  const validate = standard.validate.bind(standard);
  // The schema's output is what it declares: written as it comes, by the route's writer.
  const json = declaredWriter(null, { label, dropped: null });
  const send = (
    c: Parameters<Encoder>[0],
    r: StandardResult<unknown>,
    status: number,
    own: Parameters<Encoder>[3],
  ): void => {
    if (r.issues !== undefined)
      throw new HttpError(
        'AnswerMismatch',
        `${label}: ${firstIssue('the answer', r.issues)} (its @Returns schema refused it)`,
      );
    json.answer(c, r.value, status, own);
  };
  return (c, v, status, own) => {
    const r = validate(v);
    if (isThenable<StandardResult<unknown>>(r))
      return Promise.resolve(r).then((done) => send(c, done, status, own));
    send(c, r, status, own);
  };
}
