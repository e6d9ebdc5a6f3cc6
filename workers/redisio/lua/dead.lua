-- dead: move an input entry to the dead-letter stream, optionally reply, and XACK it.
-- The stream of a partition is held under a count and a byte budget: the oldest dead letters
-- are deleted (at most 32 per call, so a lowered budget is reached over a few calls), and
-- KEYS[4] keeps the bytes the stream holds (every field name and value of its entries).
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  dead-letter stream of the partition
-- KEYS[4]  byte counter of the dead-letter stream (string)
-- KEYS[5]  reply list of the request (only when ARGV[5] is not "")
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  reason code
-- ARGV[5]  reply JSON ("" when the entry has no usable reply address)
-- ARGV[6]  reply time-to-live in milliseconds
-- ARGV[7]  dead letters kept per partition
-- ARGV[8]  bytes kept per partition
-- ARGV[9]  "1" when the copy below is not the whole entry, else "0"
-- ARGV[10..] field, value pairs of the original entry, already bounded by the caller
--          (unpack below must stay far from Lua's stack limit)
-- Returns  'ok' dead-lettered and acked; 'fenced' the lease is gone or held under another fence (nothing written)
--          'gap' an older entry of the partition is still pending (nothing written)
local lease, input, dead, dead_bytes, reply_list = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local fence, group, entry_id, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local reply, reply_ttl_ms = ARGV[5], ARGV[6]
local max_entries, max_bytes, truncated = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local FIRST_FIELD = 10  -- ARGV[10..]: field, value pairs of the original entry

if redis.call('HGET', lease, 'fence') ~= fence then
  return 'fenced'
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return 'gap'  -- an older entry of the partition is still pending: the caller replays it first
end
local fields = {'origin', entry_id, 'reason', reason}
if truncated == '1' then
  fields[#fields + 1] = 'truncated'
  fields[#fields + 1] = '1'
end
for i = FIRST_FIELD, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
local size = 0
for _, text in ipairs(fields) do
  size = size + #text
end
redis.call('XADD', dead, '*', unpack(fields))
local total = redis.call('INCRBY', dead_bytes, size)
local length = redis.call('XLEN', dead)
local steps = 32
while length > 1 and steps > 0 and (length > max_entries or total > max_bytes) do
  local head = redis.call('XRANGE', dead, '-', '+', 'COUNT', 1)[1]
  local freed = 0
  for _, text in ipairs(head[2]) do
    freed = freed + #text
  end
  redis.call('XDEL', dead, head[1])
  total = redis.call('DECRBY', dead_bytes, freed)
  length = length - 1
  steps = steps - 1
end
if length == 1 or total < 0 then
  -- The counter drifts when an operator deletes dead letters by hand; resynchronise it when
  -- the stream holds only the entry just added (or the counter went negative).
  redis.call('SET', dead_bytes, size)
end
if reply ~= '' then
  redis.call('RPUSH', reply_list, reply)
  redis.call('PEXPIRE', reply_list, reply_ttl_ms)
end
redis.call('XACK', input, group, entry_id)
return 'ok'
