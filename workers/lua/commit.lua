-- commit: apply one accepted stream tool call atomically: fence + CAS, then state, ledger,
-- frame log, reply, publish and XACK together.  Never parses JSON: the frame and the reply
-- are opaque strings, scalar bookkeeping arrives as separate hash field/value pairs.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  generation hash of (session, uiId, generation): field checkpoint (= ARGV[8]) and
--          the bookkeeping fields of ARGV[16..]
-- KEYS[4]  call ledger list of that generation (accepted call digests)
-- KEYS[5]  UI hash of (session, uiId): field generation = latest allocated generation
-- KEYS[6]  session hash: field generations (count), fields src:<sourceCallId> -> uiId
-- KEYS[7]  frame log stream of the session (field frame)
-- KEYS[8]  reply list of the request
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  expected stored seq of KEYS[3] ("0" when the generation is new)
-- ARGV[5]  expected stored generation of KEYS[5] ("0" when the UI id is new)
-- ARGV[6]  generation of KEYS[5] after the commit (ARGV[5] + 1 for an open, else ARGV[5])
-- ARGV[7]  call digest to append to KEYS[4]
-- ARGV[8]  frame JSON (stored as the checkpoint, appended to KEYS[7] and published)
-- ARGV[9]  approximate maximum length of the frame log
-- ARGV[10] reply JSON (pushed on KEYS[8])
-- ARGV[11] reply time-to-live in milliseconds
-- ARGV[12] pub/sub channel of the session's frames
-- ARGV[13] session hash field to set ("" for none), ARGV[14] its value
-- ARGV[15] increment of the session's generations count ("0" or "1")
-- ARGV[16..] field, value pairs written to KEYS[3]
-- Returns  {1}                      committed
--          {-1}                     fenced: the lease is gone or has a later epoch
--          {-2, seq, generation}    CAS failed: the stored cursor differs from the expected one
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
local seq = redis.call('HGET', KEYS[3], 'seq') or '0'
local generation = redis.call('HGET', KEYS[5], 'generation') or '0'
if seq ~= ARGV[4] or generation ~= ARGV[5] then
  return {-2, seq, generation}
end
if ARGV[6] ~= generation then
  redis.call('HSET', KEYS[5], 'generation', ARGV[6])
end
if ARGV[13] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[13], ARGV[14])
end
if ARGV[15] ~= '0' then
  redis.call('HINCRBY', KEYS[6], 'generations', ARGV[15])
end
local fields = {'checkpoint', ARGV[8]}
for i = 16, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[3], unpack(fields))
redis.call('RPUSH', KEYS[4], ARGV[7])
redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[9], '*', 'frame', ARGV[8])
redis.call('RPUSH', KEYS[8], ARGV[10])
redis.call('PEXPIRE', KEYS[8], ARGV[11])
redis.call('PUBLISH', ARGV[12], ARGV[8])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return {1}
