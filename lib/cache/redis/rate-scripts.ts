// The Lua behind RedisStore.hit: one script per request, on one key (so it runs on a Redis
// Cluster), atomic, so instances racing on one key never both take its last request.

/**
 * Fixed window: the key counts requests and lives `windowMs` from the first. ARGV: max, windowMs.
 * Answers { wait, remaining, reset }: wait 0 (admitted) or the milliseconds until the window ends.
 */
export const RATE_FIXED = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
ttl = math.max(1, ttl)
if n <= tonumber(ARGV[1]) then return {0, tonumber(ARGV[1]) - n, ttl} end
return {ttl, 0, ttl}`;

/**
 * Sliding window, two counters: a hash of the clock-aligned window's start (s), its count (c)
 * and the last window's (p). Time is the Redis server's (TIME), so instances whose clocks differ
 * still agree. A refused request writes nothing. ARGV: max, windowMs. Answers { wait, remaining,
 * reset }: wait 0 or the milliseconds until the weighted count leaves room (the same sums as
 * RateTable's).
 */
export const RATE_SLIDING = `
if redis.replicate_commands then redis.replicate_commands() end
local max = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local start = now - now % span
local v = redis.call('HMGET', KEYS[1], 's', 'c', 'p')
local s, c, p = tonumber(v[1]), tonumber(v[2]) or 0, tonumber(v[3]) or 0
if s == nil or s < start - span then
  c, p = 0, 0
elseif s < start then
  p, c = c, 0
end
if p * (span - (now - start)) + (c + 1) * span <= max * span then
  redis.call('HSET', KEYS[1], 's', start, 'c', c + 1, 'p', p)
  redis.call('PEXPIRE', KEYS[1], start + 2 * span - now)
  local left = math.floor((max * span - p * (span - (now - start)) - (c + 1) * span) / span)
  return {0, math.max(0, left), start + span - now}
end
local at
if c < max and p > 0 then
  at = start + span - (max - 1 - c) * span / p
else
  at = start + 2 * span - (max - 1) * span / c
end
local wait = math.max(1, math.ceil(at - now))
return {wait, 0, wait}`;

/** The commands `defineRateCommands` adds to an ioredis client (EVALSHA, EVAL after a Redis restart). */
export interface RateCommands {
  fwRateFixed(key: string, max: number, windowMs: number): Promise<[number, number, number]>;
  fwRateSliding(key: string, max: number, windowMs: number): Promise<[number, number, number]>;
}

/** Adds the two scripts to an ioredis `Redis` or `Cluster` client. */
export function defineRateCommands(client: {
  defineCommand(name: string, def: { numberOfKeys: number; lua: string }): void;
}): RateCommands {
  client.defineCommand('fwRateFixed', { numberOfKeys: 1, lua: RATE_FIXED });
  client.defineCommand('fwRateSliding', { numberOfKeys: 1, lua: RATE_SLIDING });
  return client as unknown as RateCommands;
}
