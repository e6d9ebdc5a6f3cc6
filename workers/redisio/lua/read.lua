-- read: a fenced XREADGROUP, so that only the current owner can move entries into the
-- partition's pending list.  A paused-then-resumed worker (a zombie) gets {'fenced'} and moves
-- nothing.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  consumer name (the partition's one consumer)
-- ARGV[4]  COUNT of entries to read
-- ARGV[5]  ">" for new entries, "0" for the consumer's pending entries (replay)
-- Returns  {'fenced'}                           the lease is gone or held under another fence
--          {'ok', cursor, entries, deliveries}  entries = {{id, {field, value, ...}}, ...} in id
--                                               order (fields false for an entry deleted while
--                                               pending); deliveries = {id, count, ...} for a
--                                               replay, {} for new entries; cursor = the id of
--                                               the last entry read, or, when none was new, of
--                                               the stream's last entry ("0-0" when empty), so a
--                                               plain XREAD from it wakes on the next new entry
local lease, input = KEYS[1], KEYS[2]
local fence, group, consumer, count, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
local reply = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count,
                         'STREAMS', input, mode)
local entries = {}
if reply and type(reply[1]) == 'table' then
  entries = reply[1][2] or {}
elseif reply and reply[2] then
  entries = reply[2]  -- the embedded demo Redis (fakeredis) returns {key, entries} unnested
end
local deliveries = {}
if mode ~= '>' and #entries > 0 then
  local first, last = entries[1][1], entries[#entries][1]
  for _, row in ipairs(redis.call('XPENDING', input, group, first, last, #entries, consumer)) do
    deliveries[#deliveries + 1] = row[1]
    deliveries[#deliveries + 1] = row[4]
  end
end
local cursor = '0-0'
if #entries > 0 then
  cursor = entries[#entries][1]
else
  local newest = redis.call('XREVRANGE', input, '+', '-', 'COUNT', 1)
  if newest[1] then
    cursor = newest[1][1]
  end
end
return {'ok', cursor, entries, deliveries}
