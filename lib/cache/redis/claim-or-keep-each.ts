// RedisStore's claim-or-read and compare-and-set keep over every key of a batch (`ScriptBatch`),
// in the order they were made. ARGV[1] holds a letter per key: `c` a claim (value, ttl), `k` a
// keep (expected claim, value, ttl). So a key claimed twice in one batch is claimed by the first
// and read by the second, and a claim after a keep of its key reads the kept answer. Since Redis
// 7.0 (the first to give scripts `REDIS_VERSION_NUM`) a claim is one `SET NX GET`: a command
// fewer per claim. `pcall` turns a key's error into that key's reply element, so one bad key
// fails only its own call.
//
// A claim written answers the server's clock in microseconds (`TIME`, an integer reply), the
// claim's fencing token: one clock per key, the master owning it, orders its claims. Two claims
// of one key are a whole handler run apart at least (the second waits for the first's claim to
// be released, kept and lapsed, or to lapse), so their readings never tie. Before Redis 5 a
// script that read the clock could write no more unless it replicates its effects: it asks to.
export const CLAIM_OR_KEEP_EACH = `
local out = {}
local kinds = ARGV[1]
local nxget = redis.REDIS_VERSION_NUM ~= nil
if not nxget and redis.replicate_commands then redis.replicate_commands() end
local a = 2
for i, key in ipairs(KEYS) do
  if string.byte(kinds, i) == 99 then -- 'c', a claim
    if nxget then
      out[i] = redis.pcall('SET', key, ARGV[a], 'NX', 'GET', 'PX', ARGV[a + 1])
    else
      local held = redis.pcall('GET', key)
      if held then
        out[i] = held
      else
        local set = redis.pcall('SET', key, ARGV[a], 'PX', ARGV[a + 1])
        if set.err then out[i] = set else out[i] = false end
      end
    end
    if out[i] == false then
      local t = redis.call('TIME')
      out[i] = t[1] * 1000000 + t[2]
    end
    a = a + 2
  else
    local held = redis.pcall('GET', key)
    if type(held) == 'table' then
      out[i] = held
    elseif held == ARGV[a] then
      local set = redis.pcall('SET', key, ARGV[a + 1], 'PX', ARGV[a + 2])
      if set.err then out[i] = set else out[i] = 1 end
    else
      out[i] = 0
    end
    a = a + 3
  end
end
return out`;

/** The letters of its kinds: a claim (value, ttl), a keep (expected claim, value, ttl). */
export const CLAIM = 'c';
export const KEEP = 'k';
