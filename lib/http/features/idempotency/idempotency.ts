import type { Capability } from '../../route/extensions';
import { checkIdempotent } from './check-idempotent';
import { describeIdempotent } from './describe-idempotent';
import { IdempotentRoute } from './idempotent-route';

/** Idempotent replay: the Refusals of `@Idempotent`, the step around its handler and its API description. */
export const idempotency: Capability = {
  checks: [checkIdempotent],
  arounds: [
    (record, services) => {
      const route = IdempotentRoute.of(record, services);
      return route === null ? null : (c, proceed) => route.step(c, proceed);
    },
  ],
  describe: describeIdempotent,
};
