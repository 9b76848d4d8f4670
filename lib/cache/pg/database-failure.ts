/**
 * SQLSTATEs that say the database failed under a statement, not that the statement was wrong:
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57014 query_canceled
 * (a statement_timeout, or fw's own cancel).
 */
const FAILED_UNDER = new Set(['57P01', '57P02', '57P03', '57014']);

/** SQLSTATE classes that do: 08 connection exception, 53 insufficient resources, 58 system error. */
const FAILED_CLASSES = new Set(['08', '53', '58']);

/** Node's errors of a socket that went away. */
const SOCKET_GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'ENOTCONN']);

/**
 * What `e` says about the database, when it is a failure of the database or of the connection to
 * it (a retry may succeed: 503) rather than of the statement (a constraint violation, a syntax
 * error: the handler's own failure); null otherwise. `pg`'s errors carry a SQLSTATE in `code`; a
 * cut connection leaves a Node error code or `pg`'s "Connection terminated" message.
 */
export function databaseFailure(e: unknown): string | null {
  if (e === null || typeof e !== 'object') return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (
      /^[0-9A-Z]{5}$/.test(code) &&
      (FAILED_UNDER.has(code) || FAILED_CLASSES.has(code.slice(0, 2)))
    )
      return `SQLSTATE ${code}`;
    if (SOCKET_GONE.has(code)) return code;
  }
  const message = (e as { message?: unknown }).message;
  if (
    typeof message === 'string' &&
    /^Connection terminated|^Client has encountered a connection error|^Client was closed/.test(
      message,
    )
  )
    return message;
  return null;
}
