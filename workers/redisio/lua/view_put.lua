-- view_put: replace one block's answer-view-state@1 record atomically: fence, tombstone, the
-- block is a final block with the digest the caller read, CAS on the stored revision, the
-- request id is new, the byte budgets; then the state, its revision, digest, size and basis,
-- the session's byte total, the request receipt (window of ARGV[15] receipts and ARGV[16]
-- bytes per block, the oldest dropped first), the reply, XACK and the sliding expiry.
-- Never parses JSON: the state, basis, receipt and reply are opaque strings; sizes are numbers.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  views hash of the session: bytes (state bytes of the session), and per record id
--          <principal>:<project>:<message>:<block>: st: state JSON, rev: revision, dig: schema
--          digest written under, sz: state bytes, bs: basis JSON, rw: request ids of the window
--          (oldest first, space separated), rb: receipt bytes, rr:<id>:<request id> receipt
-- KEYS[4]  answers hash of the session (read only: p:<m>:<b> phase, d:<m>:<b> digest)
-- KEYS[5]  tombstone of the session (exists: deleted, nothing is written)
-- KEYS[6]  reply list of the request
-- KEYS[7..] the session's keys whose expiry slides with ARGV[19] (KEYS[3], KEYS[4] included)
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
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
-- Returns  {'ok', revision}           written
-- nothing written by the other replies:
--          {'fenced'}                 the lease is gone or held under another fence
--          {'gap'}                    an older entry of the partition is still pending
--          {'deleted'}                the session was deleted
--          {'not_final'}              the block is not a final block with digest ARGV[6]
--          {'stale', revision}        the stored revision is not ARGV[7]
--          {'duplicate'}              the request id is already in the window
--          {'too_large'}              the state exceeds ARGV[13] bytes
--          {'over_budget', bytes}     the session would exceed ARGV[14] bytes
local lease, input, views, answers, tombstone, reply_list = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local FIRST_EXPIRY_KEY = 7  -- KEYS[7..]: the session's keys whose expiry slides
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local id, block_field, digest, expected_revision = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local state, size, basis, request_id, receipt = ARGV[8], tonumber(ARGV[9]), ARGV[10], ARGV[11], ARGV[12]
local max_state_bytes, max_session_bytes = tonumber(ARGV[13]), tonumber(ARGV[14])
local max_receipts, max_receipt_bytes = tonumber(ARGV[15]), tonumber(ARGV[16])
local reply, reply_ttl_ms, session_ttl_ms = ARGV[17], ARGV[18], ARGV[19]

if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return {'gap'}  -- an older entry of the partition is still pending: the caller replays it first
end
if redis.call('EXISTS', tombstone) == 1 then
  return {'deleted'}
end
if redis.call('HGET', answers, 'p:' .. block_field) ~= 'final'
    or redis.call('HGET', answers, 'd:' .. block_field) ~= digest then
  return {'not_final'}
end
local revision = redis.call('HGET', views, 'rev:' .. id) or '0'
if revision ~= expected_revision then
  return {'stale', revision}
end
local receipt_field = 'rr:' .. id .. ':' .. request_id
if redis.call('HEXISTS', views, receipt_field) == 1 then
  return {'duplicate'}
end
if size > max_state_bytes then
  return {'too_large'}
end
local total = tonumber(redis.call('HGET', views, 'bytes') or '0')
local new_total = total - tonumber(redis.call('HGET', views, 'sz:' .. id) or '0') + size
if new_total > max_session_bytes then
  return {'over_budget', total}
end
local new_revision = tonumber(revision) + 1
redis.call('HSET', views, 'st:' .. id, state, 'rev:' .. id, new_revision, 'dig:' .. id, digest,
  'sz:' .. id, size, 'bs:' .. id, basis, 'bytes', new_total, receipt_field, receipt)

-- The receipt window: append, then drop the oldest until both bounds hold (the newest stays).
local window = redis.call('HGET', views, 'rw:' .. id) or ''
local ids = {}
for request in string.gmatch(window, '%S+') do
  ids[#ids + 1] = request
end
ids[#ids + 1] = request_id
local receipt_bytes = tonumber(redis.call('HGET', views, 'rb:' .. id) or '0') + #receipt_field + #receipt
local first = 1
while #ids - first + 1 > 1 and (#ids - first + 1 > max_receipts or receipt_bytes > max_receipt_bytes) do
  local field = 'rr:' .. id .. ':' .. ids[first]
  receipt_bytes = receipt_bytes - #field - redis.call('HSTRLEN', views, field)
  redis.call('HDEL', views, field)
  first = first + 1
end
local kept = {}
for i = first, #ids do
  kept[#kept + 1] = ids[i]
end
redis.call('HSET', views, 'rw:' .. id, table.concat(kept, ' '), 'rb:' .. id, receipt_bytes)

redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
for i = FIRST_EXPIRY_KEY, #KEYS do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], session_ttl_ms)
  end
end
redis.call('XACK', input, group, entry_id)
return {'ok', new_revision}
