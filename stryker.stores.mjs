// `npm run mutate:stores`: the stores' shared code (the Store contract, OpenSpace, Space,
// MemoryStore, the argument checks RedisStore and PgStore share, RedisStore's ScriptBatch and its
// reconnecting after ioredis gave a connection up), against the cache specs and
// the idempotency spec that opens spaces on every store. Apart from the step's run
// (stryker.config.mjs) because each mutant runs every spec file of its run: a short list here
// makes this run minutes, not an hour.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    'lib/cache/store.ts',
    'lib/cache/open-space.ts',
    'lib/cache/space.ts',
    'lib/cache/memory-store.ts',
    'lib/cache/check-args.ts',
    'lib/cache/script-batch.ts',
    'lib/cache/reconnect-after-end.ts',
  ],
  jest: {
    ...base.jest,
    config: {
      ...base.jest.config,
      // The MemoryStore budget test fills a store and collects garbage: more than the step's 4 s.
      testTimeout: 10_000,
      testMatch: [
        '<rootDir>/spec/cache/memory-store.spec.ts',
        '<rootDir>/spec/cache/open-space.spec.ts',
        '<rootDir>/spec/cache/own-store.spec.ts',
        '<rootDir>/spec/cache/arguments.spec.ts',
        '<rootDir>/spec/cache/script-batch.spec.ts',
        '<rootDir>/spec/cache/claim-or-keep-each.spec.ts',
        '<rootDir>/spec/cache/reconnect-after-end.spec.ts',
        '<rootDir>/spec/cache/redis-store.spec.ts',
        '<rootDir>/spec/cache/pg-store.spec.ts',
        '<rootDir>/spec/http/idempotency.spec.ts',
      ],
    },
  },
  incrementalFile: 'reports/stryker-stores-incremental.json',
  htmlReporter: { fileName: 'reports/mutation/stores.html' },
  jsonReporter: { fileName: 'reports/mutation/stores.json' },
};
