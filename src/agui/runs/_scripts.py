"""The Lua scripts of the Redis run log: each change to a run is one atomic script.

A run is three keys under the log's prefix: `run:<id>` (a hash: `state` live or ended, `owner`
the worker that runs it, `thread`, `identity` the owner of its thread, `lease` as the server's
clock in milliseconds, `last` frame id, `cancel`), `log:<id>` (a stream; one entry per batch of
frames, its id `0-<last frame id of the batch>`, its field `f` for a batch that leaves the run
live or `e` for the one that ends it, its value the frames' JSON joined by newlines, which
compact JSON never holds) and `busy:<thread id>` (the live run holding the thread, expiring with
the lease). A thread's record is `thread:<id>`, its wire JSON, and its owner `identity:<id>`
(kept at least as long as the thread's runs and record; a thread with a record or a live run
and no `identity` was written before owners existed, and is the shared space's). A run's `<id>`
is its key, `run_key(owner, run id)`; a value an agent keeps for a thread is `blob:<key>`, its
key `run_key(owner, thread id)`, set and taken with plain commands (`SET ... PX`, `GETDEL`).
Every key is the prefix, its kind, `:` and the id, the id last, so no id, whatever it holds,
names another's key. Times to keep a key are in milliseconds.

Scripts rather than pipelines because each decision reads and writes together: a worker must not
append to a run a reader has just called lost, and a run must not be called lost while its worker
renews it. A worker whose lease lapsed (a worker paused past it) finds its run lost when it next
appends or renews, as a reader would have: by then another run may hold the thread. The clock
is the server's (`TIME`), so the workers' clocks never need to agree.
"""

from __future__ import annotations

__all__ = ["ABANDON", "APPEND", "BEGIN", "CANCEL", "RENEW", "SETTLE"]

_NOW = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"""

_SETTLE = (
    _NOW
    + """
-- End a live run whose lease ran out with the lost frame; true when it did.
local function settle(run, log, prefix, run_id, frame, ttl, maxlen)
  local fields = redis.call('HMGET', run, 'state', 'lease', 'last', 'thread')
  if fields[1] ~= 'live' or tonumber(fields[2]) > now_ms() then
    return false
  end
  local last = tonumber(fields[3]) + 1
  redis.call('XADD', log, 'MINID', '0-' .. math.max(0, last - maxlen + 1), '0-' .. last, 'e', frame)
  redis.call('HSET', run, 'state', 'ended', 'last', last)
  redis.call('PEXPIRE', run, ttl)
  redis.call('PEXPIRE', log, ttl)
  local busy = prefix .. 'busy:' .. fields[4]
  if redis.call('GET', busy) == run_id then
    redis.call('DEL', busy)
  end
  return true
end
"""
)

BEGIN = (
    _NOW
    + """
-- KEYS: run, busy, identity, thread; ARGV: run key, thread id, worker, lease ms, ms to keep a
-- live run, the thread's owner as the caller has it
local owner = redis.call('GET', KEYS[3])
if not owner and (redis.call('EXISTS', KEYS[4]) == 1 or redis.call('EXISTS', KEYS[2]) == 1) then
  owner = ''  -- written before owners existed: the shared space's
end
if owner and owner ~= ARGV[6] then
  return {'owned', owner}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'held', ARGV[1]}
end
local holder = redis.call('GET', KEYS[2])
if holder then
  return {'held', holder}
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[4])
redis.call('HSET', KEYS[1], 'state', 'live', 'owner', ARGV[3], 'thread', ARGV[2],
  'identity', ARGV[6], 'lease', now_ms() + tonumber(ARGV[4]), 'last', 0, 'cancel', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[5]) then
  redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[5])
end
return false
"""
)

APPEND = (
    _SETTLE
    + """
-- KEYS: run, log, busy, thread, identity; ARGV: worker, frame count, frames, final, thread
-- JSON, ttl ms, maxlen, run id, ms to keep a live run, lost frame, prefix, the thread's owner
local fields = redis.call('HMGET', KEYS[1], 'state', 'owner', 'last', 'lease')
if fields[1] ~= 'live' or fields[2] ~= ARGV[1] then
  return 0
end
if tonumber(fields[4]) <= now_ms() then  -- lapsed: lost, even to its owner
  settle(KEYS[1], KEYS[2], ARGV[11], ARGV[8], ARGV[10], ARGV[6], tonumber(ARGV[7]))
  return 0
end
local last = tonumber(fields[3]) + tonumber(ARGV[2])
local field = ARGV[4] == '1' and 'e' or 'f'
redis.call('XADD', KEYS[2], 'MINID', '0-' .. math.max(0, last - tonumber(ARGV[7]) + 1),
  '0-' .. last, field, ARGV[3])
redis.call('HSET', KEYS[1], 'last', last)
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'ended')
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[6])
  redis.call('SET', KEYS[5], ARGV[12], 'PX', ARGV[6])
  if redis.call('GET', KEYS[3]) == ARGV[8] then
    redis.call('DEL', KEYS[3])
  end
elseif last == tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[9])
end
return 1
"""
)

RENEW = (
    _SETTLE
    + """
-- KEYS: run, log; ARGV: owner, lease ms, run id, prefix, lost frame, ttl ms, maxlen
if settle(KEYS[1], KEYS[2], ARGV[4], ARGV[3], ARGV[5], ARGV[6], tonumber(ARGV[7])) then
  return 'gone'
end
local fields = redis.call('HMGET', KEYS[1], 'state', 'owner', 'cancel', 'thread')
if fields[1] ~= 'live' or fields[2] ~= ARGV[1] then
  return 'gone'
end
redis.call('HSET', KEYS[1], 'lease', now_ms() + tonumber(ARGV[2]))
local busy = ARGV[4] .. 'busy:' .. fields[4]
local holder = redis.call('GET', busy)
if not holder or holder == ARGV[3] then
  redis.call('SET', busy, ARGV[3], 'PX', ARGV[2])
end
if fields[3] == '1' then
  return 'cancel'
end
return 'live'
"""
)

SETTLE = (
    _SETTLE
    + """
-- KEYS: run, log; ARGV: run id, lost frame, ttl ms, maxlen, prefix
return settle(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])) and 1 or 0
"""
)

ABANDON = (
    _SETTLE
    + """
-- KEYS: run, log; ARGV: run id, lost frame, ttl ms, maxlen, prefix, owner
local fields = redis.call('HMGET', KEYS[1], 'state', 'owner')
if fields[1] ~= 'live' or fields[2] ~= ARGV[6] then
  return 0
end
redis.call('HSET', KEYS[1], 'lease', 0)
return settle(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])) and 1 or 0
"""
)

CANCEL = (
    _SETTLE
    + """
-- KEYS: run, log; ARGV: run id, lost frame, ttl ms, maxlen, prefix, channel
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  return 'unknown'
end
if state ~= 'live' or settle(KEYS[1], KEYS[2], ARGV[5], ARGV[1], ARGV[2], ARGV[3],
    tonumber(ARGV[4])) then
  return 'ended'
end
redis.call('HSET', KEYS[1], 'cancel', 1)
redis.call('PUBLISH', ARGV[6], ARGV[1])
return 'accepted'
"""
)
