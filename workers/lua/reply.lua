-- reply: answer a request without changing any state (rejections, identical resends).
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  reply list of the request
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  reply JSON
-- ARGV[5]  reply time-to-live in milliseconds
-- Returns  1 replied and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
redis.call('RPUSH', KEYS[3], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
