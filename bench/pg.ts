// `node dist/bench/pg.js` (after `npm run build`): atomic routes on PgStore, in one run, on one
// Postgres of the bench's own, the app (pg-app.ts, one pool of 10 for the store and the plain
// insert) and a 50 ms upstream each in a process of its own (pg-server.ts), the load here
// (post-load.ts: closed loops over undici, every request answered before a run ends).
// 1. Behind a slow upstream, 200 clients: the atomic POST in phases (the call first, holding
//    nothing; the insert and the kept answer in one short transaction) against the same route
//    holding its transaction across the call (`holdTransaction: true`, the insert first): answers
//    a second, 201s a second, p99 and every status counted.
// 2. The first POST without an upstream, 16 clients: plain idempotent and atomic, as a ratio of a
//    validated POST doing the same insert without idempotency.
// Every request has a fresh Idempotency-Key, the baseline's too. Rounds alternate the cases; the
// median round of each is reported. PG_BENCH_ROUNDS (3), PG_BENCH_SECONDS (4) a run without an
// upstream, PG_BENCH_UPSTREAM_SECONDS (8) a run behind it, PG_BENCH_DELAY_MS (50),
// PG_BENCH_CLIENTS (200); PG_BENCH_ONLY=upstream or first runs one part.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { startPostgres } from './crash/postgres';
import type { UpstreamCounts } from './pg-upstream';
import type { PgServerMessage } from './pg-server';
import { postLoad, type Measured } from './post-load';

const env = process.env;
const rounds = Number(env.PG_BENCH_ROUNDS ?? 3);
const seconds = Number(env.PG_BENCH_SECONDS ?? 4);
const upstreamSeconds = Number(env.PG_BENCH_UPSTREAM_SECONDS ?? 8);
const delayMs = Number(env.PG_BENCH_DELAY_MS ?? 50);
const clients = Number(env.PG_BENCH_CLIENTS ?? 200);
const only = env.PG_BENCH_ONLY;
/** The sample shop's pool: ten connections, for the store and the plain insert alike. */
const POOL_SIZE = 10;

const BODY = JSON.stringify({ sku: 'tea', qty: 2 });

/** The app's pool: connections, idle ones, callers waiting for one. */
interface PoolState {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
}

/**
 * Waits (at most 30 s) until the app's pool has every connection idle and no one waiting, twice
 * running, so that the next run starts on a quiet pool; the state last seen, for the report.
 */
async function settle(base: string): Promise<PoolState> {
  const until = performance.now() + 30_000;
  let state: PoolState = { total: 0, idle: 0, waiting: 0 };
  for (let quiet = 0; quiet < 2 && performance.now() < until;) {
    state = (await (await request(`${base}/busy`)).body.json()) as PoolState;
    quiet = state.waiting === 0 && state.idle === state.total ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 100));
  }
  return state;
}

/** Connections the pool still counts in use after a run and its settle: none when all is well. */
const notes: string[] = [];
async function runOnce(base: string, path: string, clientsNow: number, secs: number) {
  const m = await postLoad({
    url: `${base}/${path}`,
    body: BODY,
    clients: clientsNow,
    seconds: secs,
  });
  const after = await settle(base);
  if (after.idle !== after.total || after.waiting > 0)
    notes.push(
      `after a run of /${path}: ${after.total - after.idle} of the pool's ${after.total} connections still in use, ${after.waiting} waiting`,
    );
  return m;
}

/** A pg-server.ts process: its port once listening, messages, a clean close. */
class PgServer {
  readonly #child: ChildProcess;
  readonly port: Promise<number>;

  constructor(args: string[]) {
    this.#child = fork(join(__dirname, 'pg-server.js'), args, { stdio: 'inherit' });
    this.port = new Promise((resolve, reject) => {
      this.#child.once('exit', (code) =>
        reject(new Error(`pg-server ${args[0]} exited (${code})`)),
      );
      this.#child.once('message', (m: PgServerMessage) => {
        if ('port' in m) resolve(m.port);
      });
    });
    this.port.catch(() => undefined);
  }

  counts(): Promise<UpstreamCounts> {
    return new Promise((resolve) => {
      this.#child.once('message', (m: PgServerMessage) => {
        if ('counts' in m) resolve(m.counts);
      });
      this.#child.send('counts');
    });
  }

  close(): Promise<void> {
    if (this.#child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.#child.once('exit', () => resolve());
      this.#child.send('close');
    });
  }
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** Part 1: phases against the transaction held across the call, rounds alternating the order. */
async function behindUpstream(base: string, upstream: PgServer): Promise<string[]> {
  const cases = ['phases', 'held'] as const;
  const seen = { phases: [] as Measured[], held: [] as Measured[] };
  const calls = { phases: { calls: 0, keyed: 0 }, held: { calls: 0, keyed: 0 } };
  for (const c of cases) await runOnce(base, c, clients, 2); // warm-up
  for (let i = 0; i < rounds; i++)
    for (const c of i % 2 === 0 ? cases : [...cases].reverse()) {
      const before = await upstream.counts();
      seen[c].push(await runOnce(base, c, clients, upstreamSeconds));
      const after = await upstream.counts();
      calls[c].calls += after.calls - before.calls;
      calls[c].keyed += after.keyed - before.keyed;
    }
  const label = {
    phases: 'in phases: call, then insert + keep in one transaction',
    held: '`holdTransaction: true`: insert, call, keep, in one transaction',
  };
  const rows = [
    `| atomic POST, ${delayMs} ms upstream, ${clients} clients, pool of ${POOL_SIZE} | answers/s | 201/s | p99 | statuses (all rounds) | upstream calls (with a key) |`,
    '|---|---:|---:|---:|---|---|',
  ];
  for (const c of cases) {
    const m = seen[c];
    const statuses: Record<string, number> = {};
    for (const r of m)
      for (const [k, n] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + n;
    const counted = Object.entries(statuses)
      .map(([k, n]) => `${k}: ${int(n)}`)
      .join(', ');
    rows.push(
      `| ${label[c]} | ${int(median(m.map((r) => r.rps)))} | ${int(median(m.map((r) => r.created)))} | ${median(m.map((r) => r.p99))} ms | ${counted} | ${int(calls[c].calls)} (${int(calls[c].keyed)}) |`,
    );
  }
  return rows;
}

/** Part 2: the first POST with no upstream, as a ratio of the same insert without idempotency. */
async function firstPost(base: string): Promise<string[]> {
  const cases = ['validated', 'plain', 'atomic'] as const;
  const seen = { validated: [] as Measured[], plain: [] as Measured[], atomic: [] as Measured[] };
  await runOnce(base, 'validated', 16, 2); // warm-up
  for (let i = 0; i < rounds; i++)
    for (const c of cases) {
      seen[c].push(await runOnce(base, c, 16, seconds));
    }
  const label = {
    validated: 'validated POST, the insert on the pool, no idempotency',
    plain: '`@Idempotent` on `PgStore` (lookup, claim, insert, keep)',
    atomic: '`@Idempotent(…, { atomic: true })` (lookup, claim; begin, insert, keep, commit)',
  };
  const rps = (c: (typeof cases)[number]) => median(seen[c].map((r) => r.rps));
  const rows = [
    '| first POST (fresh key), one insert, 16 clients | req/s (median) | × validated POST | p99 | non-201 |',
    '|---|---:|---:|---:|---|',
  ];
  for (const c of cases) {
    const bad = seen[c].reduce(
      (n, r) => n + Object.entries(r.statuses).reduce((k, [s, x]) => k + (s === '201' ? 0 : x), 0),
      0,
    );
    rows.push(
      `| ${label[c]} | ${int(rps(c))} | **${(rps(c) / rps('validated')).toFixed(2)}×** | ${median(seen[c].map((r) => r.p99))} ms | ${bad > 0 ? int(bad) : 'none'} |`,
    );
  }
  return rows;
}

async function main(): Promise<void> {
  const pg = await startPostgres(['bench']);
  if ('missing' in pg) throw new Error(pg.missing);
  const upstream = new PgServer(['upstream', String(delayMs)]);
  let app: PgServer | null = null;
  try {
    const upstreamUrl = `http://127.0.0.1:${await upstream.port}`;
    app = new PgServer(['app', pg.urlOf('bench'), upstreamUrl, String(POOL_SIZE)]);
    const base = `http://127.0.0.1:${await app.port}`;
    const slow = only === 'first' ? [] : await behindUpstream(base, upstream);
    const first = only === 'upstream' ? [] : await firstPost(base);
    console.log(['', ...slow, '', ...first, ...notes.map((n) => `\n${n}`)].join('\n'));
    console.log(
      `\n${rounds} rounds; ${upstreamSeconds} s a run behind the upstream, ${seconds} s without; the median round of each case.`,
    );
  } finally {
    await app?.close();
    await upstream.close();
    await pg.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
