-- receipt: commit one change of an operation's receipt atomically: fence, the status machine
-- (CAS on the stored status, allowed transitions only, updatedAt >= createdAt, terminal
-- states never change), the idempotency index and bounded ledgers for a new operation, then
-- the receipt fields, the active-operation and approval indexes, the receipt log, the agent inbox, PUBLISH,
-- the reply, XACK and the session's sliding expiry together.  Never parses JSON: the receipt,
-- the job payload and the reply are opaque strings; scalars arrive as separate arguments.
-- KEYS[1]  lease hash of the partition (fencing: field fence)
-- KEYS[2]  input stream of the partition (XACK of ARGV[3])
-- KEYS[3]  operations hash of the session: st:/r:/c:/u:/sec:/job:/cap:<op>, req:<requestId>,
--          led:<ref digest> (operation ids of one document ref, space separated), count
-- KEYS[4]  receipt log stream of the session (field receipt), trimmed to ARGV[13] entries
-- KEYS[5]  active operations of the partition: sorted set of "<session> <op>" (queued, running)
-- KEYS[6]  agent inbox stream of the session (written only when ARGV[25] is not "")
-- KEYS[7]  reply list of the request (written only when ARGV[10] is not "")
-- KEYS[8]  approvals of the partition: sorted set of "<session> <op>" (awaiting_confirmation),
--          scored by when the approval expires (ARGV[29]); the reaper cancels those past it
-- KEYS[9..] other keys of the session whose expiry slides with ARGV[14] (a missing key stays missing)
-- ARGV[1]  caller's fence ("<epoch>:<owner>", as lease_acquire returned it)
-- ARGV[2]  consumer group name
-- ARGV[3]  input entry id ("": a change without an entry, e.g. by the reaper; nothing is acked)
-- ARGV[4]  operation id
-- ARGV[5]  expected stored status ("": the operation must not exist yet)
-- ARGV[6]  new status
-- ARGV[7]  new receipt JSON (stored, logged and published)
-- ARGV[8]  createdAt, Unix ms (stored for a new operation only)
-- ARGV[9]  updatedAt, Unix ms
-- ARGV[10] reply JSON ("": no reply)
-- ARGV[11] reply time-to-live in milliseconds
-- ARGV[12] pub/sub channel of the session's receipts (PUBLISH; on a Redis Cluster the script is
--          registered with SPUBLISH instead: see scripts.script_source)
-- ARGV[13] maximum entries of the receipt log
-- ARGV[14] session time-to-live in milliseconds for KEYS[3], KEYS[4], KEYS[6], KEYS[8..] ("0": never)
-- ARGV[15] secret the stored one must equal ("": not checked)
-- ARGV[16] secret to store ("": unchanged)
-- ARGV[17] job payload to store ("": unchanged)
-- ARGV[18] capability id to store ("": unchanged)
-- ARGV[19] member of KEYS[5] for this operation ("<session> <op>")
-- new operations only (ARGV[5] == ""):
-- ARGV[20] requestId field (req:<requestId>), ARGV[21] its value "<op> <content digest>"
-- ARGV[22] ledger field of the document ref (led:<digest>)
-- ARGV[23] operations allowed per document ref, ARGV[24] operations allowed per session
-- ARGV[25] agent prompt ("": no inbox entry), ARGV[26] documentRef JSON, ARGV[27] actionId,
-- ARGV[28] maximum entries of the agent inbox
-- ARGV[29] when the approval expires, Unix ms (a change to awaiting_confirmation only; else "0")
-- Returns  {'ok'}                  committed
-- nothing written by the other replies:
--          {'fenced'}              the lease is gone or held under another fence
--          {'gap'}                 an older entry of the partition is still pending
--          {'stale', status}       CAS failed: the stored status is not ARGV[5] ("" = missing)
--          {'duplicate', value}    the requestId is already indexed (value "<op> <digest>")
--          {'forbidden'}           the transition is not allowed by the status machine
--          {'ref_full'}            the ledger of the document ref is full
--          {'session_full'}        the session holds ARGV[24] operations
--          {'secret'}              the secret does not match
--          {'before_created'}      updatedAt would be earlier than createdAt
local lease, input, operations, log, active, inbox, reply_list, approvals =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local FIRST_EXPIRY_KEY = 9  -- KEYS[9..]: other keys of the session whose expiry slides
local fence, group, entry_id, op = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local expected, status, receipt, created_at, updated_at = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local reply, reply_ttl_ms, channel, log_max, session_ttl_ms = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local expected_secret, secret, job, capability, member = ARGV[15], ARGV[16], ARGV[17], ARGV[18], ARGV[19]
local request_field, request_value, ledger_field = ARGV[20], ARGV[21], ARGV[22]
local max_per_ref, max_per_session = ARGV[23], ARGV[24]
local prompt, ref_json, action_id, inbox_max = ARGV[25], ARGV[26], ARGV[27], ARGV[28]
local approval_expires = ARGV[29]

local allowed = {
  [''] = {queued = true, awaiting_confirmation = true, accepted = true},
  awaiting_confirmation = {queued = true, cancelled = true},
  queued = {running = true, cancelled = true, unknown = true, failed = true},
  running = {succeeded = true, failed = true, unknown = true},
}
if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
if entry_id ~= '' and redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return {'gap'}  -- an older entry of the partition is still pending: the caller replays it first
end
local stored = redis.call('HGET', operations, 'st:' .. op) or ''
if stored ~= expected then
  return {'stale', stored}
end
local next_states = allowed[stored]
if next_states == nil or not next_states[status] then
  return {'forbidden'}
end
if expected_secret ~= '' and redis.call('HGET', operations, 'sec:' .. op) ~= expected_secret then
  return {'secret'}
end
local created = created_at
if stored == '' then
  local indexed = redis.call('HGET', operations, request_field)
  if indexed then
    return {'duplicate', indexed}
  end
  local ledger = redis.call('HGET', operations, ledger_field)
  local used = 0
  if ledger then
    used = select(2, string.gsub(ledger, ' ', '')) + 1
  end
  if used >= tonumber(max_per_ref) then
    return {'ref_full'}
  end
  if tonumber(redis.call('HGET', operations, 'count') or '0') >= tonumber(max_per_session) then
    return {'session_full'}
  end
  redis.call('HSET', operations, request_field, request_value, ledger_field, ledger and (ledger .. ' ' .. op) or op,
    'c:' .. op, created)
  redis.call('HINCRBY', operations, 'count', 1)
else
  created = redis.call('HGET', operations, 'c:' .. op)
end
if tonumber(updated_at) < tonumber(created) then
  return {'before_created'}
end
redis.call('HSET', operations, 'st:' .. op, status, 'r:' .. op, receipt, 'u:' .. op, updated_at)
if secret ~= '' then
  redis.call('HSET', operations, 'sec:' .. op, secret)
end
if job ~= '' then
  redis.call('HSET', operations, 'job:' .. op, job)
end
if capability ~= '' then
  redis.call('HSET', operations, 'cap:' .. op, capability)
end
if status == 'queued' or status == 'running' then
  redis.call('ZADD', active, updated_at, member)
else
  redis.call('ZREM', active, member)
end
if status == 'awaiting_confirmation' then
  redis.call('ZADD', approvals, approval_expires, member)
elseif stored == 'awaiting_confirmation' then
  redis.call('ZREM', approvals, member)
end
redis.call('XADD', log, 'MAXLEN', log_max, '*', 'receipt', receipt)
if stored == '' and prompt ~= '' then
  redis.call('XADD', inbox, 'MAXLEN', inbox_max, '*', 'operationId', op, 'actionId', action_id,
    'documentRef', ref_json, 'prompt', prompt)
end
redis.call('PUBLISH', channel, receipt)
if reply ~= '' then
  redis.call('RPUSH', reply_list, reply)
  redis.call('PEXPIRE', reply_list, reply_ttl_ms)
end
for _, key in ipairs({operations, log, inbox}) do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', key)
  else
    redis.call('PEXPIRE', key, session_ttl_ms)
  end
end
for i = FIRST_EXPIRY_KEY, #KEYS do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', KEYS[i])
  else
    redis.call('PEXPIRE', KEYS[i], session_ttl_ms)
  end
end
if entry_id ~= '' then
  redis.call('XACK', input, group, entry_id)
end
return {'ok'}
