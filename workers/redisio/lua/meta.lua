-- meta: check the deployment's `{prefix}:meta` against this worker's configuration and, only
-- when nothing disagrees, record it: the fixed fields if absent (the first worker), `streaming`
-- always.  One script, so a refused worker writes nothing, even when it starts at the same
-- moment as a worker of another configuration (a check, then writes, let the refused one write).
-- KEYS[1]  the meta hash
-- ARGV[1]  this worker's `streaming` ("1" or "0"), written once every fixed field agrees
-- ARGV[2..] field, value pairs that are fixed for the deployment (partitions, protocol, durability)
-- Returns  {'ok'}                      every fixed field agreed (or was absent and is now set)
--          {'mismatch', field, stored} the first fixed field whose stored value differs (nothing written)
local meta, streaming = KEYS[1], ARGV[1]

for i = 2, #ARGV, 2 do
  local stored = redis.call('HGET', meta, ARGV[i])
  if stored and stored ~= ARGV[i + 1] then
    return {'mismatch', ARGV[i], stored}
  end
end
for i = 2, #ARGV, 2 do
  redis.call('HSETNX', meta, ARGV[i], ARGV[i + 1])
end
redis.call('HSET', meta, 'streaming', streaming)
return {'ok'}
