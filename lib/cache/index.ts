/**
 * `fw-http/cache`: spaces of bytes with a TTL and a size bound, over a store that is either in this
 * process (`MemoryStore`, the default) or in Redis (`RedisStore`). This file is the module's
 * only public door; it never imports `fw` or `fw-http/fetch`.
 */
export { Space } from './space';
export type { SpaceDecl, SpaceOptions } from './space';
export { OpenSpace } from './open-space';
export type { Store, ExpectOptions } from './store';
export { MemoryStore } from './memory-store';
export type { MemoryStoreOptions } from './memory-store';
export { RedisStore } from './redis/redis-store';
export type { RedisStoreOptions, RedisNode } from './redis/redis-store-options';
export type { RateStore, RateRule, RateWindow, RateCount } from './rate-store';
export { MemoryRateStore } from './memory-rate-store';
export {
  RateTable,
  RATE_ADMITTED,
  RATE_OVER,
  type RateVerdict,
  type RateTableOptions,
  type RateStanding,
} from './rate-table';
export { CacheError, CACHE_ERRORS } from './errors';
export type { CacheErrorCode } from './errors';
export { CodedError, type ErrorRow } from '../errors';
// PgStore: a space on Postgres, able to run atomic idempotent routes.
export { PgStore } from './pg/pg-store';
export type { PgStoreOptions, PgPool, PgPoolClient } from './pg/pg-store';
export { PgTransaction } from './pg/pg-transaction';
export type { PgTransactionOptions, PgIsolation, PgResult } from './pg/pg-transaction';
// The store contract may answer at once; which answers a space keeps.
export type { Answer } from './store';
export type { KeepMode } from './space';
export { DEFAULT_KEY_DOCS } from './space';
