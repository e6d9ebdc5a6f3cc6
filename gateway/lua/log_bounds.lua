-- log_bounds: where each of a session's logs begins and ends, without sending any entry.
-- A gateway reads it when an event stream starts, to tell whether a client's cursor is still
-- inside the logs (every event after it is kept) or older than what they keep (a resync).
-- Read-only; the logs are trimmed from their oldest end only (never XDEL), so a log lost
-- nothing after a cursor at or past its first kept entry.
-- KEYS[1..n]  the session's log streams (frame log, receipt log, answer log)
-- Returns     per key {first_id, last_id, entries_added, length}: first_id and last_id "" for an
--             empty or missing stream; entries_added counts every entry ever added (so
--             entries_added > length means the oldest were trimmed)
local bounds = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    bounds[i] = {'', '', 0, 0}
  else
    local info = redis.call('XINFO', 'STREAM', key)
    local fields = {}
    for j = 1, #info, 2 do
      fields[info[j]] = info[j + 1]
    end
    local first, last = fields['first-entry'], fields['last-entry']
    bounds[i] = {first and first[1] or '', last and last[1] or '', fields['entries-added'] or 0,
                 fields['length'] or 0}
  end
end
return bounds
