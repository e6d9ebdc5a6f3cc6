-- owner: record who owns a session (the first principal and project that reach it) and return
-- the owner.  Run by the partition owner before it decides the first entry of a session that
-- carries an identity; the partition's single writer makes "first" well defined.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  session hash (field owner = "<principal> <project>", epoch = the Redis time in ms when
--          the owner was recorded: the session's life, in the gateway's event cursors)
-- KEYS[3..] the session's other keys (Keys.sliding_keys but the session hash): whether any exists
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  the entry's identity, "<principal> <project>" (neither holds a space)
-- ARGV[3]  session time-to-live in milliseconds for a session hash this creates ("0": never expires)
-- ARGV[4]  time-to-live in milliseconds of a claim: a session holding nothing but its owner record
--          (no call of it accepted yet) expires this long after each of its owner's checks (at most
--          ARGV[3]);
--          the first accepted call's sliding expiry gives it ARGV[3], and refusals do not slide it
--          (reply.lua): refused first calls leave no key for a session's whole TTL
-- Returns  {'ok', owner, pttl}  the session's owner (ARGV[2] when the session had none) and the
--                               session hash's time to live in ms (-1: it never expires), until
--                               which the caller may trust the owner without asking again
--          {'fenced'}     the lease is gone or held under another fence (nothing written)
local lease, session = KEYS[1], KEYS[2]
local fence, identity, session_ttl_ms, claim_ttl_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local FIRST_OTHER_KEY = 3

-- Nothing but an owner record: the session hash holds only `owner` and `epoch`, no other key exists.
local function claim_only()
  if redis.call('HLEN', session) > 2 then
    return false
  end
  for i = FIRST_OTHER_KEY, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      return false
    end
  end
  return true
end

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
local existed = redis.call('EXISTS', session)
if redis.call('HSETNX', session, 'owner', identity) == 1 then
  local now = redis.call('TIME')
  redis.call('HSET', session, 'epoch', string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
end
if claim_only() and redis.call('HGET', session, 'owner') == identity then
  local ttl = claim_ttl_ms
  if session_ttl_ms ~= '0' and tonumber(session_ttl_ms) < ttl then
    ttl = tonumber(session_ttl_ms)
  end
  redis.call('PEXPIRE', session, ttl)
elseif existed == 0 and session_ttl_ms ~= '0' then
  redis.call('PEXPIRE', session, session_ttl_ms)  -- a new session hash slides like the others
end
return {'ok', redis.call('HGET', session, 'owner'), redis.call('PTTL', session)}
