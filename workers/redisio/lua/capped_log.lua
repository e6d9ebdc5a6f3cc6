-- capped_log: the capped append shared by the scripts that keep a session's log (commit.lua's frame
-- log, answer.lua's answer log); `script_source` puts it where a script says `-- include: capped_log`.
--
-- capped_append(log, field, value, hash, hash_field, max_count, max_bytes): XADD {field: value} to
-- the stream `log`, then drop its oldest entries until it holds at most max_count entries whose
-- values hold at most max_bytes bytes in all (that sum is kept in field hash_field of hash); the
-- newest entry always stays.  Each dropped entry is read once: an XRANGE of as many entries as the
-- count cap drops (pages doubling while the byte cap drops more; at most PAGE_MAX entries a page, so
-- a cap lowered by far never holds a whole log in Lua), then one exact XTRIM MAXLEN to the entries
-- kept.  A full log drops one entry per append, and reading a page of 16 to find the
-- first one kept (as before) copied 16 frames into Lua on every commit (docs/decisions.md).
local PAGE_MAX = 64  -- entries a page: at most 64 maximal frames (~17 MB) in Lua at once

local function capped_append(log, field, value, hash, hash_field, max_count, max_bytes)
  redis.call('XADD', log, '*', field, value)
  local count = redis.call('XLEN', log)
  local bytes = redis.call('HINCRBY', hash, hash_field, #value)
  if count == 1 and bytes ~= #value then
    bytes = #value
    redis.call('HSET', hash, hash_field, bytes)
  end
  if count <= max_count and bytes <= max_bytes then
    return
  end
  local kept, start = count, '-'
  local page = math.min(math.max(count - max_count, 1), PAGE_MAX)
  while kept > 1 and (kept > max_count or bytes > max_bytes) do
    local rows = redis.call('XRANGE', log, start, '+', 'COUNT', page)
    if #rows == 0 then
      break
    end
    for _, row in ipairs(rows) do
      if kept == 1 or (kept <= max_count and bytes <= max_bytes) then
        break
      end
      kept = kept - 1
      bytes = bytes - #row[2][2]
    end
    start = '(' .. rows[#rows][1]
    page = math.min(page * 2, PAGE_MAX)
  end
  if kept == 1 then
    bytes = #value  -- only the newest is left: its size, whatever the sum said (it heals a drifted sum)
  end
  if kept < count then
    redis.call('XTRIM', log, 'MAXLEN', kept)
  end
  redis.call('HSET', hash, hash_field, math.max(bytes, 0))
end
