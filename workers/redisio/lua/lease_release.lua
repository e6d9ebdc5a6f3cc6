-- lease_release: give a lease back at once so another worker can acquire it.
-- KEYS[1]  lease hash of the partition
-- ARGV[1]  the caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- Returns  'released'; 'fenced' not held with that fence (nothing changed)
local lease = KEYS[1]
local fence = ARGV[1]

if redis.call('HGET', lease, 'fence') == fence then
  redis.call('DEL', lease)
  return 'released'
end
return 'fenced'
