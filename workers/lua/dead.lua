-- dead: move an input entry to the dead-letter stream, optionally reply, and XACK it.
-- The stream of a partition is held under a count and a byte budget: the oldest dead letters
-- are deleted (at most 32 per call, so a lowered budget is reached over a few calls), and
-- KEYS[4] keeps the bytes the stream holds (every field name and value of its entries).
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  dead-letter stream of the partition
-- KEYS[4]  byte counter of the dead-letter stream (string)
-- KEYS[5]  reply list of the request (only when ARGV[5] is not "")
-- ARGV[1]  caller's fencing epoch
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
-- Returns  1 dead-lettered and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
local fields = {'origin', ARGV[3], 'reason', ARGV[4]}
if ARGV[9] == '1' then
  fields[#fields + 1] = 'truncated'
  fields[#fields + 1] = '1'
end
for i = 10, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
local size = 0
for _, text in ipairs(fields) do
  size = size + #text
end
redis.call('XADD', KEYS[3], '*', unpack(fields))
local total = redis.call('INCRBY', KEYS[4], size)
local length = redis.call('XLEN', KEYS[3])
local max_entries, max_bytes = tonumber(ARGV[7]), tonumber(ARGV[8])
local steps = 32
while length > 1 and steps > 0 and (length > max_entries or total > max_bytes) do
  local head = redis.call('XRANGE', KEYS[3], '-', '+', 'COUNT', 1)[1]
  local freed = 0
  for _, text in ipairs(head[2]) do
    freed = freed + #text
  end
  redis.call('XDEL', KEYS[3], head[1])
  total = redis.call('DECRBY', KEYS[4], freed)
  length = length - 1
  steps = steps - 1
end
if length == 1 or total < 0 then
  -- The counter drifts when an operator deletes dead letters by hand; resynchronise it when
  -- the stream holds only the entry just added (or the counter went negative).
  redis.call('SET', KEYS[4], size)
end
if ARGV[5] ~= '' then
  redis.call('RPUSH', KEYS[5], ARGV[5])
  redis.call('PEXPIRE', KEYS[5], ARGV[6])
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
