-- receipt: commit one change of an operation's receipt atomically: fence, the status machine
-- (CAS on the stored status, allowed transitions only, updatedAt >= createdAt, terminal
-- states never change), the idempotency index and bounded ledgers for a new operation, then
-- the receipt fields, the active-operation index, the receipt log, the agent inbox, PUBLISH,
-- the reply, XACK and the session's sliding expiry together.  Never parses JSON: the receipt,
-- the job payload and the reply are opaque strings; scalars arrive as separate arguments.
-- KEYS[1]  lease hash of the partition (fencing: field epoch)
-- KEYS[2]  input stream of the partition (XACK of ARGV[3])
-- KEYS[3]  operations hash of the session: st:/r:/c:/u:/sec:/job:/cap:<op>, req:<requestId>,
--          led:<ref digest> (operation ids of one document ref, space separated), count
-- KEYS[4]  receipt log stream of the session (field receipt), trimmed to ARGV[13] entries
-- KEYS[5]  active operations of the partition: sorted set of "<session> <op>" (queued, running)
-- KEYS[6]  agent inbox stream of the session (written only when ARGV[24] is not "")
-- KEYS[7]  reply list of the request (written only when ARGV[10] is not "")
-- KEYS[8..] other keys of the session whose expiry slides with ARGV[14] (a missing key stays missing)
-- ARGV[1]  caller's fencing epoch
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
-- ARGV[12] pub/sub channel of the session's receipts
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
-- Returns  {1}              committed
--          {-1}             fenced: the lease is gone or has a later epoch (nothing written)
--          {-2, status}     CAS failed: the stored status is not ARGV[5] ("" = missing)
--          {-3, value}      the requestId is already indexed (value "<op> <digest>")
--          {-4}             the transition is not allowed by the status machine
--          {-5}             the ledger of the document ref is full
--          {-6}             the session holds ARGV[24] operations
--          {-7}             the secret does not match
--          {-8}             updatedAt would be earlier than createdAt
local allowed = {
  [''] = {queued = true, awaiting_confirmation = true, accepted = true},
  awaiting_confirmation = {queued = true, cancelled = true},
  queued = {running = true, cancelled = true, unknown = true, failed = true},
  running = {succeeded = true, failed = true, unknown = true},
}
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then
  return {-1}
end
local op = ARGV[4]
local stored = redis.call('HGET', KEYS[3], 'st:' .. op) or ''
if stored ~= ARGV[5] then
  return {-2, stored}
end
local next_states = allowed[stored]
if next_states == nil or not next_states[ARGV[6]] then
  return {-4}
end
if ARGV[15] ~= '' and redis.call('HGET', KEYS[3], 'sec:' .. op) ~= ARGV[15] then
  return {-7}
end
local created = ARGV[8]
if stored == '' then
  local indexed = redis.call('HGET', KEYS[3], ARGV[20])
  if indexed then
    return {-3, indexed}
  end
  local ledger = redis.call('HGET', KEYS[3], ARGV[22])
  local used = 0
  if ledger then
    used = select(2, string.gsub(ledger, ' ', '')) + 1
  end
  if used >= tonumber(ARGV[23]) then
    return {-5}
  end
  if tonumber(redis.call('HGET', KEYS[3], 'count') or '0') >= tonumber(ARGV[24]) then
    return {-6}
  end
  redis.call('HSET', KEYS[3], ARGV[20], ARGV[21], ARGV[22], ledger and (ledger .. ' ' .. op) or op,
    'c:' .. op, created)
  redis.call('HINCRBY', KEYS[3], 'count', 1)
else
  created = redis.call('HGET', KEYS[3], 'c:' .. op)
end
if tonumber(ARGV[9]) < tonumber(created) then
  return {-8}
end
redis.call('HSET', KEYS[3], 'st:' .. op, ARGV[6], 'r:' .. op, ARGV[7], 'u:' .. op, ARGV[9])
if ARGV[16] ~= '' then
  redis.call('HSET', KEYS[3], 'sec:' .. op, ARGV[16])
end
if ARGV[17] ~= '' then
  redis.call('HSET', KEYS[3], 'job:' .. op, ARGV[17])
end
if ARGV[18] ~= '' then
  redis.call('HSET', KEYS[3], 'cap:' .. op, ARGV[18])
end
if ARGV[6] == 'queued' or ARGV[6] == 'running' then
  redis.call('ZADD', KEYS[5], ARGV[9], ARGV[19])
else
  redis.call('ZREM', KEYS[5], ARGV[19])
end
redis.call('XADD', KEYS[4], 'MAXLEN', ARGV[13], '*', 'receipt', ARGV[7])
if stored == '' and ARGV[25] ~= '' then
  redis.call('XADD', KEYS[6], 'MAXLEN', ARGV[28], '*', 'operationId', op, 'actionId', ARGV[27],
    'documentRef', ARGV[26], 'prompt', ARGV[25])
end
redis.call('PUBLISH', ARGV[12], ARGV[7])
if ARGV[10] ~= '' then
  redis.call('RPUSH', KEYS[7], ARGV[10])
  redis.call('PEXPIRE', KEYS[7], ARGV[11])
end
for i = 3, #KEYS do
  if i ~= 5 and i ~= 7 then
    if ARGV[14] == '0' then
      redis.call('PERSIST', KEYS[i])
    else
      redis.call('PEXPIRE', KEYS[i], ARGV[14])
    end
  end
end
if ARGV[3] ~= '' then
  redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
end
return {1}
