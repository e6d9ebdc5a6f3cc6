-- lease_release: give a lease back at once so another worker can acquire it.
-- KEYS[1]  lease hash of the partition
-- ARGV[1]  the caller's fencing epoch
-- Returns  1 released; 0 not held with that epoch (nothing changed)
if redis.call('HGET', KEYS[1], 'epoch') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
