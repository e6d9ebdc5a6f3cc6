-- lease_acquire: take a partition's lease if nobody holds it, under a fence that never repeats.
-- A lease is (owner, epoch): every fenced script compares the caller's fence "<epoch>:<owner>"
-- with the lease's `fence` field, so two owners never pass one fence even with equal epochs.
-- Epochs never repeat even when Redis loses recent writes (a crash with `appendfsync everysec`
-- may lose an acquisition together with its counter update): an epoch is at least the server
-- clock in milliseconds and above the stored counter, so a rolled-back counter cannot hand a
-- number out again (the clock moved on since the lost acquisition).
-- KEYS[1]  lease hash of the partition ({prefix}:{p<N>}:lease): fields owner, epoch, fence; PX expiry
-- KEYS[2]  epoch counter of the partition ({prefix}:{p<N>}:epoch): the last epoch handed out;
--          never expires (a missing one counts as 0)
-- ARGV[1]  owner id (the worker process id)
-- ARGV[2]  lease time-to-live in milliseconds
-- Returns  {'acquired', epoch, fence}  epoch = max(counter + 1, Redis clock in ms)
--          {'held', owner, pttl}       held by `owner` for `pttl` more milliseconds
local lease, counter = KEYS[1], KEYS[2]
local owner, ttl_ms = ARGV[1], ARGV[2]

if redis.call('EXISTS', lease) == 1 then
  return {'held', redis.call('HGET', lease, 'owner') or '', redis.call('PTTL', lease)}
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local epoch = math.max(tonumber(redis.call('GET', counter) or '0') + 1, now_ms)
local text = string.format('%d', epoch)
local fence = text .. ':' .. owner
redis.call('SET', counter, text)
redis.call('HSET', lease, 'owner', owner, 'epoch', text, 'fence', fence)
redis.call('PEXPIRE', lease, ttl_ms)
return {'acquired', text, fence}
