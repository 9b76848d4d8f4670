import type { Capability } from '../route/extensions';
import { apiVersions } from '../features/api-versions';
import { idempotency } from '../features/idempotency/idempotency';
import { rateLimits } from '../features/rate-limit';
import { versioned } from '../features/versioned';
import { files } from '../features/files/file-body';
import { jsonSpelling } from '../features/json-spelling';
import { websockets } from '../features/websocket';
import { uploads } from '../features/uploads';
import { guards } from '../features/guards';
import { browserDefaults } from '../features/browser-defaults';
import { declaredFailures } from '../features/declared-failures';

/** The capabilities every app is built with, in the order their steps wrap a handler. */
export const CAPABILITIES: readonly Capability[] = [
  apiVersions,
  websockets,
  rateLimits,
  browserDefaults,
  guards,
  idempotency,
  versioned,
  files,
  jsonSpelling,
  uploads,
  declaredFailures,
];
