// Mutation testing: `npm run mutate` (not part of `npm test`: slow on two cores).
// Scope: the idempotency step (lib/http/features/idempotency/, its kept-answer cache
// and caller budget). The stores' shared code has a run of its own, `npm run mutate:stores`
// (stryker.stores.mjs), against the cache specs: each mutant runs every spec file of its run, so
// two short lists finish sooner than one long one. RedisStore's and PgStore's own drivers are
// left out: their mutants mostly need a server failing in a given way.
// `ignoreStatic`: mutants in module-level code (constants, tables) would each need every test
// run again, which is most of the time of a full run and kills few.
// The specs include the refusals, versioned, inner-contracts, OpenAPI and telemetry ones: some
// rules of the step (REF-11/13, OPEN-50) are tested only there. Some start a real redis-server.
// Not atomic.spec.ts: its Postgres cluster (initdb) was made again for nearly every mutant, most
// of a run's time; the step's atomic branches are left to the fencing spec's atomic part.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  // No type checker: on two cores it was the bottleneck (one mutant checked at a time, the test
  // runner idle). A mutant that is not valid TypeScript then runs as the JavaScript it compiles
  // to and counts like any other (killed or survived), which can only lower the score.
  checkers: [],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // A rerun after a test is added tries again only the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  mutate: [
    'lib/http/features/idempotency/*.ts',
  ],
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    enableFindRelatedTests: false,
    config: {
      testMatch: [
        '<rootDir>/spec/http/idempotency*.spec.ts',
        '<rootDir>/spec/http/kept-answers.spec.ts',
        '<rootDir>/spec/http/lapse-queue.spec.ts',
        '<rootDir>/spec/http/refusals.spec.ts',
        '<rootDir>/spec/http/versioned.spec.ts',
        '<rootDir>/spec/http/inner-contracts.spec.ts',
        '<rootDir>/spec/http/openapi/idempotency*.spec.ts',
        '<rootDir>/spec/http/uploads/idempotent-upload.spec.ts',
        '<rootDir>/spec/hostile/idempotency.spec.ts',
        '<rootDir>/spec/telemetry/*.spec.ts',
      ],
      testPathIgnorePatterns: ['/node_modules/'],
      // A mutant that hangs a request fails its test at this limit rather than jest's 30 s: most
      // of a run's time was spent waiting for such tests to give up.
      testTimeout: 4000,
    },
  },
  ignorePatterns: ['/dist', '/coverage', '/reports', '/tmp', '/.stryker-tmp'],
  // Three runners on two cores: a runner spends much of its time waiting (servers starting,
  // timers in the tests), not computing.
  concurrency: 3,
  timeoutMS: 5000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
