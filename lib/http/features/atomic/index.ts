/**
 * `fw-http/atomic`: atomic idempotent routes on a `PgStore` (from `fw-http/cache`): the claim, the
 * handler's writes through its `Tx` and the kept answer commit together. A handler asks for a `Tx`
 * by type. This folder is the door; the feature is ../tx.ts and ../atomic-run.ts.
 */
export { Tx } from '../idempotency/tx';
export type { TxClient, TxResult, TxPool, TxPoolClient, Isolation } from '../idempotency/tx';
