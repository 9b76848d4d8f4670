// The server the crash harness kills, stops and starts: POST /transfers calls the upstream (a
// Target with derived Idempotency-Keys) for the transfer's effect there, writes one ledger row
// and answers both, idempotent per Idempotency-Key. With CRASH_STORE=pg the route is atomic (the
// ledger row and the kept answer commit in one transaction on a PgStore); with CRASH_STORE=redis
// the row is written by the handler outside the store and the answer kept in Redis, as most
// idempotency middleware does. Every step a kill can cut is reported on stdout (probe-pool.ts).
// Prints `listening <port>` once it takes requests.
//
// Environment: PORT, CRASH_INSTANCE (its name in the phase lines), CRASH_STORE, DATABASE_URL,
// REDIS_URL, UPSTREAM_URL; CRASH_LEASE_MS and CRASH_MARGIN_MS (the space's lease and margin);
// CRASH_THROW (the fraction of runs that throw after writing); CRASH_DEADLINE_MS (the atomic
// route's deadlineMs); CRASH_PROBE_MS (the pause after each
// of fw's statements); CRASH_DELAY_MS (up to this long between the write and the answer);
// CRASH_CLOCK_RATE (below 1: this process's clock runs slow, so a stall is hidden from its lease,
// as a suspended VM's monotonic clock hides the suspension); CRASH_RENEWALS_LOST=1 (renewals of
// claims never reach the store).
import { IsInt, IsString } from 'class-validator';
import { Pool } from 'pg';
import { App, Body, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, RedisStore, Space, type Store } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';
import { phase, probePool, scope } from './probe-pool';

class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

const env = process.env;
const instance = env.CRASH_INSTANCE ?? 'a';
const atomic = env.CRASH_STORE !== 'redis';
const leaseMs = Number(env.CRASH_LEASE_MS ?? 500);
const throwRate = Number(env.CRASH_THROW ?? 0);
const delayMs = Number(env.CRASH_DELAY_MS ?? 5);
// Longer than a stall the harness makes: a stalled transaction must meet its claim's check at the
// commit, not its own deadline first.
const deadlineMs = Number(env.CRASH_DEADLINE_MS ?? 10_000);
hideStalls(Number(env.CRASH_CLOCK_RATE ?? 1));

// A short lease, so a claim left by a killed process frees its key soon and retries go on.
const Transfers = Space('transfers', {
  ttlSeconds: 3600,
  maxBytes: 4096,
  leaseMs,
  leaseMarginMs: Number(env.CRASH_MARGIN_MS ?? leaseMs * 0.3),
});
const pool = new Pool({ connectionString: env.DATABASE_URL, max: 8 });
pool.on('error', () => undefined); // an idle connection cut by a Postgres stop
const client = new Client();
const bank = Target('bank', { idempotencyKeys: true }).open(client, { base: env.UPSTREAM_URL! });
const keyOf = (c: Ctx) => String(c.header('idempotency-key'));
const pause = () => new Promise((r) => setTimeout(r, Math.random() * delayMs));

/** The transfer's effect at the upstream (its id there), made once per derived key. */
async function charge(c: Ctx, t: Transfer): Promise<number> {
  phase('call');
  const res = await bank.postJson(c, '/charges', {}, { transfer: keyOf(c), amount: t.amount });
  phase(`called ${res.status}`);
  if (res.status !== 201) throw new Error(`upstream answered ${res.status}`);
  return (res.json() as { effect: number }).effect;
}

/**
 * After the write: a request sent with `x-crash-hold: 1` says `hold` and waits for this process's
 * SIGCONT (the harness stops it there past its lease); others throw now and then, or pause.
 */
async function afterWrite(c: Ctx): Promise<void> {
  if (c.header('x-crash-hold') === '1') {
    const resumed = new Promise<void>((r) => process.once('SIGCONT', () => r()));
    phase('hold');
    return resumed;
  }
  if (Math.random() < throwRate) {
    phase('threw');
    throw new Error('crash harness: the handler threw after writing');
  }
  await pause();
}

const INSERT = 'INSERT INTO ledger (key, to_account, amount) VALUES ($1, $2, $3) RETURNING id';

@Controller()
class AtomicTransfers {
  @Post('/transfers')
  @Idempotent(Transfers, { atomic: true, deadlineMs })
  @Returns(Status(201, Object))
  async create(@Body() t: Transfer, tx: Tx, c: Ctx) {
    phase('handler');
    const effect = await charge(c, t);
    phase('write');
    const { rows } = await tx.query<{ id: number }>(INSERT, [keyOf(c), t.to, t.amount]);
    phase('wrote');
    await afterWrite(c);
    return { id: rows[0]!.id, effect };
  }
}

@Controller()
class CacheTransfers {
  @Post('/transfers')
  @Idempotent(Transfers)
  @Returns(Status(201, Object))
  async create(@Body() t: Transfer, c: Ctx) {
    phase('handler');
    const effect = await charge(c, t);
    phase('write');
    const { rows } = await pool.query<{ id: number }>(INSERT, [keyOf(c), t.to, t.amount]);
    phase('wrote');
    await afterWrite(c);
    return { id: rows[0]!.id, effect };
  }
}

/** Below 1: `performance.now()` (the clock leases are judged by) runs at `rate` of real time. */
function hideStalls(rate: number): void {
  if (rate === 1) return;
  const real = performance.now.bind(performance);
  const start = real();
  performance.now = () => start + (real() - start) * rate;
}

async function openStore(): Promise<Store> {
  if (!atomic) return new RedisStore({ url: env.REDIS_URL!, commandTimeoutMs: 5000 });
  const own = new Pool({
    connectionString: env.DATABASE_URL,
    max: 10,
    connectionTimeoutMillis: 5000,
    statement_timeout: 5000,
    application_name: `fw-crash-${instance}`,
  });
  own.on('error', () => undefined);
  const probeMs = Number(env.CRASH_PROBE_MS ?? 0);
  const renewalsLost = env.CRASH_RENEWALS_LOST === '1';
  const store: PgStore = new PgStore({
    pool: probePool(own, { sql: () => store.sql, probeMs, renewalsLost }),
    commandTimeoutMs: 5000,
  });
  // Started again while the harness has Postgres stopped: wait for it rather than exit.
  for (const until = Date.now() + 60_000; ;) {
    try {
      await store.migrate();
      return store;
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function main(): Promise<void> {
  let n = 0;
  const app = new App({ log: () => undefined })
    .use(async (c, next) => {
      const s = { rid: `${instance}${++n}`, key: keyOf(c) };
      phase('recv', s);
      c.onFinished(({ status }) => phase(`answered ${status}`, s));
      await scope.run(s, next);
    })
    .controllers(atomic ? AtomicTransfers : CacheTransfers)
    .provide(client)
    .provide(Transfers.open(await openStore()));
  const { port } = await app.listen({ port: Number(env.PORT ?? 0), host: '127.0.0.1' });
  console.log(`listening ${port}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
