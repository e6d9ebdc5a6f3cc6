-- lease_acquire: take a partition's lease if nobody holds it, with a new fencing epoch.
-- KEYS[1]  lease hash of the partition ({prefix}:{p<N>}:lease): fields owner, epoch; PX expiry
-- KEYS[2]  epoch counter of the partition ({prefix}:{p<N>}:epoch); never expires.  A missing
--          counter (first start, or a Redis restart that lost it) starts at the server clock in
--          milliseconds, so epochs handed out after a restart exceed every epoch handed out before
--          it and a pre-restart zombie still fails the fence.
-- ARGV[1]  owner id (the worker process id)
-- ARGV[2]  lease time-to-live in milliseconds
-- Returns  {'acquired', epoch}    epoch = INCR of the counter (strictly increasing)
--          {'held', owner, pttl}  held by `owner` for `pttl` more milliseconds
local lease, counter = KEYS[1], KEYS[2]
local owner, ttl_ms = ARGV[1], ARGV[2]

if redis.call('EXISTS', lease) == 1 then
  return {'held', redis.call('HGET', lease, 'owner') or '', redis.call('PTTL', lease)}
end
if redis.call('EXISTS', counter) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', counter, string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)))
end
local epoch = redis.call('INCR', counter)
redis.call('HSET', lease, 'owner', owner, 'epoch', epoch)
redis.call('PEXPIRE', lease, ttl_ms)
return {'acquired', epoch}
