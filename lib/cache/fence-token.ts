/**
 * Fencing tokens, on one scale whichever clock mints them: microseconds since 1970 × 4.096, which
 * is milliseconds × 4096 plus a part below the millisecond. A store that keeps time (Redis's
 * `TIME`, Postgres's `clock_timestamp()`) mints the token of a claim it writes, so one clock
 * orders the claims of a key however many instances make them; for any other store fw mints one
 * from this process's clock the moment the claim is known to be won.
 *
 * The scale is the one fw's tokens have always had (ms × 4096 + a count): a token stored before
 * compares with one minted now as the times they were minted do.
 */

/** The token of a clock reading in microseconds since 1970 (an integer, or its decimal digits). */
export function tokenOfMicros(us: number | bigint | string): bigint {
  return (BigInt(us) * 4096n) / 1000n;
}

let lastMs = 0;
let count = 0;

/**
 * A token from this process's clock: ms × 4096 + a count, never less than the one before in this
 * process, even when the wall clock is set back.
 */
export function clockToken(): bigint {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    count = 0;
  } else count++;
  return BigInt(lastMs) * 4096n + BigInt(count);
}
