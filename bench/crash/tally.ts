// The end of a crash run: the ledger (one row per effect in the database), every 201 body each key
// was answered, and the upstream's effects (one per derived key), compared key by key.
import type { Pool } from 'pg';
import type { Upstream } from './upstream';

export interface Outcome {
  /** Keys whose effect is in the ledger more than once, and the extra rows. */
  readonly duplicatedKeys: number;
  readonly duplicateRows: number;
  /** Keys with no ledger row, or never answered 201. */
  readonly lost: number;
  /** Keys answered 201 with different bodies (the final re-ask included). */
  readonly differingAnswers: number;
  /** 201 bodies naming a ledger row that is not there. */
  readonly answerWithoutRow: number;
  /** 201 bodies naming another upstream effect than the one the upstream made for the transfer. */
  readonly wrongEffect: number;
  /** Transfers the upstream made more than one effect for (a derived key that changed). */
  readonly upstreamTwice: number;
}

/** Reads the ledger and compares it, the answers and the upstream's effects. */
export async function tally(
  pool: Pool,
  answers: ReadonlyMap<string, ReadonlySet<string>>,
  upstream: Upstream,
): Promise<Outcome> {
  const { rows } = await pool.query<{ key: string; ids: number[] }>(
    'SELECT key, array_agg(id ORDER BY id) AS ids FROM ledger GROUP BY key',
  );
  const ledger = new Map(rows.map((r) => [r.key, r.ids]));
  const o = {
    duplicatedKeys: 0,
    duplicateRows: 0,
    lost: 0,
    differingAnswers: 0,
    answerWithoutRow: 0,
    wrongEffect: 0,
    upstreamTwice: 0,
  };
  for (const [key, seen] of answers) {
    const ids = ledger.get(key) ?? [];
    const effects = upstream.effectsOf(key);
    if (ids.length > 1) {
      o.duplicatedKeys++;
      o.duplicateRows += ids.length - 1;
    }
    if (ids.length === 0 || seen.size === 0) o.lost++;
    if (seen.size > 1) o.differingAnswers++;
    if (effects.length > 1) o.upstreamTwice++;
    for (const body of seen) {
      const answer = JSON.parse(body) as { id: number; effect: number };
      if (!ids.includes(answer.id)) o.answerWithoutRow++;
      if (effects.length !== 1 || answer.effect !== effects[0]) o.wrongEffect++;
    }
  }
  return o;
}
