-- heartbeat: announce this worker alive until Redis's now plus a time-to-live, forget the
-- workers whose announcement lapsed, and list the live ones, in one round trip (before: a TIME,
-- then a pipeline of ZADD, ZREMRANGEBYSCORE and ZRANGE: two round trips on the tick thread,
-- which shares the dispatcher's GIL).  Redis's clock, so every worker's deadline is on one clock.
-- KEYS[1]  the workers sorted set (member: worker id, score: its deadline in Unix milliseconds)
-- ARGV[1]  this worker's id
-- ARGV[2]  how long from now its announcement holds, in milliseconds (the lease time-to-live)
-- Returns  the ids of the live workers (deadline after now), this one included, by deadline
local workers, worker, ttl_ms = KEYS[1], ARGV[1], tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', workers, string.format('%d', now + ttl_ms), worker)
redis.call('ZREMRANGEBYSCORE', workers, '-inf', string.format('%d', now))
return redis.call('ZRANGE', workers, 0, -1)
