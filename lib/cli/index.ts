/**
 * fw-http on the command line: `fw-http openapi|check|routes <entry>`. The door of lib/cli; the
 * package's `bin` runs ./main.
 */
export { run } from './run';
export type { Output } from './run';
export { documentDiff } from './document-diff';
