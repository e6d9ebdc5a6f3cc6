-- lease_renew: extend a lease that the caller still holds.
-- KEYS[1]  lease hash of the partition
-- ARGV[1]  the caller's fencing epoch
-- ARGV[2]  lease time-to-live in milliseconds
-- Returns  1 renewed; 0 the lease expired or belongs to a later epoch (the caller is fenced)
if redis.call('HGET', KEYS[1], 'epoch') == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
