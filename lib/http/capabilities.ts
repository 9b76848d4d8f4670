import type { Capability } from './compile-route';
import { idempotency } from './idempotency';
import { rateLimits } from './rate-limit';
import { versioned } from './versioned';
import { files } from './files/file-body';
import { jsonSpelling } from './json-spelling';
import { websockets } from './websocket';

/** The capabilities every app is built with, in the order their steps wrap a handler. */
export const CAPABILITIES: readonly Capability[] = [websockets, rateLimits, idempotency, versioned, files, jsonSpelling];
