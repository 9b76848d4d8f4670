// The crash harness. Two instances of the crash server (server.ts) share a store and a ledger;
// `requests` transfers are sent, each as `copies` concurrent copies of its key split over both
// instances, each copy retried with the key (on either instance) until it is answered 201. The
// handler calls a slow upstream under a derived Idempotency-Key before it writes, and now and then
// throws after writing. Meanwhile the instances are killed with SIGKILL (each kill aimed at a step
// of a request, where it landed recorded) and, on Postgres, the database itself is stopped
// immediately and started again; the transfers are paced so that the faults land among them as
// planned (pace.ts). On Postgres two stalls follow: an instance stopped with SIGSTOP inside its
// transaction past its lease while the other takes the key over, once on a plain instance and
// once on one whose clock hides the stall. At the end the ledger, every answer, a final re-ask of
// every key and the upstream's effects are compared (tally.ts), and `breaches` says what the run
// broke.
import { setMaxListeners } from 'node:events';
import { Pool } from 'pg';
import { Tally, untilAnswered } from './client';
import { killAlong, Landings, stopAlong, type StoppableDatabase } from './faults';
import { Instance, PhaseCounts, type ServerCommand } from './instance';
import { Pace } from './pace';
import { freePort } from './postgres';
import { stallAndTakeOver } from './stall';
import { tally, type Outcome } from './tally';
import { startUpstream, type UpstreamReport } from './upstream';

export interface CrashOptions {
  readonly store: 'pg' | 'redis';
  /** What starts one server process, given the environment the harness sets for it. */
  readonly server: CrashServer;
  /** The database holding the `ledger` table the server writes (created here, emptied first). */
  readonly databaseUrl: string;
  /** Postgres, to stop mid-run (`pgStops` times, each `pgDownMs` long). */
  readonly database?: StoppableDatabase;
  readonly requests: number;
  readonly kills: number;
  readonly pgStops?: number;
  readonly pgDownMs?: number;
  /** Copies of each key sent at once, alternately to each instance. Default 3. */
  readonly copies?: number;
  /** Transfers in flight at once. Default 8. */
  readonly concurrency?: number;
  /** The upstream's delay before it answers. Default 20. */
  readonly upstreamDelayMs?: number;
  /** Run the two stalls (Postgres only). Default true. */
  readonly stalls?: boolean;
  readonly log?: (line: string) => void;
}

/**
 * What starts one crash server process (server.ts) with `env` added to its environment: its port,
 * its name, the upstream's URL, and for the instance whose clock hides its stall, that clock and
 * the lag of its renewals.
 */
export type CrashServer = (env: Record<string, string>) => ReturnType<ServerCommand>;

/**
 * Instance c, stalled past its lease: its clock runs at a fiftieth of real time (the stall is
 * hidden from its lease, as a suspended VM's monotonic clock hides the suspension), and its
 * renewals never reach the store (none comes back refused to tell it). Then nothing but the check
 * of the claim at the commit stands between the stalled run and a second commit of the key.
 */
const HIDDEN_STALL = { CRASH_CLOCK_RATE: '0.02', CRASH_RENEWALS_LOST: '1' };

export interface CrashReport extends Outcome {
  readonly store: 'pg' | 'redis';
  readonly requests: number;
  readonly copies: number;
  readonly kills: number;
  readonly pgStops: number;
  /** What each stalled request was answered (a 201 there would be a run that committed after losing its claim). */
  readonly stalls: readonly string[];
  /** Every answer the client got, by status and code, the retries included. */
  readonly answers: Record<string, number>;
  /** Requests cut by the kills, and in flight at the Postgres stops, per stretch of a request. */
  readonly killLandings: Record<string, number>;
  readonly stopLandings: Record<string, number>;
  /** Kills (and stops) with a request inside its transaction. */
  readonly killsInsideTx: number;
  readonly stopsInsideTx: number;
  /** Handler runs, runs that threw after writing, claims a duplicate lost, and runs after a lost claim. */
  readonly runs: number;
  readonly threw: number;
  readonly claimsLost: number;
  readonly lostClaimRan: number;
  readonly upstream: UpstreamReport;
  readonly seconds: number;
}

/** Runs the harness once and reports the counts (it throws only when the setup itself fails). */
export async function runCrash(o: CrashOptions): Promise<CrashReport> {
  const started = Date.now();
  const pool = new Pool({ connectionString: o.databaseUrl, max: 2 });
  pool.on('error', () => undefined); // an idle connection cut when Postgres stops is not a failure
  const upstream = await startUpstream(o.upstreamDelayMs ?? 20);
  const counts = new PhaseCounts();
  const instances: Instance[] = [];
  // A run that fails (an instance that does not come back, an answer no client should get) stops
  // every client at once, rather than leaving them retrying against it.
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every request in flight listens to it
  const make = async (name: string) => {
    const port = await freePort();
    const i = new Instance({
      name,
      port,
      counts,
      command: (p) =>
        o.server({
          PORT: String(p.port),
          CRASH_INSTANCE: p.name,
          UPSTREAM_URL: upstream.url,
          ...(p.name === 'c' ? HIDDEN_STALL : {}),
        }),
    });
    instances.push(i);
    await i.start();
    return i;
  };
  try {
    await pool.query(
      'CREATE TABLE IF NOT EXISTS ledger (id serial PRIMARY KEY, key text NOT NULL, to_account text NOT NULL, amount int NOT NULL)',
    );
    await pool.query('TRUNCATE ledger');
    const [a, b] = await Promise.all([make('a'), make('b')]);
    const run = new Run(o, [a!, b!], { prefix: `crash-${started}`, abort });
    const faults = await run.storm();
    const stalls = o.store === 'pg' && o.stalls !== false ? await run.stalls(make) : [];
    await run.reask(a!);
    return {
      store: o.store,
      requests: o.requests,
      copies: run.copies,
      ...faults,
      stalls,
      answers: run.tally.entries(),
      runs: counts.runs,
      threw: counts.threw,
      claimsLost: counts.claimsLost,
      lostClaimRan: counts.lostClaimRan,
      upstream: upstream.report(),
      ...(await tally(pool, run.answers, upstream)),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    abort.abort(new Error('the crash run is over'));
    await Promise.all(instances.map((i) => i.shutdown()));
    await upstream.close();
    await pool.end();
  }
}

/** One run's traffic: the keys, the answers each got, and the faults along. */
class Run {
  readonly tally = new Tally();
  readonly answers = new Map<string, Set<string>>();
  readonly copies: number;
  readonly #o: CrashOptions;
  readonly #pair: readonly [Instance, Instance];
  readonly #prefix: string;
  readonly #abort: AbortController;
  readonly #signal: AbortSignal;

  constructor(
    o: CrashOptions,
    pair: readonly [Instance, Instance],
    at: { prefix: string; abort: AbortController },
  ) {
    this.#o = o;
    this.#pair = pair;
    this.#prefix = at.prefix;
    this.#abort = at.abort;
    this.#signal = at.abort.signal;
    this.copies = o.copies ?? 3;
  }

  /** The transfers with their copies, the kills and the Postgres stops along; the faults' counts. */
  async storm() {
    const o = this.#o;
    const keys = Array.from({ length: o.requests }, (_, i) => `${this.#prefix}-${i}`);
    const concurrency = o.concurrency ?? 8;
    const pace = new Pace(keys.length, 4 * concurrency);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < keys.length) {
        const n = next++;
        await pace.mayStart(n, this.#signal);
        const key = keys[n]!;
        const copies = Array.from({ length: this.copies }, (_, c) => this.#pair[c % 2]!);
        this.#answered(key, await Promise.all(copies.map((i) => this.#ask(i, key, this.#pair))));
        pace.done++;
      }
    };
    const landings = new Landings(o.store);
    const progress = { pace, log: o.log, signal: this.#signal };
    const targets = o.store === 'pg' ? PG_TARGETS : REDIS_TARGETS;
    const along = { ...progress, instances: this.#pair };
    const [kills, pgStops] = await this.#together([
      killAlong({ ...along, kills: o.kills, targets }, landings),
      o.database === undefined
        ? Promise.resolve(0)
        : stopAlong(
            { ...along, db: o.database, stops: o.pgStops ?? 0, downMs: o.pgDownMs ?? 500 },
            landings,
          ),
      Promise.all(Array.from({ length: concurrency }, worker)).then(() => 0),
    ]);
    return {
      kills,
      pgStops,
      killLandings: landings.table('kill'),
      stopLandings: landings.table('stop'),
      killsInsideTx: landings.killsInsideTx,
      stopsInsideTx: landings.stopsInsideTx,
    };
  }

  /** The two stalls: on instance a (its clock true), then on a new instance c whose clock hides it. */
  async stalls(make: (name: string) => Promise<Instance>): Promise<string[]> {
    const [a, b] = this.#pair;
    const c = await make('c');
    const outcomes: string[] = [];
    for (const [stalled, tag] of [
      [a, 'plain'],
      [c, 'hidden'],
    ] as const) {
      const key = `${this.#prefix}-stall-${tag}`;
      const r = await stallAndTakeOver(
        { stalled, other: b, key, signal: this.#signal },
        this.tally,
      );
      this.#answered(key, r.bodies);
      outcomes.push(`${tag}: ${r.stalledAnswer}`);
    }
    await c.shutdown();
    return outcomes;
  }

  /** Every key once more, after the last fault: its answer must be the one first given. */
  async reask(on: Instance): Promise<void> {
    const keys = [...this.answers.keys()];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < keys.length) {
        const key = keys[next++]!;
        this.#answered(key, [await this.#ask(on, key, [on])]);
      }
    };
    await Promise.all(Array.from({ length: this.#o.concurrency ?? 8 }, worker));
  }

  /**
   * Waits for every job; the first to fail aborts the others (clients, killer, stopper), and the
   * failure is thrown once all have stopped, so none outlives the run (no instance started after
   * the run shut them down).
   */
  async #together(jobs: readonly Promise<number>[]): Promise<number[]> {
    for (const j of jobs) j.catch((e: unknown) => this.#abort.abort(e));
    const settled = await Promise.allSettled(jobs);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw this.#signal.reason ?? failed.reason;
    return settled.map((r) => (r as PromiseFulfilledResult<number>).value);
  }

  /** Asks `first` for `key`, then any of `then` until it is answered. */
  #ask(first: Instance, key: string, then: readonly Instance[]): Promise<string> {
    const ports = [first.port, ...then.filter((i) => i !== first).map((i) => i.port)];
    return untilAnswered(ports, key, this.tally, this.#signal);
  }

  #answered(key: string, bodies: readonly string[]): void {
    const seen = this.answers.get(key) ?? new Set<string>();
    for (const b of bodies) seen.add(b);
    this.answers.set(key, seen);
  }
}

/**
 * Where the kills are aimed, in turn: mid outbound call, the transaction just opened, after the
 * handler's write, after the answer is kept (before COMMIT), after COMMIT (before the answer).
 */
const PG_TARGETS = ['call', 'begun', 'wrote', 'kept', 'committed'];
/** On RedisStore: mid outbound call, after the write outside the store (before the keep), at the claim. */
const REDIS_TARGETS = ['call', 'wrote', 'handler'];

/**
 * What the run broke, one line each (empty: it held). On an atomic route: any duplicate, loss,
 * changed answer, answer naming a row or an effect that is not its own, upstream effect made
 * twice or two calls of one key at the upstream at once, a run after a lost claim, a stalled run
 * that was answered 201; and a run whose faults missed what they must exercise (no kill inside
 * a transaction, no throw, no claim race). On RedisStore, whose handler writes outside the
 * store: what it promises too (nothing lost, every answer's row there, each upstream effect once).
 */
export function breaches(r: CrashReport, planned: { kills: number; pgStops: number }): string[] {
  const out: string[] = [];
  const zero = (what: keyof CrashReport | 'upstream.concurrent' | 'upstream.keyReused') => {
    const v = what.startsWith('upstream.')
      ? r.upstream[what.slice(9) as keyof UpstreamReport]
      : (r[what as keyof CrashReport] as number);
    if (v !== 0) out.push(`${what}: ${v} (must be 0)`);
  };
  for (const k of ['lost', 'answerWithoutRow', 'wrongEffect', 'upstreamTwice'] as const) zero(k);
  zero('upstream.keyReused');
  if (r.kills !== planned.kills) out.push(`kills: ${r.kills} of ${planned.kills}`);
  if ((r.answers['no answer'] ?? 0) === 0) out.push('no request was cut by a kill');
  if (r.threw === 0) out.push('no handler threw');
  if (r.store === 'redis') return out;
  for (const k of ['duplicatedKeys', 'differingAnswers', 'lostClaimRan'] as const) zero(k);
  zero('upstream.concurrent');
  if (r.pgStops !== planned.pgStops) out.push(`postgres stops: ${r.pgStops} of ${planned.pgStops}`);
  if (r.killsInsideTx === 0) out.push('no kill landed inside a transaction');
  if (r.claimsLost === 0) out.push('no copy of a key raced another to its claim');
  for (const s of r.stalls) if (s.endsWith(': 201')) out.push(`stalled run answered 201 (${s})`);
  return out;
}
