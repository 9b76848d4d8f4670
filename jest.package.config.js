// `npm run test:package`: the checks of the package as it ships, which the jest run of `npm test`
// leaves out to stay within minutes: the tarball's file list (pack), the API report against the
// declarations the build emits, and what the shipped `.d.ts` shows of Ctx. Each compiles or packs the
// whole library (about a minute apiece on two cores); `.ci/run` and CI run them after `npm test`.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: [
    '**/spec/package/pack.spec.ts',
    '**/spec/package/api-report.spec.ts',
    '**/spec/types/declarations.spec.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/'],
  coverageThreshold: undefined,
};
