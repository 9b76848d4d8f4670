import { cancelBackend, type CancelTarget } from './cancel-backend';
import { databaseFailure } from './database-failure';

/** A statement's result as `pg` gives it. */
export interface PgResult {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number | null;
}

/** The part of a checked-out `pg.Client` a guard reaches: its queries, its backend, its socket. */
export interface GuardedClient extends CancelTarget {
  query(text: string, values?: readonly unknown[]): Promise<PgResult>;
  readonly connection?: { readonly stream?: { destroy(): void } };
}

/**
 * One atomic attempt's hold on its connection: every statement (fw's and the handler's through
 * `Tx`) runs under a deadline, and a cut (the deadline, the client gone) cancels the running
 * statement on the server and destroys the connection, so the transaction is gone at once, even
 * when the connection no longer answers (a blackhole never reaches a server-side timeout).
 * Database failures met by the handler's statements are noted: the attempt's failure is then the
 * database's, whatever the handler made of the error.
 */
export class TxGuard {
  readonly #client: GuardedClient;
  #timer: NodeJS.Timeout | undefined;
  #cut: Error | null = null;
  #failure: string | null = null;
  readonly #cutting: Promise<never>;
  #rejectCutting: (e: Error) => void = () => undefined;

  constructor(client: GuardedClient) {
    this.#client = client;
    this.#cutting = new Promise<never>((_, reject) => (this.#rejectCutting = reject));
    this.#cutting.catch(() => undefined); // no statement may be running when the cut comes
  }

  /** What cut the attempt (its error, to answer with), or null. */
  get cutBy(): Error | null {
    return this.#cut;
  }

  /** The first database failure a statement met ("SQLSTATE 57P01", "ECONNRESET"), or null. */
  get failure(): string | null {
    return this.#failure;
  }

  /** Cuts the attempt `ms` from now with the error `why` makes (a later call replaces the deadline). */
  arm(ms: number, why: () => Error): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.cut(why()), ms);
  }

  /** Cancels the running statement and destroys the connection: the transaction rolls back. */
  cut(why: Error): void {
    if (this.#cut !== null) return;
    this.#cut = why;
    clearTimeout(this.#timer);
    cancelBackend(this.#client);
    this.#client.connection?.stream?.destroy();
    this.#rejectCutting(why);
  }

  /** Stops the deadline (the attempt is over). */
  dispose(): void {
    clearTimeout(this.#timer);
  }

  /** One statement: refused once cut, failing as soon as the attempt is cut while it runs. */
  query(text: string, values?: readonly unknown[]): Promise<PgResult> {
    return this.#guarded(() => this.#client.query(text, values), false);
  }

  /** One statement of the handler's (through its `Tx`): a database failure it meets is noted. */
  handlerQuery(text: string, values?: readonly unknown[]): Promise<PgResult> {
    const raw = this.#client as unknown as { query(...args: unknown[]): unknown };
    // A query builder may pass a config object rather than text: it runs as given, guarded all the same.
    return this.#guarded(() => raw.query(text, values) as Promise<PgResult>, true);
  }

  async #guarded(call: () => Promise<PgResult>, handlers: boolean): Promise<PgResult> {
    if (this.#cut !== null) throw this.#cut;
    try {
      return await Promise.race([call(), this.#cutting]);
    } catch (e) {
      if (this.#cut !== null) throw this.#cut;
      if (handlers) this.#failure ??= databaseFailure(e);
      throw e;
    }
  }
}
