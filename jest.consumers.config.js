// `npm run test:consumers`: the consumer check alone (spec/package/consumer.spec.ts), which the
// jest run of `npm test` leaves out: the packed tarball installed into scratch projects, built
// with each compiler setup the README gives and tested (see CONTRIBUTING.md, "The package").
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['**/spec/package/consumer.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
};
