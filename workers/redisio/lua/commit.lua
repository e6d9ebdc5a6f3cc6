-- commit: apply one accepted stream tool call atomically: fence + CAS, then state, ledger,
-- frame log (trimmed by count and bytes), reply, publish, XACK and the session's sliding
-- expiry together.  Never parses JSON: the frame and the reply are opaque strings, scalar
-- bookkeeping arrives as separate hash field/value pairs.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  generations hash of the session: fields ARGV[18] .. name, e.g. checkpoint (= ARGV[7]),
--          seq, call:<seq> (the call ledger: one field per accepted call, its digest) and the
--          other bookkeeping fields of ARGV[20..]
-- KEYS[4]  session hash: generations (count), src:<sourceCallId> -> uiId, ARGV[17] (latest
--          generation of the uiId), log_bytes (bytes of the frames in KEYS[5])
-- KEYS[5]  frame log stream of the session (field frame)
-- KEYS[6]  plain-document hash of the session (only its expiry is refreshed here)
-- KEYS[7]  reply list of the request
-- KEYS[8..] the session's other keys (actions, answers): only their expiry is refreshed, with KEYS[3..6]
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  expected stored seq of the generation ("0" when the generation is new)
-- ARGV[5]  expected stored generation of the uiId ("0" when the UI id is new)
-- ARGV[6]  generation of the uiId after the commit (ARGV[5] + 1 for an open, else ARGV[5])
-- ARGV[7]  frame JSON (stored as the checkpoint, appended to KEYS[5] and published)
-- ARGV[8]  maximum number of frames kept in KEYS[5]
-- ARGV[9]  maximum bytes of the frames kept in KEYS[5] (at least one maximal frame)
-- ARGV[10] reply JSON (pushed on KEYS[7])
-- ARGV[11] reply time-to-live in milliseconds
-- ARGV[12] pub/sub channel of the session's frames (PUBLISH; on a Redis Cluster the script is
--          registered with SPUBLISH instead: see scripts.script_source)
-- ARGV[13] session hash field to set ("" for none), ARGV[14] its value
-- ARGV[15] increment of the session's generations count ("0" or "1")
-- ARGV[16] session time-to-live in milliseconds, refreshed on KEYS[3..6] ("0": never expires)
-- ARGV[17] session hash field holding the latest generation of the uiId
-- ARGV[18] field name prefix of this generation in KEYS[3] ("<uiId>:<generation>:")
-- ARGV[19] generations a session may hold ("0": no limit); an open beyond it writes nothing
-- ARGV[20..] field, value pairs written to KEYS[3] (names without the prefix); among them the
--          call ledger's field of the new seq, call:<ARGV[4] + 1> -> the call's digest (keys.ledger_name)
-- Returns  {'ok'}                       committed
--          {'fenced'}                   the lease is gone or held under another fence (nothing written)
--          {'gap'}                      an older entry of the partition is still pending (nothing written)
--          {'stale', seq, generation}   CAS failed: the stored cursor differs from the expected one
--          {'full'}                     the open would exceed ARGV[19] generations (nothing written:
--                                       seed 001 never overwrites a generation, it refuses the open)
local lease, input, generations, session, frame_log, plain, reply_list =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local expected_seq, expected_generation, new_generation = ARGV[4], ARGV[5], ARGV[6]
local frame = ARGV[7]
local max_count, max_bytes = tonumber(ARGV[8]), tonumber(ARGV[9])
local reply, reply_ttl_ms, channel = ARGV[10], ARGV[11], ARGV[12]
local session_field, session_value, generations_increment = ARGV[13], ARGV[14], ARGV[15]
local session_ttl_ms, ui_field, prefix = ARGV[16], ARGV[17], ARGV[18]
local max_generations = tonumber(ARGV[19])
local FIRST_FIELD = 20  -- ARGV[20..]: field, value pairs of the generation
-- include: capped_log

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return {'gap'}  -- an older entry of the partition is still pending: the caller replays it first
end
local seq = redis.call('HGET', generations, prefix .. 'seq') or '0'
local generation = redis.call('HGET', session, ui_field) or '0'
if seq ~= expected_seq or generation ~= expected_generation then
  return {'stale', seq, generation}
end
if generations_increment ~= '0' and max_generations > 0 then
  local held = tonumber(redis.call('HGET', session, 'generations') or '0')
  if held + tonumber(generations_increment) > max_generations then
    return {'full'}
  end
end
if new_generation ~= generation then
  redis.call('HSET', session, ui_field, new_generation)
end
if session_field ~= '' then
  redis.call('HSET', session, session_field, session_value)
end
if generations_increment ~= '0' then
  redis.call('HINCRBY', session, 'generations', generations_increment)
end
-- The ledger is never read here: Redis hashes every string a script makes in full, so
-- appending to one ledger string cost O(generation) per commit (docs/decisions.md).
local fields = {prefix .. 'checkpoint', frame}
for i = FIRST_FIELD, #ARGV, 2 do
  fields[#fields + 1] = prefix .. ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
end
redis.call('HSET', generations, unpack(fields))

-- Frame log: append, then drop the oldest frames until both the count and the byte caps hold.
-- The newest frame always stays (the byte cap is at least one maximal frame).
capped_append(frame_log, 'frame', frame, session, 'log_bytes', max_count, max_bytes)

redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
local sliding = {generations, session, frame_log, plain}
for i = 8, #KEYS do
  sliding[#sliding + 1] = KEYS[i]
end
for _, key in ipairs(sliding) do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', key)
  else
    redis.call('PEXPIRE', key, session_ttl_ms)
  end
end
redis.call('PUBLISH', channel, frame)
redis.call('XACK', input, group, entry_id)
return {'ok'}
