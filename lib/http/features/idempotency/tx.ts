import type { Ctx } from '../../request/ctx';
import type { SERVER_SIDE } from '../../../fetch/server-side';
import { HttpError } from '../../core/errors';

/** The isolation level an atomic route's transaction runs at (`@Idempotent(S, { atomic: true, isolation })`). */
export type Isolation = 'read committed' | 'repeatable read' | 'serializable';

/** What a `pg` client offers that `Tx` uses: `query(text, values)` (a `pg.PoolClient` has it). */
export interface TxClient {
  query(text: string, values?: readonly unknown[]): Promise<TxResult>;
}

/** A query's result as `pg` gives it. */
export interface TxResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number | null;
}

/** What `asPool()` gives unless typed as a dialect's pool. */
export interface TxPool {
  connect(): Promise<TxPoolClient>;
  end(): Promise<void>;
}

/** The transaction's client as `asPool().connect()` lends it. */
export interface TxPoolClient extends TxClient {
  release(): void;
}

/** The transactions of atomic handlers running now, by request. */
const open = new WeakMap<Ctx, Tx>();

/**
 * The transaction of an atomic idempotent route (`@Idempotent(Space, { atomic: true })` on a space
 * opened on a `PgStore`): the handler's writes and the kept answer commit together, after a check
 * that the key's claim is still this request's, or none of them does. The transaction opens at the
 * first `query`: make outbound calls and steps before it (while it is open they are refused, unless
 * the route declares `holdTransaction: true`). Ask for it by type (`tx: Tx`) or with
 * `c.resolve(Tx)`. Do not commit or roll back yourself: fw does, after the handler returns (or throws).
 *
 * @example
 * @Post('/transfers') @Idempotent(Transfers, { by, atomic: true })
 * async transfer(@Body() t: Transfer, tx: Tx) {
 *   await tx.query('UPDATE accounts SET balance = balance - $1 WHERE id = $2', [t.amount, t.from]);
 *   return { ok: true };
 * }
 */
export class Tx {
  /** Filled by the server: a typed client (`clientOf`) leaves this parameter out. */
  declare readonly [SERVER_SIDE]?: true;
  /** The client whose `query` runs in the transaction (the first call opens it), for a query builder's adapter (see `asPool`). */
  readonly client: TxClient;

  /** @internal made by the atomic step */
  constructor(client: TxClient) {
    this.client = client;
  }

  /** Runs one statement in the transaction (`pg`'s `client.query(text, values)`). */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }> {
    return this.client.query(text, values) as Promise<{ rows: R[]; rowCount: number | null }>;
  }

  /**
   * A stand-in for a `pg.Pool` whose one connection is this transaction, for a query builder's
   * Postgres dialect: with Kysely, `new PostgresDialect({ pool: tx.asPool<PostgresPool>() })` runs
   * every query in this transaction (see the guide's "Atomic routes with Kysely"). Typed as the
   * pool the dialect asks for; every call is handed to the `pg` client as it is. `release` and
   * `end` do nothing: fw ends the transaction.
   */
  asPool<P extends object = TxPool>(): P {
    const client = this.client as unknown as { query(...args: unknown[]): unknown };
    const lent = {
      query: (...args: unknown[]) => client.query(...args),
      release: () => undefined,
    };
    const pool: TxPool = {
      connect: async () => lent as unknown as TxPoolClient,
      end: async () => undefined,
    };
    return pool as unknown as P;
  }

  /** The transaction of this request's atomic handler. */
  static resolve(c: Ctx): Tx {
    const tx = open.get(c);
    if (tx === undefined)
      throw new HttpError(
        'NotResolved',
        'Tx is only there while an atomic idempotent handler runs (@Idempotent(Space, { atomic: true }))',
      );
    return tx;
  }
}

/** @internal Hands `tx` to the handler of request `c` (and takes it back with `null`). */
export function bindTx(c: Ctx, tx: Tx | null): void {
  if (tx === null) open.delete(c);
  else open.set(c, tx);
}
