// `npm run test:package`: the checks of the package as it ships, which the jest run of `npm test`
// leaves out to stay within minutes: the tarball's file list (pack), the API report against the
// declarations the build emits, what the shipped `.d.ts` shows of Ctx, fw's features type-checked
// against those declarations (built-ins use public API), and every example of the guide and the
// README type-checked against the package. Each compiles or packs the whole library and runs none
// of it (so `npm test`'s coverage loses nothing; 20 s to a minute apiece on two cores); `.ci/run`
// and CI run them after `npm test`.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: [
    '**/spec/package/pack.spec.ts',
    '**/spec/package/api-report.spec.ts',
    '**/spec/types/declarations.spec.ts',
    '**/spec/http/built-ins-public-api.spec.ts',
    '**/spec/docs/guide-examples.spec.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/'],
  coverageThreshold: undefined,
};
