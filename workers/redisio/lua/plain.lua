-- plain: store the validated document of a plain `intelligent_ui` call under its native call
-- id (never overwriting one), reply, XACK and refresh the session's sliding expiry.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK)
-- KEYS[3]  plain-document hash of the session: three fields per call (ARGV[4], ARGV[6], ARGV[8])
-- KEYS[4]  session hash (expiry only)
-- KEYS[5]  generations hash of the session (expiry only)
-- KEYS[6]  frame log stream of the session (expiry only)
-- KEYS[7]  reply list of the request
-- KEYS[8..] the session's other keys (actions, answers): only their expiry is refreshed, with KEYS[3..6]
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id
-- ARGV[4]  document field of the call (doc:<call>), ARGV[5] the document JSON (opaque)
-- ARGV[6]  uiId field of the call (ui:<call>), ARGV[7] the document's uiId
-- ARGV[8]  digest field of the call (sum:<call>), ARGV[9] the content digest of the call
-- ARGV[10] capacity: plain documents a session may hold
-- ARGV[11] reply JSON
-- ARGV[12] reply time-to-live in milliseconds
-- ARGV[13] session time-to-live in milliseconds, refreshed on KEYS[3..6] ("0": never expires)
-- Returns  'ok'      stored, replied and acked
--          'fenced'  the lease is gone or held under another fence (nothing written)
--          'gap'     an older entry of the partition is still pending (nothing written)
--          'exists'  the call id already holds a document (nothing written: the caller's view is stale)
--          'full'    the session holds ARGV[10] plain documents (nothing written)
local lease, input, plain, session, generations, frame_log, reply_list =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local fence, group, entry_id = ARGV[1], ARGV[2], ARGV[3]
local document_field, document, ui_field, ui_id = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local digest_field, digest, capacity = ARGV[8], ARGV[9], tonumber(ARGV[10])
local reply, reply_ttl_ms, session_ttl_ms = ARGV[11], ARGV[12], ARGV[13]

if redis.call('HGET', lease, 'fence') ~= fence then
  return 'fenced'
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return 'gap'  -- an older entry of the partition is still pending: the caller replays it first
end
if redis.call('HEXISTS', plain, digest_field) == 1 then
  return 'exists'
end
if redis.call('HLEN', plain) >= 3 * capacity then
  return 'full'
end
redis.call('HSET', plain, document_field, document, ui_field, ui_id, digest_field, digest)
redis.call('RPUSH', reply_list, reply)
redis.call('PEXPIRE', reply_list, reply_ttl_ms)
local sliding = {plain, session, generations, frame_log}
for i = 8, #KEYS do
  sliding[#sliding + 1] = KEYS[i]
end
for _, key in ipairs(sliding) do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', key)
  else
    redis.call('PEXPIRE', key, session_ttl_ms)
  end
end
redis.call('XACK', input, group, entry_id)
return 'ok'
