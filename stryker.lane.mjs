// `npm run mutate:lane`: RedisStore's script lane (the connection of its own for the batched
// claims and keeps: its framing and its reply reader), against the lane's specs
// (a scripted TCP peer and real redis-servers). Apart from the stores' run because the lane's
// mutants mostly stall a connection: each waits for a test's timeout, which would make every
// other run's mutants wait behind them.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: [
    'lib/cache/read-reply.ts',
    'lib/cache/encode-command.ts',
    'lib/cache/script-lane.ts',
  ],
  jest: {
    ...base.jest,
    config: {
      ...base.jest.config,
      testTimeout: 15_000,
      testMatch: [
        '<rootDir>/spec/cache/read-reply.spec.ts',
        '<rootDir>/spec/cache/encode-command.spec.ts',
        '<rootDir>/spec/cache/script-lane.spec.ts',
        '<rootDir>/spec/cache/script-lane-peer.spec.ts',
      ],
    },
  },
  incrementalFile: 'reports/stryker-lane-incremental.json',
  htmlReporter: { fileName: 'reports/mutation/lane.html' },
  jsonReporter: { fileName: 'reports/mutation/lane.json' },
};
