-- view_put: replace one block's answer-view-state@1 record atomically: fence, tombstone, the
-- block is a final block with the digest the caller read, CAS on the stored revision, the
-- request id is new, the byte budgets; then the state, its revision, digest, size and basis,
-- the session's byte total, the request receipt (window of ARGV[15] receipts and ARGV[16]
-- bytes per block, the oldest dropped first), the reply, XACK and the sliding expiry.
-- Never parses JSON: the state, basis, receipt and reply are opaque strings; sizes are numbers.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  views hash of the session: bytes (state bytes of the session), and per record id
--          <principal>:<project>:<message>:<block>: st: state JSON, rev: revision, dig: schema
--          digest written under, sz: state bytes, bs: basis JSON, rw: request ids of the window
--          (oldest first, space separated), rb: receipt bytes, rr:<id>:<request id> receipt
-- KEYS[4]  answers hash of the session (read only: p:<m>:<b> phase, d:<m>:<b> digest)
-- KEYS[5]  tombstone of the session (exists: deleted, nothing is written)
-- KEYS[6]  reply list of the request
-- KEYS[7..] the session's keys whose expiry slides with ARGV[19] (KEYS[3], KEYS[4] included)
-- ARGV[1]  caller's fencing epoch
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  record id
-- ARGV[5]  "<message>:<block>" of the block in KEYS[4]
-- ARGV[6]  the block's schema digest the caller read (the new record's dig)
-- ARGV[7]  expected stored revision ("0": never saved)
-- ARGV[8]  new state JSON, ARGV[9] its size in bytes
-- ARGV[10] basis JSON
-- ARGV[11] request id
-- ARGV[12] receipt ("<content digest> <result JSON>")
-- ARGV[13] maximum bytes of one state, ARGV[14] maximum state bytes of the session
-- ARGV[15] receipts kept per record, ARGV[16] receipt bytes kept per record
-- ARGV[17] reply JSON, ARGV[18] reply time-to-live in ms
-- ARGV[19] session time-to-live in ms ("0": never expires)
-- Returns  {1, revision}   written
--          {-1}            fenced (nothing written)
--          {-2}            the session was deleted
--          {-3}            the block is not a final block with digest ARGV[6]
--          {-4, revision}  the stored revision is not ARGV[7]
--          {-5}            the request id is already in the window
--          {-6}            the state exceeds ARGV[13] bytes
--          {-7, bytes}     the session would exceed ARGV[14] bytes
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
if redis.call('EXISTS', KEYS[5]) == 1 then
  return {-2}
end
local mb = ARGV[5]
if redis.call('HGET', KEYS[4], 'p:' .. mb) ~= 'final' or redis.call('HGET', KEYS[4], 'd:' .. mb) ~= ARGV[6] then
  return {-3}
end
local id = ARGV[4]
local revision = redis.call('HGET', KEYS[3], 'rev:' .. id) or '0'
if revision ~= ARGV[7] then
  return {-4, revision}
end
local receipt_field = 'rr:' .. id .. ':' .. ARGV[11]
if redis.call('HEXISTS', KEYS[3], receipt_field) == 1 then
  return {-5}
end
local size = tonumber(ARGV[9])
if size > tonumber(ARGV[13]) then
  return {-6}
end
local total = tonumber(redis.call('HGET', KEYS[3], 'bytes') or '0')
local new_total = total - tonumber(redis.call('HGET', KEYS[3], 'sz:' .. id) or '0') + size
if new_total > tonumber(ARGV[14]) then
  return {-7, total}
end
local new_revision = tonumber(revision) + 1
redis.call('HSET', KEYS[3], 'st:' .. id, ARGV[8], 'rev:' .. id, new_revision, 'dig:' .. id, ARGV[6],
  'sz:' .. id, size, 'bs:' .. id, ARGV[10], 'bytes', new_total, receipt_field, ARGV[12])

-- The receipt window: append, then drop the oldest until both bounds hold (the newest stays).
local window = redis.call('HGET', KEYS[3], 'rw:' .. id) or ''
local ids = {}
for request in string.gmatch(window, '%S+') do
  ids[#ids + 1] = request
end
ids[#ids + 1] = ARGV[11]
local receipt_bytes = tonumber(redis.call('HGET', KEYS[3], 'rb:' .. id) or '0') + #receipt_field + #ARGV[12]
local first = 1
while #ids - first + 1 > 1 and (#ids - first + 1 > tonumber(ARGV[15]) or receipt_bytes > tonumber(ARGV[16])) do
  local field = 'rr:' .. id .. ':' .. ids[first]
  receipt_bytes = receipt_bytes - #field - redis.call('HSTRLEN', KEYS[3], field)
  redis.call('HDEL', KEYS[3], field)
  first = first + 1
end
local kept = {}
for i = first, #ids do
  kept[#kept + 1] = ids[i]
end
redis.call('HSET', KEYS[3], 'rw:' .. id, table.concat(kept, ' '), 'rb:' .. id, receipt_bytes)

redis.call('RPUSH', KEYS[6], ARGV[17])
redis.call('PEXPIRE', KEYS[6], ARGV[18])
for i = 7, #KEYS do
  if ARGV[19] == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], ARGV[19])
  end
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
return {1, new_revision}
