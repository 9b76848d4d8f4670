import { Pool } from 'pg';

/**
 * A pool for a test's own look at the tables. `pool.end()` resolves before its sockets have closed,
 * so a server stopped right after it (fast shutdown) reaches an idle client still closing, and pg
 * emits that as the pool's 'error': with no listener, jest fails the whole suite (seen in CI).
 */
export function testPool(connectionString: string, max = 2): Pool {
  const pool = new Pool({ connectionString, max });
  pool.on('error', () => undefined);
  return pool;
}
