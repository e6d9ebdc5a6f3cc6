-- generation: the latest generation of the UI a sourceCallId opened (or of a uiId the caller
-- names), read in one round trip (a cold session's first patch: before this, three: the uiId,
-- the generation, its fields).
-- A read only: no fence (the caller is the partition's owner; the commit's CAS checks it).
-- Field names are the ones `workers/redisio/keys.py` defines, assembled from the parts the
-- caller passes (the uiId and the generation number are only known here).
-- KEYS[1]  session hash: ARGV[1] -> uiId, ARGV[2] .. uiId -> latest generation of that uiId
-- KEYS[2]  generations hash of the session: fields "<uiId>:<generation>:<name>"
-- ARGV[1]  session hash field naming the uiId the sourceCallId opened ("src:<sourceCallId>"),
--          or "=" and the uiId itself (no session field starts with "=")
-- ARGV[2]  prefix of the session hash field of a uiId's latest generation ("ui:")
-- ARGV[3]  name prefix of the generation's call ledger fields ("call:"; fields call:1 .. call:<seq>)
-- ARGV[4..] names of the generation's fields to read (checkpoint, seq, ...)
-- Returns  {}                         the sourceCallId opened nothing in this session (never
--                                     for a named uiId)
--          {uiId}                     it did, but the UI's generation is gone (expired)
--          {uiId, generation, v..., d...}  the values of ARGV[4..] in order (false where missing),
--                                     then the digests of the ledger fields that exist
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
local fields = {}
for i = 4, #ARGV do
  fields[#fields + 1] = prefix .. ARGV[i]
end
local reply = {ui, number}
for _, value in ipairs(redis.call('HMGET', generations, unpack(fields))) do
  reply[#reply + 1] = value
end
-- The ledger: one field per accepted call, named by the seq of its frame (at most the frame
-- budget's 256; a record written before has none: its ledger is the `calls` field).
local seq = tonumber(redis.call('HGET', generations, prefix .. 'seq') or '0') or 0
if seq > 0 then
  local ledger = {}
  for n = 1, seq do
    ledger[n] = prefix .. ARGV[3] .. n
  end
  for _, digest in ipairs(redis.call('HMGET', generations, unpack(ledger))) do
    if digest then
      reply[#reply + 1] = digest
    end
  end
end
return reply
