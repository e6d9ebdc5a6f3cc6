-- lease_renew: extend a lease that the caller still holds.
-- KEYS[1]  lease hash of the partition
-- ARGV[1]  the caller's fencing epoch
-- ARGV[2]  lease time-to-live in milliseconds
-- Returns  'renewed'; 'fenced' the lease expired or belongs to a later epoch (nothing changed)
local lease = KEYS[1]
local epoch, ttl_ms = ARGV[1], ARGV[2]

if redis.call('HGET', lease, 'epoch') == epoch then
  redis.call('PEXPIRE', lease, ttl_ms)
  return 'renewed'
end
return 'fenced'
