-- owner: record who owns a session (the first principal and project that reach it) and return
-- the owner.  Run by the partition owner before it decides the first entry of a session that
-- carries an identity; the partition's single writer makes "first" well defined.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  session hash (field owner = "<principal> <project>", epoch = the Redis time in ms when
--          the owner was recorded: the session's life, in the gateway's event cursors)
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  the entry's identity, "<principal> <project>" (neither holds a space)
-- ARGV[3]  session time-to-live in milliseconds for a session hash this creates ("0": never expires)
-- Returns  {'ok', owner, pttl}  the session's owner (ARGV[2] when the session had none) and the
--                               session hash's time to live in ms (-1: it never expires), until
--                               which the caller may trust the owner without asking again
--          {'fenced'}     the lease is gone or held under another fence (nothing written)
local lease, session = KEYS[1], KEYS[2]
local fence, identity, session_ttl_ms = ARGV[1], ARGV[2], ARGV[3]

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
local existed = redis.call('EXISTS', session)
if redis.call('HSETNX', session, 'owner', identity) == 1 then
  local now = redis.call('TIME')
  redis.call('HSET', session, 'epoch', string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
  if existed == 0 and session_ttl_ms ~= '0' then
    redis.call('PEXPIRE', session, session_ttl_ms)  -- a new session hash slides like the others
  end
end
return {'ok', redis.call('HGET', session, 'owner'), redis.call('PTTL', session)}
