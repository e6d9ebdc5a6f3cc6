-- read: a fenced XREADGROUP, so that only the current owner can move entries into the
-- partition's pending list.  A paused-then-resumed worker (a zombie) gets -1 and moves nothing.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  consumer name (the partition's one consumer)
-- ARGV[4]  COUNT of entries to read
-- ARGV[5]  ">" for new entries, "0" for the consumer's pending entries (replay)
-- Returns  {-1}                              fenced: the lease is gone or has a later epoch
--          {1, cursor, entries, deliveries}  entries = {{id, {field, value, ...}}, ...} in id
--                                            order (fields false for an entry deleted while
--                                            pending); deliveries = {id, count, ...} for a
--                                            replay, {} for new entries; cursor = the id of
--                                            the last entry read, or, when none was new, of
--                                            the stream's last entry ("0-0" when empty), so a
--                                            plain XREAD from it wakes on the next new entry
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[2], ARGV[3], 'COUNT', ARGV[4],
                         'STREAMS', KEYS[2], ARGV[5])
local entries = {}
if reply and type(reply[1]) == 'table' then
  entries = reply[1][2] or {}
elseif reply and reply[2] then
  entries = reply[2]  -- the embedded demo Redis (fakeredis) returns {key, entries} unnested
end
local deliveries = {}
if ARGV[5] ~= '>' and #entries > 0 then
  local first, last = entries[1][1], entries[#entries][1]
  for _, row in ipairs(redis.call('XPENDING', KEYS[2], ARGV[2], first, last, #entries, ARGV[3])) do
    deliveries[#deliveries + 1] = row[1]
    deliveries[#deliveries + 1] = row[4]
  end
end
local cursor = '0-0'
if #entries > 0 then
  cursor = entries[#entries][1]
else
  local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if newest[1] then
    cursor = newest[1][1]
  end
end
return {1, cursor, entries, deliveries}
