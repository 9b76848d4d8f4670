// Mutation testing: `npm run mutate` (not part of `npm test`: slow on two cores).
// Scope: lib/cache and the idempotency step. The globs under lib/http match the files
// wherever they sit (lib/http/idempotency.ts before the layer move, lib/http/features/... after).
// Only the specs that exercise this code run; some of them start a real redis-server.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  mutate: [
    'lib/cache/**/*.ts',
    '!lib/cache/index.ts',
    'lib/http/**/idempotency.ts',
    'lib/http/**/kept-answers.ts',
    'lib/http/**/caller-budget.ts',
  ],
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    enableFindRelatedTests: false,
    config: {
      testMatch: [
        '<rootDir>/spec/cache/**/*.spec.ts',
        '<rootDir>/spec/http/**/idempotency.spec.ts',
        '<rootDir>/spec/http/**/kept-answers.spec.ts',
        '<rootDir>/spec/hostile/**/idempotency.spec.ts',
      ],
      testPathIgnorePatterns: ['/node_modules/', '/openapi/'],
    },
  },
  ignorePatterns: ['/dist', '/coverage', '/reports', '/tmp', '/.stryker-tmp'],
  concurrency: 2,
  timeoutMS: 20000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
