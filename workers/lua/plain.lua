-- plain: store the validated document of a plain `intelligent_ui` call, reply and XACK.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  UI hash of (session, uiId): fields plain (document JSON), plain_call (call id)
-- KEYS[4]  reply list of the request
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  document JSON (opaque)
-- ARGV[5]  call id of the tool call
-- ARGV[6]  reply JSON
-- ARGV[7]  reply time-to-live in milliseconds
-- Returns  1 stored, replied and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
redis.call('HSET', KEYS[3], 'plain', ARGV[4], 'plain_call', ARGV[5])
redis.call('RPUSH', KEYS[4], ARGV[6])
redis.call('PEXPIRE', KEYS[4], ARGV[7])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
