// `npm run mutate:rest`: the rest of the idempotency step (everything in its folder but the core,
// which `npm run mutate:core` runs, plus the kept-answer cache and the caller budget), against the
// step's spec list. About 70 minutes on two cores; results are reused for unchanged code and tests.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    'lib/http/features/idempotency/*.ts',
    '!lib/http/features/idempotency/idempotent-request.ts',
    '!lib/http/features/idempotency/idempotent-route.ts',
    'lib/http/features/kept-answers.ts',
    'lib/http/features/caller-budget.ts',
  ],
  incrementalFile: 'reports/stryker-rest-incremental.json',
  htmlReporter: { fileName: 'reports/mutation/rest.html' },
  jsonReporter: { fileName: 'reports/mutation/rest.json' },
};
