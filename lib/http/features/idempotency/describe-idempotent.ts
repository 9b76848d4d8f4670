import type { SpaceDecl } from '../../../cache';
import type { OperationSink } from '../../route/extensions';
import type { RouteRecord } from '../../route/route-record';
import { IDEMPOTENT } from './idempotent-mark';
import { MAX_KEY_BYTES } from './read-key';

/**
 * The API description of an idempotent route: the required key, the extra answers, and the
 * replay marker on every success answer (a replay may carry it). 403 only when `by` can refuse.
 */
export const describeIdempotent = (record: RouteRecord, op: OperationSink): void => {
  const mark = record.marks.get(IDEMPOTENT);
  if (mark === undefined) return;
  // The draft's expiry (IETF httpapi-idempotency-key §2.3): how long a key's answer is kept. The
  // document is written only for an app that was built, so the mark holds a Space declaration.
  const ttl = (mark.space as SpaceDecl).ttlSeconds;
  op.extension('x-idempotency-key-expiry-seconds', ttl);
  op.parameter({
    name: 'Idempotency-Key',
    in: 'header',
    description: `Names this request: retries with the same key get the kept answer. At most ${MAX_KEY_BYTES} bytes. Answers are kept ${ttl} s after the first.`,
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_BYTES },
  });
  for (const status of op.answerStatuses) {
    op.header(status, 'Idempotent-Replayed', {
      description: 'Present (true) when this is the kept answer replayed',
      required: false,
      schema: { type: 'string', enum: ['true'] },
    });
  }
  op.failure(400, 'Idempotency-Key missing, empty or too long');
  if (mark.by !== undefined) op.failure(403, 'no caller for this idempotent request');
  op.failure(409, 'Idempotency-Key is still being answered', {
    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  });
  op.failure(422, 'Idempotency-Key was used for a different request', {
    'Idempotency-Key-Mismatch': {
      description: 'true: this key was first sent with another request',
      schema: { type: 'string', enum: ['true'] },
    },
  });
  op.failure(503, 'the idempotency store cannot be reached or has no room'); // any idempotent route
};
