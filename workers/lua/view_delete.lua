-- view_delete: delete a session's answers and view states and leave a tombstone, so a late
-- present_answer, final_answer or view put (already read, or still queued) cannot bring
-- records back; reply and XACK in the same step.  Deleting twice is harmless.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  tombstone of the session (set to ARGV[4])
-- KEYS[4]  reply list of the request
-- KEYS[5..] the keys deleted (answers hash, answer log, views hash)
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  tombstone value (deletion time, Unix ms)
-- ARGV[5]  tombstone time-to-live in ms ("0": never expires)
-- ARGV[6]  reply JSON, ARGV[7] reply time-to-live in ms
-- Returns  1 deleted (or already deleted), replied and acked; -1 fenced (nothing written)
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return -1
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  if ARGV[5] == '0' then
    redis.call('SET', KEYS[3], ARGV[4])
  else
    redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
  end
end
for i = 5, #KEYS do
  redis.call('DEL', KEYS[i])
end
redis.call('RPUSH', KEYS[4], ARGV[6])
redis.call('PEXPIRE', KEYS[4], ARGV[7])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return 1
