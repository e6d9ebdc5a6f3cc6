-- dead: move an input entry to the dead-letter stream, optionally reply, and XACK it.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  dead-letter stream of the partition
-- KEYS[4]  reply list of the request (only when ARGV[5] is not "")
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  reason code
-- ARGV[5]  reply JSON ("" when the entry has no usable reply address)
-- ARGV[6]  reply time-to-live in milliseconds
-- ARGV[7..] field, value pairs of the original entry (copied into the dead-letter entry)
-- Returns  1 dead-lettered and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
local fields = {'origin', ARGV[3], 'reason', ARGV[4]}
for i = 7, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '10000', '*', unpack(fields))
if ARGV[5] ~= '' then
  redis.call('RPUSH', KEYS[4], ARGV[5])
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
