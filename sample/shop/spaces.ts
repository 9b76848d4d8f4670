import { Space } from 'fw-http/cache';

/** Kept answers of the idempotent order routes: 24 h, at most 64 KiB each. */
export const Orders = Space('orders', { ttlSeconds: 24 * 60 * 60, maxBytes: 64 * 1024 });

/** Kept answers of `POST /orders/import`, a space of their own: 24 h, at most 4 KiB each. */
export const Imports = Space('imports', { ttlSeconds: 24 * 60 * 60, maxBytes: 4 * 1024 });
