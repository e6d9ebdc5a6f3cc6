-- generation: the latest generation of the UI a sourceCallId opened (or of a uiId the caller
-- names), read in one round trip (a cold session's first patch: before this, three: the uiId,
-- the generation, its fields).
-- A read only: no fence (the caller is the partition's owner; the commit's CAS checks it).
-- Field names are the ones `workers/redisio/keys.py` defines, assembled from the parts the
-- caller passes (the uiId and the generation number are only known here).
-- When the record's snapshot digest is one the caller holds (among ARGV[4]'s), the checkpoint is
-- not read: its envelope field is sent in its place, and the caller makes it whole with the
-- snapshot it holds (workers/sessions/snapshots.py).  Then the checkpoint never enters Lua:
-- moving a 15 KB value into the script cost Redis ~23 us a read, a plain HGET of it ~2 us.
-- KEYS[1]  session hash: ARGV[1] -> uiId, ARGV[2] .. uiId -> latest generation of that uiId
-- KEYS[2]  generations hash of the session: fields "<uiId>:<generation>:<name>"
-- ARGV[1]  session hash field naming the uiId the sourceCallId opened ("src:<sourceCallId>"),
--          or "=" and the uiId itself (no session field starts with "=")
-- ARGV[2]  prefix of the session hash field of a uiId's latest generation ("ui:")
-- ARGV[3]  name prefix of the generation's call ledger fields ("call:"; fields call:1 .. call:<seq>)
-- ARGV[4]  the snapshot digests the caller holds, each followed by a space ("" for none)
-- ARGV[5]  name of the generation's envelope field ("envelope")
-- ARGV[6..] names of the generation's fields to read: the checkpoint's, its snapshot digest's,
--          then the others (seq, ...)
-- Returns  {}                         the sourceCallId opened nothing in this session (never
--                                     for a named uiId)
--          {uiId}                     it did, but the UI's generation is gone (expired)
--          {uiId, generation, cut, v..., d...}  the values of ARGV[6..] in order (false where
--                                     missing), then the digests of the ledger fields that
--                                     exist; cut 1 when the first value is the envelope field's,
--                                     not the checkpoint's, else 0
local session, generations = KEYS[1], KEYS[2]
local ui
if string.sub(ARGV[1], 1, 1) == '=' then
  ui = string.sub(ARGV[1], 2)
else
  ui = redis.call('HGET', session, ARGV[1])
end
if not ui then
  return {}
end
local number = redis.call('HGET', session, ARGV[2] .. ui)
if not number then
  return {ui}
end
local prefix = ui .. ':' .. number .. ':'
local fields = {prefix .. ARGV[7], prefix .. ARGV[5]}  -- the snapshot digest, the envelope
for i = 8, #ARGV do
  fields[#fields + 1] = prefix .. ARGV[i]
end
local values = redis.call('HMGET', generations, unpack(fields))
local digest, envelope = values[1], values[2]
local cut, checkpoint = 0, false
-- A digest is 64 hex digits: one stored otherwise (altered) matches nothing.
if envelope and digest and ARGV[4] ~= '' and string.len(digest) == 64 and not string.find(digest, '[^0-9a-f]')
    and string.find(ARGV[4], digest .. ' ', 1, true) then
  checkpoint, cut = envelope, 1
else
  checkpoint = redis.call('HGET', generations, prefix .. ARGV[6])
end
local reply = {ui, number, cut, checkpoint, digest}
for i = 3, #fields do
  reply[#reply + 1] = values[i]
end
-- The ledger: one field per accepted call, named by the seq of its frame (at most the frame
-- budget's 256; a record written before has none: its ledger is the `calls` field).
local seq = tonumber(redis.call('HGET', generations, prefix .. 'seq') or '0') or 0
if seq > 0 then
  local ledger = {}
  for n = 1, seq do
    ledger[n] = prefix .. ARGV[3] .. n
  end
  for _, ledger_digest in ipairs(redis.call('HMGET', generations, unpack(ledger))) do
    if ledger_digest then
      reply[#reply + 1] = ledger_digest
    end
  end
end
return reply
