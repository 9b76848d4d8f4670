import { startPostgres } from './postgres-process';
import { testPool } from './pg-pool';

// Regression: CI failed a whole suite on "terminating connection due to administrator command",
// emitted by an idle pooled client when the test's Postgres was stopped.

describe('testPool', () => {
  it('survives the server stopping under an idle connection', async () => {
    const server = await startPostgres();
    const pool = testPool(server.url, 1);
    const unhandled: unknown[] = [];
    const seen = (e: unknown) => unhandled.push(e);
    process.on('uncaughtException', seen);
    try {
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await server.stop(); // the idle client gets FATAL 57P01
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
      expect(pool.idleCount).toBe(0); // the cut client was dropped, not kept for reuse
    } finally {
      process.off('uncaughtException', seen);
      await pool.end();
    }
  }, 60_000);
});
