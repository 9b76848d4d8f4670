/**
 * The statements of `PgStore`, on one table. Expiry is judged by `clock_timestamp()`, the
 * database's clock at the moment of the statement (not `now()`, fixed at the start of a
 * transaction), so every instance agrees on when an entry lapses.
 */
export interface PgSql {
  readonly table: string;
  readonly migrate: string;
  readonly get: string;
  /**
   * $1 key, $2 value, $3 ttl ms; returns a row when the claim was taken: `us`, the database's clock
   * in microseconds once the row is written (after any wait on a duplicate's lock), its fencing token.
   */
  readonly claim: string;
  readonly put: string;
  /** $1 key, $2 value, $3 ttl ms, $4 expected value. */
  readonly putIfEqual: string;
  readonly del: string;
  /** $1 key, $2 expected value. */
  readonly delIfEqual: string;
  /** $1 key, $2 value, $3 ttl ms: an atomic route's kept answer over its claim, in its transaction. */
  readonly keep: string;
  /** $1 batch size; returns one row per row deleted. */
  readonly sweep: string;
}

/** The statements on `table` (checked by the caller: `[schema.]name`, lower case). */
export function pgSql(table: string): PgSql {
  const index = `${table.replace('.', '_')}_expires_at`.slice(-63);
  const live = 'expires_at > clock_timestamp()';
  const until = "clock_timestamp() + $3::float8 * interval '1 millisecond'";
  return Object.freeze({
    table,
    migrate: `CREATE TABLE IF NOT EXISTS ${table} (
  key text COLLATE "C" PRIMARY KEY,
  value bytea NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);`,
    get: `SELECT value FROM ${table} WHERE key = $1 AND ${live}`,
    // Racing inserts of one key wait on its unique index and then see the winner's row: live,
    // so the WHERE refuses them. A lapsed row is taken over in the same statement.
    claim: `INSERT INTO ${table} AS t (key, value, expires_at) VALUES ($1, $2, ${until})
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
WHERE t.expires_at <= clock_timestamp()
RETURNING (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS us`,
    put: `INSERT INTO ${table} (key, value, expires_at) VALUES ($1, $2, ${until})
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
    putIfEqual: `UPDATE ${table} SET value = $2, expires_at = ${until}
WHERE key = $1 AND value = $4 AND ${live} RETURNING 1`,
    del: `DELETE FROM ${table} WHERE key = $1 AND ${live} RETURNING 1`,
    delIfEqual: `DELETE FROM ${table} WHERE key = $1 AND value = $2 AND ${live} RETURNING 1`,
    keep: `UPDATE ${table} SET value = $2, expires_at = ${until} WHERE key = $1`,
    // SKIP LOCKED: a row a transaction holds (an atomic route's claim) is left for a later sweep.
    sweep: `DELETE FROM ${table} WHERE ctid IN (
  SELECT ctid FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT $1 FOR UPDATE SKIP LOCKED
) RETURNING 1`,
  });
}
