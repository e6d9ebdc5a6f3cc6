-- commit: apply one accepted stream tool call atomically: fence + CAS, then state, ledger,
-- frame log (trimmed by count and bytes), reply, publish, XACK and the session's sliding
-- expiry together.  Never parses JSON: the frame and the reply are opaque strings, scalar
-- bookkeeping arrives as separate hash field/value pairs.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  generations hash of the session: fields ARGV[19] .. name, e.g. checkpoint (= ARGV[8]),
--          seq, calls (the call ledger: accepted call digests separated by spaces) and the
--          bookkeeping fields of ARGV[20..]
-- KEYS[4]  session hash: generations (count), src:<sourceCallId> -> uiId, ARGV[18] (latest
--          generation of the uiId), log_bytes (bytes of the frames in KEYS[5])
-- KEYS[5]  frame log stream of the session (field frame)
-- KEYS[6]  plain-document hash of the session (only its expiry is refreshed here)
-- KEYS[7]  reply list of the request
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  expected stored seq of the generation ("0" when the generation is new)
-- ARGV[5]  expected stored generation of the uiId ("0" when the UI id is new)
-- ARGV[6]  generation of the uiId after the commit (ARGV[5] + 1 for an open, else ARGV[5])
-- ARGV[7]  call digest to append to the generation's call ledger
-- ARGV[8]  frame JSON (stored as the checkpoint, appended to KEYS[5] and published)
-- ARGV[9]  maximum number of frames kept in KEYS[5]
-- ARGV[10] maximum bytes of the frames kept in KEYS[5] (at least one maximal frame)
-- ARGV[11] reply JSON (pushed on KEYS[7])
-- ARGV[12] reply time-to-live in milliseconds
-- ARGV[13] pub/sub channel of the session's frames
-- ARGV[14] session hash field to set ("" for none), ARGV[15] its value
-- ARGV[16] increment of the session's generations count ("0" or "1")
-- ARGV[17] session time-to-live in milliseconds, refreshed on KEYS[3..6] ("0": never expires)
-- ARGV[18] session hash field holding the latest generation of the uiId
-- ARGV[19] field name prefix of this generation in KEYS[3] ("<uiId>:<generation>:")
-- ARGV[20..] field, value pairs written to KEYS[3] (names without the prefix)
-- Returns  {1}                      committed
--          {-1}                     fenced: the lease is gone or has a later epoch
--          {-2, seq, generation}    CAS failed: the stored cursor differs from the expected one
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
local prefix = ARGV[19]
local seq = redis.call('HGET', KEYS[3], prefix .. 'seq') or '0'
local generation = redis.call('HGET', KEYS[4], ARGV[18]) or '0'
if seq ~= ARGV[4] or generation ~= ARGV[5] then
  return {-2, seq, generation}
end
if ARGV[6] ~= generation then
  redis.call('HSET', KEYS[4], ARGV[18], ARGV[6])
end
if ARGV[14] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[14], ARGV[15])
end
if ARGV[16] ~= '0' then
  redis.call('HINCRBY', KEYS[4], 'generations', ARGV[16])
end
local ledger = redis.call('HGET', KEYS[3], prefix .. 'calls')
local fields = {prefix .. 'checkpoint', ARGV[8], prefix .. 'calls', ledger and (ledger .. ' ' .. ARGV[7]) or ARGV[7]}
for i = 20, #ARGV, 2 do
  fields[#fields + 1] = prefix .. ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
end
redis.call('HSET', KEYS[3], unpack(fields))

-- Frame log: append, then drop the oldest frames until both the count and the byte caps hold.
-- The newest frame always stays (the byte cap is at least one maximal frame).
redis.call('XADD', KEYS[5], '*', 'frame', ARGV[8])
local count = redis.call('XLEN', KEYS[5])
local bytes = redis.call('HINCRBY', KEYS[4], 'log_bytes', #ARGV[8])
if count == 1 and bytes ~= #ARGV[8] then
  bytes = #ARGV[8]
  redis.call('HSET', KEYS[4], 'log_bytes', bytes)
end
local max_count, max_bytes = tonumber(ARGV[9]), tonumber(ARGV[10])
if count > max_count or bytes > max_bytes then
  local start, keep = '-', nil
  while keep == nil do
    local rows = redis.call('XRANGE', KEYS[5], start, '+', 'COUNT', 16)
    if #rows == 0 then
      break
    end
    for _, row in ipairs(rows) do
      if count <= max_count and bytes <= max_bytes then
        keep = row[1]
        break
      end
      count = count - 1
      bytes = bytes - #row[2][2]
    end
    start = '(' .. rows[#rows][1]
  end
  if keep ~= nil then
    redis.call('XTRIM', KEYS[5], 'MINID', keep)
  end
  redis.call('HSET', KEYS[4], 'log_bytes', math.max(bytes, 0))
end

redis.call('RPUSH', KEYS[7], ARGV[11])
redis.call('PEXPIRE', KEYS[7], ARGV[12])
for i = 3, 6 do
  if ARGV[17] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], ARGV[17])
  end
end
redis.call('PUBLISH', ARGV[13], ARGV[8])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return {1}
