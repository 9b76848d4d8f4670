import type { Ctx } from '../request/ctx';
import { HttpError } from '../core/errors';

/** What a `pg` client offers that `Tx` uses: `query(text, values)` (a `pg.PoolClient` has it). */
export interface TxClient {
  query(text: string, values?: readonly unknown[]): Promise<TxResult>;
}

/** A query's result as `pg` gives it. */
export interface TxResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number | null;
}

/** The transactions of atomic handlers running now, by request. */
const open = new WeakMap<Ctx, Tx>();

/**
 * The transaction of an atomic idempotent route (`@Idempotent(Space, { atomic: true })` on a space
 * opened on a `PgStore`): the claim on the key, the handler's writes and the kept answer commit
 * together, or none of them does. Ask for it by type (`tx: Tx`) or with `c.resolve(Tx)`. Do not
 * commit or roll back yourself: fw does, after the handler returns (or throws).
 *
 * @example
 * @Post('/transfers') @Idempotent(Transfers, { by, atomic: true })
 * async transfer(@Body() t: Transfer, tx: Tx) {
 *   await tx.query('UPDATE accounts SET balance = balance - $1 WHERE id = $2', [t.amount, t.from]);
 *   return { ok: true };
 * }
 */
export class Tx {
  /** The `pg` client holding the transaction, for a query builder's adapter (see `asPool`). */
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
   * Postgres dialect: Kysely's `new PostgresDialect({ pool: tx.asPool() })` runs every query in
   * this transaction (see the guide's "Atomic routes with Kysely"). `release` and `end` do nothing:
   * fw ends the transaction.
   */
  asPool(): { connect(): Promise<TxClient & { release(): void }>; end(): Promise<void> } {
    const client = this.client;
    const lent = {
      query: (text: string, values?: readonly unknown[]) => client.query(text, values),
      release: () => undefined,
    };
    return { connect: async () => lent, end: async () => undefined };
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
