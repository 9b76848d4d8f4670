// Where a request was when a kill or a Postgres stop cut it: the last phase line the server wrote
// for it (probe-pool.ts, server.ts), grouped into the stretches of an idempotent request that
// matter for never-twice. On an atomic route the transaction is open from `begun` to the end of
// `commit`; on a RedisStore the effect is written outside the store (`wrote`) before the answer is
// kept in Redis, and a kill between them is the window that duplicates.

export type Where =
  | 'before the claim'
  | "waiting for a copy's answer"
  | 'handler, before the transaction'
  | 'transaction open, writing'
  | 'between the writes and the commit'
  | 'committing'
  | 'after the commit, before the answer'
  | 'rolled back, releasing'
  | 'handler, before the write'
  | 'after the write, before the answer';

/** The stretches in report order, per store. */
export const WHERE: Readonly<Record<'pg' | 'redis', readonly Where[]>> = {
  pg: [
    'before the claim',
    "waiting for a copy's answer",
    'handler, before the transaction',
    'transaction open, writing',
    'between the writes and the commit',
    'committing',
    'after the commit, before the answer',
    'rolled back, releasing',
  ],
  redis: ['before the claim', 'handler, before the write', 'after the write, before the answer'],
};

/** The stretches inside an atomic route's transaction: a run must see a kill land in one. */
export const INSIDE_TX: readonly Where[] = [
  'transaction open, writing',
  'between the writes and the commit',
];

const PG: Record<string, Where> = {
  recv: 'before the claim',
  get: 'before the claim',
  got: 'before the claim',
  claim: 'before the claim',
  'claim-lost': 'before the claim',
  'claim-won': 'handler, before the transaction',
  handler: 'handler, before the transaction',
  call: 'handler, before the transaction',
  called: 'handler, before the transaction',
  write: 'handler, before the transaction',
  begin: 'transaction open, writing',
  begun: 'transaction open, writing',
  wrote: 'between the writes and the commit',
  hold: 'between the writes and the commit',
  threw: 'between the writes and the commit',
  keep: 'between the writes and the commit',
  kept: 'between the writes and the commit',
  'keep-refused': 'between the writes and the commit',
  commit: 'committing',
  committed: 'after the commit, before the answer',
  rollback: 'rolled back, releasing',
  rolledback: 'rolled back, releasing',
  release: 'rolled back, releasing',
  released: 'rolled back, releasing',
};

const REDIS: Record<string, Where> = {
  recv: 'before the claim',
  'claim-won': 'handler, before the write',
  handler: 'handler, before the write',
  call: 'handler, before the write',
  called: 'handler, before the write',
  write: 'handler, before the write',
  wrote: 'after the write, before the answer',
  hold: 'after the write, before the answer',
  threw: 'after the write, before the answer',
};

/**
 * The stretch a request whose last phase line was `phase` was in (its first word counts); one
 * whose claim found the key taken and that has not claimed since waits for a copy's answer.
 */
export function whereOf(store: 'pg' | 'redis', r: { phase: string; claim?: string }): Where {
  const word = r.phase.split(' ')[0]!;
  const where = (store === 'pg' ? PG : REDIS)[word] ?? WHERE[store][0]!;
  return where === 'before the claim' && r.claim === 'lost' ? "waiting for a copy's answer" : where;
}

/** One phase line of a server: `@ <request> <key> <phase…>`, or null for any other line. */
export function parsePhase(line: string): { rid: string; key: string; phase: string } | null {
  if (!line.startsWith('@ ')) return null;
  const [, rid, key, ...rest] = line.split(' ');
  if (rid === undefined || key === undefined || rest.length === 0) return null;
  return { rid, key, phase: rest.join(' ') };
}
