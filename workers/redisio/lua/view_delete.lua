-- view_delete: delete a session's answers and view states and leave a tombstone, so a late
-- present_answer, final_answer or view put (already read, or still queued) cannot bring
-- records back; reply and XACK in the same step.  Deleting twice is harmless.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  tombstone of the session (set to ARGV[4])
-- KEYS[4]  reply list of the request
-- KEYS[5..] the keys deleted (answers hash, answer log, views hash)
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  tombstone value (deletion time, Unix ms)
-- ARGV[5]  tombstone time-to-live in ms ("0": never expires)
-- ARGV[6]  reply JSON, ARGV[7] reply time-to-live in ms
-- Returns  'ok' deleted (or already deleted), replied and acked
--          'fenced' the lease is gone or held under another fence (nothing written)
--          'gap'    an older entry of the partition is still pending (nothing written)
local lease, input, tombstone, reply_list = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local FIRST_DELETED_KEY = 5  -- KEYS[5..]: the keys deleted
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local deleted_at, tombstone_ttl_ms, reply, reply_ttl_ms = ARGV[4], ARGV[5], ARGV[6], ARGV[7]

if redis.call('HGET', lease, 'fence') ~= fence then
  return 'fenced'
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return 'gap'  -- an older entry of the partition is still pending: the caller replays it first
end
if redis.call('EXISTS', tombstone) == 0 then
  if tombstone_ttl_ms == '0' then
    redis.call('SET', tombstone, deleted_at)
  else
    redis.call('SET', tombstone, deleted_at, 'PX', tombstone_ttl_ms)
  end
end
for i = FIRST_DELETED_KEY, #KEYS do
  redis.call('DEL', KEYS[i])
end
redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
redis.call('XACK', input, group, entry_id)
return 'ok'
