-- reply: answer a request without changing any state (rejections, identical resends), and
-- refresh the sliding expiry of the session's keys.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  reply list of the request
-- KEYS[4..] the session's keys whose expiry is refreshed (none when the entry names no session
--          of this partition); a missing key stays missing
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  reply JSON
-- ARGV[5]  reply time-to-live in milliseconds
-- ARGV[6]  session time-to-live in milliseconds for KEYS[4..] ("0": never expires)
-- Returns  1 replied and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
redis.call('RPUSH', KEYS[3], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
for i = 4, #KEYS do
  if ARGV[6] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], ARGV[6])
  end
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
