-- lease_renew: extend a lease that the caller still holds, and count the partition's pending
-- entries (entries a resumed paused process moved there after this owner's replay are found
-- this way within one renewal interval, even when no newer entry arrives).
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (optional)
-- ARGV[1]  the caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  lease time-to-live in milliseconds
-- ARGV[3]  consumer group name (with KEYS[2])
-- Returns  {'renewed', pending}: pending = entries of KEYS[2] delivered and not acknowledged
--          (0 without KEYS[2]); {'fenced', owner, epoch} the lease expired (owner and epoch
--          "") or is held under another fence, by `owner` with `epoch` (nothing changed)
local lease, input = KEYS[1], KEYS[2]
local fence, ttl_ms, group = ARGV[1], ARGV[2], ARGV[3]

if redis.call('HGET', lease, 'fence') ~= fence then
  local holder = redis.call('HMGET', lease, 'owner', 'epoch')
  return {'fenced', holder[1] or '', holder[2] or ''}
end
redis.call('PEXPIRE', lease, ttl_ms)
local pending = 0
if input then
  local summary = redis.pcall('XPENDING', input, group)  -- an error: no stream or group yet
  if type(summary) == 'table' and not summary.err then
    pending = summary[1]
  end
end
return {'renewed', pending}
