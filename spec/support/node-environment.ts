import { TestEnvironment } from 'jest-environment-node';
import { shareCoverageSession } from './shared-coverage';

// The spec files' environment (jest.config.js `testEnvironment`): jest's node environment, with
// V8 coverage collected on one session per worker (support/shared-coverage.ts says why). This
// module is loaded in the worker's own realm before jest-runtime starts a file's coverage.
shareCoverageSession();

export default TestEnvironment;
