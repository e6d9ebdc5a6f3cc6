-- plain: store the validated document of a plain `intelligent_ui` call under its native call
-- id (never overwriting one), reply, XACK and refresh the session's sliding expiry.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  plain-document hash of the session: three fields per call (ARGV[4], ARGV[6], ARGV[8])
-- KEYS[4]  session hash (expiry only)
-- KEYS[5]  generations hash of the session (expiry only)
-- KEYS[6]  frame log stream of the session (expiry only)
-- KEYS[7]  reply list of the request
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  document field of the call (doc:<call>), ARGV[5] the document JSON (opaque)
-- ARGV[6]  uiId field of the call (ui:<call>), ARGV[7] the document's uiId
-- ARGV[8]  digest field of the call (sum:<call>), ARGV[9] the content digest of the call
-- ARGV[10] capacity: plain documents a session may hold
-- ARGV[11] reply JSON
-- ARGV[12] reply time-to-live in milliseconds
-- ARGV[13] session time-to-live in milliseconds, refreshed on KEYS[3..6] ("0": never expires)
-- Returns  1 stored, replied and acked
--          -1 fenced (nothing written)
--          -2 the call id already holds a document (nothing written: the caller's view is stale)
--          -3 the session holds ARGV[10] plain documents (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
if redis.call('HEXISTS', KEYS[3], ARGV[8]) == 1 then
  return -2
end
if redis.call('HLEN', KEYS[3]) >= 3 * tonumber(ARGV[10]) then
  return -3
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
redis.call('RPUSH', KEYS[7], ARGV[11])
redis.call('PEXPIRE', KEYS[7], ARGV[12])
for i = 3, 6 do
  if ARGV[13] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], ARGV[13])
  end
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
