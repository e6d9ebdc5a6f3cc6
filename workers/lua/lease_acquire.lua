-- lease_acquire: take a partition's lease if nobody holds it, with a new fencing epoch.
-- KEYS[1]  lease hash of the partition ({prefix}:{p<N>}:lease): fields owner, epoch; PX expiry
-- KEYS[2]  epoch counter of the partition ({prefix}:{p<N>}:epoch); never expires.  A missing
--          counter (first start, or a Redis restart that lost it) starts at the server clock in
--          milliseconds, so epochs handed out after a restart exceed every epoch handed out before
--          it and a pre-restart zombie still fails the fence.
-- ARGV[1]  owner id (the worker process id)
-- ARGV[2]  lease time-to-live in milliseconds
-- Returns  {1, epoch}        acquired; epoch = INCR of the counter (strictly increasing)
--          {0, owner, pttl}  held by `owner` for `pttl` more milliseconds
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGET', KEYS[1], 'owner') or '', redis.call('PTTL', KEYS[1])}
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', epoch)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, epoch}
