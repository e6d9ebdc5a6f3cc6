-- answer: commit one accepted present_answer or final_answer call atomically: fence, tombstone,
-- the turn rules (CAS on the session's current turn, a closed or earlier turn never changes,
-- CAS on the block's stored digest and version), the block capacity, then the block or the
-- final answer, the answer log (trimmed by count and bytes), PUBLISH, the reply, XACK and the
-- sliding expiry together.  Never parses JSON: blocks, events and replies are opaque strings.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  answers hash of the session: turn (current message id), blocks (count),
--          log_bytes, last_call / last_digest / last_result (the adjacent-resend ledger),
--          t:<m> (block ids of turn m, space separated), f:<m> (final answer JSON: the turn is
--          closed), b:<m>:<b> block JSON, p:<m>:<b> phase, d:<m>:<b> schema digest,
--          v:<m>:<b> version (publications of the block)
-- KEYS[4]  answer log stream of the session (field event)
-- KEYS[5]  tombstone of the session (exists: deleted, nothing is written)
-- KEYS[6]  reply list of the request
-- KEYS[7..] the session's keys whose expiry slides with ARGV[19] (KEYS[3], KEYS[4] included)
-- ARGV[1]  caller's fencing epoch
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
-- ARGV[14] pub/sub channel of the session's answer events
-- ARGV[15] maximum events kept in KEYS[4], ARGV[16] maximum bytes (the newest always stays)
-- ARGV[17] blocks a session may hold
-- ARGV[18] reply JSON, ARGV[19] session time-to-live in ms ("0": never), ARGV[20] reply ttl ms
-- ARGV[21] call id, ARGV[22] call digest, ARGV[23] result JSON (the adjacent-resend ledger)
-- Returns  {1}      committed
--          {-1}     fenced (nothing written)
--          {-2}     the session was deleted (nothing written)
--          {-3}     the turn or the block is not what the caller read (nothing written)
--          {-4}     the session holds ARGV[17] blocks (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
if redis.call('EXISTS', KEYS[5]) == 1 then
  return {-2}
end
local m = ARGV[5]
local turn = redis.call('HGET', KEYS[3], 'turn') or ''
if turn ~= ARGV[7] then
  return {-3}
end
local turn_blocks = redis.call('HGET', KEYS[3], 't:' .. m)
if (m ~= turn and turn_blocks) or redis.call('HEXISTS', KEYS[3], 'f:' .. m) == 1 then
  return {-3}
end
if ARGV[4] == 'block' then
  local mb = m .. ':' .. ARGV[6]
  local digest = redis.call('HGET', KEYS[3], 'd:' .. mb) or ''
  local version = redis.call('HGET', KEYS[3], 'v:' .. mb) or '0'
  if digest ~= ARGV[8] or version ~= ARGV[9] then
    return {-3}
  end
  if digest == '' then
    if tonumber(redis.call('HGET', KEYS[3], 'blocks') or '0') >= tonumber(ARGV[17]) then
      return {-4}
    end
    redis.call('HINCRBY', KEYS[3], 'blocks', 1)
    redis.call('HSET', KEYS[3], 't:' .. m, (turn_blocks and turn_blocks ~= '') and (turn_blocks .. ' ' .. ARGV[6]) or ARGV[6])
  end
  redis.call('HSET', KEYS[3], 'b:' .. mb, ARGV[10], 'p:' .. mb, ARGV[11], 'd:' .. mb, ARGV[12])
  redis.call('HINCRBY', KEYS[3], 'v:' .. mb, 1)
else
  redis.call('HSET', KEYS[3], 'f:' .. m, ARGV[10])
  if not turn_blocks then
    redis.call('HSET', KEYS[3], 't:' .. m, '')
  end
end
redis.call('HSET', KEYS[3], 'turn', m, 'last_call', ARGV[21], 'last_digest', ARGV[22], 'last_result', ARGV[23])

-- Answer log: append, then drop the oldest events until both caps hold; the newest stays.
redis.call('XADD', KEYS[4], '*', 'event', ARGV[13])
local count = redis.call('XLEN', KEYS[4])
local bytes = redis.call('HINCRBY', KEYS[3], 'log_bytes', #ARGV[13])
if count == 1 and bytes ~= #ARGV[13] then
  bytes = #ARGV[13]
  redis.call('HSET', KEYS[3], 'log_bytes', bytes)
end
local max_count, max_bytes = tonumber(ARGV[15]), tonumber(ARGV[16])
if count > max_count or bytes > max_bytes then
  local start, keep = '-', nil
  while keep == nil do
    local rows = redis.call('XRANGE', KEYS[4], start, '+', 'COUNT', 16)
    if #rows == 0 then
      break
    end
    for _, row in ipairs(rows) do
      if count == 1 or (count <= max_count and bytes <= max_bytes) then
        keep = row[1]
        break
      end
      count = count - 1
      bytes = bytes - #row[2][2]
    end
    start = '(' .. rows[#rows][1]
  end
  if keep ~= nil then
    redis.call('XTRIM', KEYS[4], 'MINID', keep)
  end
  redis.call('HSET', KEYS[3], 'log_bytes', math.max(bytes, 0))
end

redis.call('PUBLISH', ARGV[14], ARGV[13])
redis.call('RPUSH', KEYS[6], ARGV[18])
redis.call('PEXPIRE', KEYS[6], ARGV[20])
for i = 7, #KEYS do
  if ARGV[19] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], ARGV[19])
  end
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return {1}
