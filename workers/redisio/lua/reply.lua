-- reply: answer a request without changing any state (rejections, identical resends), and
-- refresh the sliding expiry of the session's keys.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  reply list of the request
-- KEYS[4..] the session's keys whose expiry is refreshed (none when the entry names no session
--          of this partition), the session hash first (Keys.sliding_keys); a missing key stays
--          missing, and a session holding nothing but its owner record (a claim: no call of it was
--          accepted yet, owner.lua) keeps its claim's expiry
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  reply JSON
-- ARGV[5]  reply time-to-live in milliseconds
-- ARGV[6]  session time-to-live in milliseconds for KEYS[4..] ("0": never expires)
-- Returns  'ok' replied and acked; 'fenced' the lease is gone or held under another fence (nothing written)
--          'gap' an older entry of the partition is still pending (nothing written)
local lease, input, reply_list = KEYS[1], KEYS[2], KEYS[3]
local FIRST_EXPIRY_KEY = 4  -- KEYS[4..]: the session's keys whose expiry slides
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local reply, reply_ttl_ms, session_ttl_ms = ARGV[4], ARGV[5], ARGV[6]

-- Nothing but an owner record: the session hash holds only `owner` and `epoch`, no other key exists.
local function claim_only()
  if #KEYS < FIRST_EXPIRY_KEY or redis.call('HLEN', KEYS[FIRST_EXPIRY_KEY]) > 2 then
    return false
  end
  for i = FIRST_EXPIRY_KEY + 1, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      return false
    end
  end
  return true
end

if redis.call('HGET', lease, 'fence') ~= fence then
  return 'fenced'
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return 'gap'  -- an older entry of the partition is still pending: the caller replays it first
end
redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
if not claim_only() then
  for i = FIRST_EXPIRY_KEY, #KEYS do
    if session_ttl_ms == '0' then
      redis.call('PERSIST', KEYS[i])
    else
      redis.call('PEXPIRE', KEYS[i], session_ttl_ms)
    end
  end
end
redis.call('XACK', input, group, entry_id)
return 'ok'
