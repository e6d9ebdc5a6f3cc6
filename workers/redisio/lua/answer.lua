-- answer: commit one accepted present_answer or final_answer call atomically: fence, tombstone,
-- the turn rules (CAS on the session's current turn, a closed or earlier turn never changes,
-- CAS on the block's stored digest and version), the block capacity, then the block or the
-- final answer, the answer log (trimmed by count and bytes), PUBLISH, the reply, XACK and the
-- sliding expiry together.  Never parses JSON: blocks, events and replies are opaque strings.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  answers hash of the session: turn (current message id), blocks (count), turns (count),
--          log_bytes, last_call / last_digest / last_result (the adjacent-resend ledger),
--          t:<m> (block ids of turn m, space separated), f:<m> (final answer JSON: the turn is
--          closed), b:<m>:<b> block JSON, p:<m>:<b> phase, d:<m>:<b> schema digest,
--          v:<m>:<b> version (publications of the block)
-- KEYS[4]  answer log stream of the session (field event)
-- KEYS[5]  tombstone of the session (exists: deleted, nothing is written)
-- KEYS[6]  reply list of the request
-- KEYS[7..] the session's keys whose expiry slides with ARGV[19] (KEYS[3], KEYS[4] included)
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  "block" (present_answer) or "final" (final_answer)
-- ARGV[5]  message id of the turn
-- ARGV[6]  block id ("" for final)
-- ARGV[7]  expected current turn ("" none yet)
-- ARGV[8]  expected stored digest of the block ("" new block; unused for final)
-- ARGV[9]  expected stored version of the block ("0" new block; unused for final)
-- ARGV[10] block JSON or final answer JSON (stored)
-- ARGV[11] phase of the block ("process" or "final"; unused for final)
-- ARGV[12] schema digest of the block (unused for final)
-- ARGV[13] event JSON (appended to KEYS[4] and published)
-- ARGV[14] pub/sub channel of the session's answer events (PUBLISH; on a Redis Cluster the script is
--          registered with SPUBLISH instead: see scripts.script_source)
-- ARGV[15] maximum events kept in KEYS[4], ARGV[16] maximum bytes (the newest always stays)
-- ARGV[17] blocks a session may hold
-- ARGV[18] reply JSON, ARGV[19] session time-to-live in ms ("0": never), ARGV[20] reply ttl ms
-- ARGV[21] call id, ARGV[22] call digest, ARGV[23] result JSON (the adjacent-resend ledger)
-- ARGV[24] turns a session may hold (a new message id beyond it writes nothing)
-- Returns  {'ok'}       committed
--          {'fenced'}   the lease is gone or held under another fence (nothing written)
--          {'gap'}      an older entry of the partition is still pending (nothing written)
--          {'deleted'}  the session was deleted (nothing written)
--          {'stale'}    the turn or the block is not what the caller read (nothing written)
--          {'full'}     the session holds ARGV[17] blocks or ARGV[24] turns (nothing written)
local lease, input, answers, log, tombstone, reply_list = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local FIRST_EXPIRY_KEY = 7  -- KEYS[7..]: the session's keys whose expiry slides
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local op, m, block_id, expected_turn = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local expected_digest, expected_version = ARGV[8], ARGV[9]
local stored, phase, digest, event, channel = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local max_count, max_bytes, max_blocks = tonumber(ARGV[15]), tonumber(ARGV[16]), tonumber(ARGV[17])
local reply, session_ttl_ms, reply_ttl_ms = ARGV[18], ARGV[19], ARGV[20]
local call, call_digest, result = ARGV[21], ARGV[22], ARGV[23]
local max_turns = tonumber(ARGV[24])
-- include: capped_log

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return {'gap'}  -- an older entry of the partition is still pending: the caller replays it first
end
if redis.call('EXISTS', tombstone) == 1 then
  return {'deleted'}
end
local turn = redis.call('HGET', answers, 'turn') or ''
if turn ~= expected_turn then
  return {'stale'}
end
local turn_blocks = redis.call('HGET', answers, 't:' .. m)
if (m ~= turn and turn_blocks) or redis.call('HEXISTS', answers, 'f:' .. m) == 1 then
  return {'stale'}
end
if not turn_blocks then  -- a new turn: counted, as each keeps its fields (and final answer) for the session's life
  if tonumber(redis.call('HGET', answers, 'turns') or '0') >= max_turns then
    return {'full'}
  end
  redis.call('HINCRBY', answers, 'turns', 1)
end
if op == 'block' then
  local mb = m .. ':' .. block_id
  local stored_digest = redis.call('HGET', answers, 'd:' .. mb) or ''
  local version = redis.call('HGET', answers, 'v:' .. mb) or '0'
  if stored_digest ~= expected_digest or version ~= expected_version then
    return {'stale'}
  end
  if stored_digest == '' then
    if tonumber(redis.call('HGET', answers, 'blocks') or '0') >= max_blocks then
      return {'full'}
    end
    redis.call('HINCRBY', answers, 'blocks', 1)
    redis.call('HSET', answers, 't:' .. m,
      (turn_blocks and turn_blocks ~= '') and (turn_blocks .. ' ' .. block_id) or block_id)
  end
  redis.call('HSET', answers, 'b:' .. mb, stored, 'p:' .. mb, phase, 'd:' .. mb, digest)
  redis.call('HINCRBY', answers, 'v:' .. mb, 1)
else
  redis.call('HSET', answers, 'f:' .. m, stored)
  if not turn_blocks then
    redis.call('HSET', answers, 't:' .. m, '')
  end
end
redis.call('HSET', answers, 'turn', m, 'last_call', call, 'last_digest', call_digest, 'last_result', result)

-- Answer log: append, then drop the oldest events until both caps hold; the newest stays.
capped_append(log, 'event', event, answers, 'log_bytes', max_count, max_bytes)

redis.call('PUBLISH', channel, event)
redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
for i = FIRST_EXPIRY_KEY, #KEYS do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], session_ttl_ms)
  end
end
redis.call('XACK', input, group, entry_id)
return {'ok'}
