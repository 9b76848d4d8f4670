// The crash server's side channel: every step of a request that a kill can cut is written as one
// line on stdout (`@ <request> <key> <phase>`) as it happens, so the harness knows, after a
// SIGKILL, the last step each request in flight had reached. stdout is a pipe, written
// synchronously on Linux: a line written before the kill is in the pipe when the process dies.
// fw's own statements are seen through the pool the PgStore is given (a pg.Pool wrapped here,
// lib/ untouched); the handler reports its own steps. A probe delay after each of fw's statements
// widens the window after it, so a kill aimed at a step lands there.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PgPool, PgPoolClient } from 'fw-http/cache';

/** The request a statement belongs to (set by the server's middleware). */
export interface RequestScope {
  readonly rid: string;
  readonly key: string;
}

export const scope = new AsyncLocalStorage<RequestScope>();

/** Writes one phase line of the request in scope (or of `s`). */
export function phase(what: string, s: RequestScope | undefined = scope.getStore()): void {
  if (s !== undefined) process.stdout.write(`@ ${s.rid} ${s.key} ${what}\n`);
}

/** The statements of the store's table, as the store sends them (`PgStore.sql`). */
export interface StoreSql {
  readonly claim: string;
  readonly get: string;
  readonly putIfEqual: string;
  readonly delIfEqual: string;
}

type Result = Awaited<ReturnType<PgPool['query']>>;

export interface ProbeOptions {
  /** The store's statements, read when a statement is classified (the store is made after the pool). */
  readonly sql: () => StoreSql;
  /** Milliseconds slept after each of fw's statements before its answer is handed back. */
  readonly probeMs: number;
  /** Renewals of claims never reach the store (each fails at once, as on a link that lost it). */
  readonly renewalsLost: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `pool`, every statement fw sends through it (and through the connections it lends) reported. */
export function probePool(pool: PgPool, o: ProbeOptions): PgPool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return async (text: string, values?: readonly unknown[]) => {
          const step = storeStep(o.sql(), text, values);
          if (step !== 'renewal') return probed(o, step, () => target.query(text, values));
          if (o.renewalsLost) throw new Error('crash harness: the renewal was lost on its way');
          return target.query(text, values);
        };
      if (prop === 'connect')
        return async () => probeClient(await target.connect(), o) as PgPoolClient;
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A connection of the pool (an atomic route's transaction): its BEGIN, keep, COMMIT and ROLLBACK reported. */
function probeClient(client: PgPoolClient, o: ProbeOptions): PgPoolClient {
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'query')
        return (text: unknown, values?: readonly unknown[]) => {
          const run = () => target.query(text as string, values);
          if (typeof text !== 'string') return run();
          return probed(o, txStep(o.sql(), text, values), run);
        };
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A step's phase names: [sent, done(result)], or null when the statement is not reported. */
type Step = readonly [string, (r: Result) => string] | null;

async function probed(o: ProbeOptions, step: Step, run: () => Promise<Result>): Promise<Result> {
  if (step === null) return run();
  const s = scope.getStore();
  phase(step[0], s);
  const result = await run();
  phase(step[1](result), s);
  if (o.probeMs > 0) await sleep(o.probeMs);
  return result;
}

const same = (a: unknown, b: unknown): boolean =>
  Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);

/**
 * fw's statements on the pool: the claim, a kept answer written over the claim, the release; a
 * renewal of a claim (on the renewer's timer, no step of a request) is told apart, not reported.
 */
function storeStep(sql: StoreSql, text: string, values?: readonly unknown[]): Step | 'renewal' {
  if (text === sql.claim) return ['claim', (r) => (r.rows.length > 0 ? 'claim-won' : 'claim-lost')];
  if (text === sql.get) return ['get', () => 'got'];
  // A renewal writes the claim over itself (value = expected).
  if (text === sql.putIfEqual)
    return same(values?.[1], values?.[3])
      ? 'renewal'
      : ['keep', (r) => (r.rows.length > 0 ? 'kept' : 'keep-refused')];
  if (text === sql.delIfEqual) return ['release', () => 'released'];
  return null;
}

/** fw's statements in an atomic route's transaction. */
function txStep(sql: StoreSql, text: string, values?: readonly unknown[]): Step {
  if (text.startsWith('BEGIN')) return ['begin', () => 'begun'];
  if (text === 'COMMIT') return ['commit', () => 'committed'];
  if (text === 'ROLLBACK') return ['rollback', () => 'rolledback'];
  if (text.startsWith(`UPDATE ${sql.claim.split(' ')[2]} `) && !same(values?.[1], values?.[3]))
    return ['keep', (r) => ((r.rowCount ?? 0) > 0 ? 'kept' : 'keep-refused')];
  return null;
}
