/** What `redisWarnings` looks at: `CONFIG GET` answers (null when refused, as managed services often do). */
export interface RedisSettings {
  readonly policy: string | null;
  /** The server's `databases`, and the index the URL asked for. */
  readonly databases: number | null;
  readonly db: number;
}

/**
 * What a Redis server's settings say against keeping idempotency records. A claim evicted under
 * memory pressure is a request run twice: the store needs `noeviction`. A database index the
 * server does not have fails SELECT, and ioredis goes on in database 0, shared with whatever else
 * uses it, without a word.
 */
export function redisWarnings(where: string, { policy, databases, db }: RedisSettings): string[] {
  const out: string[] = [];
  if (databases !== null && db >= databases)
    out.push(
      `RedisStore ${where}: the URL asks for database ${db} but the server has ${databases} (0..${databases - 1}): SELECT failed and the store writes to database 0; fix the index in the URL`,
    );
  if (policy !== null && policy !== 'noeviction')
    out.push(
      `RedisStore ${where}: maxmemory-policy is ${policy}: under memory pressure Redis may evict an in-flight claim or a kept answer and a retry runs the handler again; set maxmemory-policy noeviction (then a full Redis answers 503 StoreFull)`,
    );
  return out;
}
