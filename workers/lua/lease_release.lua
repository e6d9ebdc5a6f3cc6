-- lease_release: give a lease back at once so another worker can acquire it.
-- KEYS[1]  lease hash of the partition
-- ARGV[1]  the caller's fencing epoch
-- Returns  'released'; 'fenced' not held with that epoch (nothing changed)
local lease = KEYS[1]
local epoch = ARGV[1]

if redis.call('HGET', lease, 'epoch') == epoch then
  redis.call('DEL', lease)
  return 'released'
end
return 'fenced'
