// The PgStore bench's app: one row inserted per POST, on one pg pool shared by every route and by
// the store (as the sample shop shares its pool), each route a way of making that insert:
// without idempotency, idempotent, atomic, and atomic behind an outbound call to a slow upstream
// in phases (the call first, holding nothing) or with the transaction held across it.
import { IsInt, IsString } from 'class-validator';
import type { Pool } from 'pg';
import { App, Body, Controller, Ctx, Get, Idempotent, Post, Returns, Status, fail } from 'fw-http';
import { Tx } from 'fw-http/atomic';
import { PgStore, Space } from 'fw-http/cache';
import { Client, Target, type OpenTarget } from 'fw-http/fetch';

class NewOrder {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

const INSERT = 'INSERT INTO orders (sku, qty) VALUES ($1, $2) RETURNING id';

// As the sample's warehouse: each reservation carries a key derived from the order's, so a rerun
// after a crash reserves once. No in-flight cap of its own (the sample's is 16): the bench
// measures what the database's shape allows, not a cap on outbound calls.
const Upstream = Target('upstream', { timeoutMs: 5_000, idempotencyKeys: true });

/** What the bench app is made of. */
export interface PgBenchOptions {
  /** The one pool: the store's, and the plain insert's. */
  readonly pool: Pool;
  /** Base URL of the upstream the `/phases` and `/held` routes reserve at. */
  readonly upstream: string;
}

/**
 * The app and its store (`store.migrate()` before use; `store.close()` after the app's).
 * @example const { app, store } = pgBenchApp({ pool, upstream: 'http://127.0.0.1:4001' });
 */
export function pgBenchApp({ pool, upstream }: PgBenchOptions): { app: App; store: PgStore } {
  const store = new PgStore({ pool });
  const Plain = Space('plain', { ttlSeconds: 3600, maxBytes: 4096 });
  const Atomic = Space('atomic', { ttlSeconds: 3600, maxBytes: 4096 });
  const Phases = Space('phases', { ttlSeconds: 3600, maxBytes: 4096 });
  const Held = Space('held', { ttlSeconds: 3600, maxBytes: 4096 });
  // Enough calls at once for every client of the bench (the default is 32).
  const client = new Client({ maxInFlight: 1024 });
  const target = Upstream.open(client, { base: upstream });
  const insert = async (q: { query: Tx['query'] }, o: NewOrder) => {
    const { rows } = await q.query<{ id: number }>(INSERT, [o.sku, o.qty]);
    return { id: rows[0]!.id };
  };
  const onPool = {
    query: ((text, values) => pool.query(text, values as unknown[])) as Tx['query'],
  };

  @Controller()
  class Orders {
    /** The pool's state, for the bench to wait until the last run's requests are done. */
    @Get('/busy') @Returns(Status(200, Object)) busy() {
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    }
    @Post('/validated') @Returns(Status(201, Object)) validated(@Body() o: NewOrder) {
      return insert(onPool, o);
    }
    @Post('/plain') @Idempotent(Plain) @Returns(Status(201, Object)) plain(@Body() o: NewOrder) {
      return insert(onPool, o);
    }
    @Post('/atomic')
    @Idempotent(Atomic, { atomic: true })
    @Returns(Status(201, Object))
    atomic(@Body() o: NewOrder, tx: Tx) {
      return insert(tx, o);
    }
    /** The sample's shape: reserve first (nothing held), then the insert in the transaction. */
    @Post('/phases')
    @Idempotent(Phases, { atomic: true })
    @Returns(Status(201, Object))
    async phases(@Body() o: NewOrder, tx: Tx, c: Ctx) {
      await reserve(target, c, o);
      return insert(tx, o);
    }
    /** The former shape: the insert opens the transaction, which is held across the call. */
    @Post('/held')
    @Idempotent(Held, { atomic: true, holdTransaction: true })
    @Returns(Status(201, Object))
    async held(@Body() o: NewOrder, tx: Tx, c: Ctx) {
      const placed = await insert(tx, o);
      await reserve(target, c, o);
      return placed;
    }
  }

  const app = new App({ log: () => undefined })
    .controllers(Orders)
    .provide(client)
    .provide(target)
    .provide(Plain.open(store))
    .provide(Atomic.open(store))
    .provide(Phases.open(store))
    .provide(Held.open(store));
  return { app, store };
}

async function reserve(target: OpenTarget, c: Ctx, o: NewOrder): Promise<void> {
  const res = await target.postJson(c, '/reservations', {}, { sku: o.sku, qty: o.qty });
  if (!res.ok) throw fail.status(502, 'upstream answered %d', res.status);
}
