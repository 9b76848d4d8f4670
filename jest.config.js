/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json', diagnostics: false }],
  },
  moduleNameMapper: {
    '^fw-http$': '<rootDir>/lib/http/index.ts',
    '^fw-http/cache$': '<rootDir>/lib/cache/index.ts',
    '^fw-http/fetch$': '<rootDir>/lib/fetch/index.ts',
  },
  testTimeout: 30000,
  maxWorkers: 2,
};
