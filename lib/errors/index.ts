/**
 * What the error classes of fw's modules share: `HttpError` (fw), `CacheError` (fw/cache) and
 * `FetchError` (fw/fetch) each carry a stable `code`, listed once in its module's table with the
 * status it answers, and that `status`. The answer to a thrown value is then read off the error
 * itself, so lib/http needs no table of the other modules' codes, and lib/cache and lib/fetch
 * need not know lib/http. This module imports nothing; those three import it.
 */

/** One row of a module's error table: the status the code answers should it escape a handler, and the line the docs list. */
export interface ErrorRow {
  readonly status: number;
  readonly doc: string;
}

/**
 * An error with a stable `code` from its module's table and the HTTP status it answers when it
 * escapes a handler (a 5xx is logged with its code; only `HttpError` sends its message).
 *
 * @example
 * catch (e) { if (e instanceof CodedError && e.status === 503) retryLater() }
 */
export abstract class CodedError<C extends string = string> extends Error {
  readonly code: C;
  readonly status: number;

  protected constructor(code: C, row: ErrorRow, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = row.status;
  }
}
