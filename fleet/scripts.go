package fleet

import (
	"os"
	"strings"

	"github.com/redis/rueidis"
)

// NOTE: the Lua scripts.
//
// Every change of shared state is one script, so Redis applies it
// atomically, and times come from redis.call('TIME') so that every
// instance shares one clock. Numbers cross the script boundary as
// integers (Redis truncates Lua numbers in replies, and tostring of a
// large double loses digits): times are integer microseconds or
// milliseconds, formatted with %.0f when stored. Scripts run with EVALSHA
// and fall back to EVAL after NOSCRIPT (a restarted Redis has an empty
// script cache); none is retried by the client, so none runs twice.

// scriptLease is the GCRA of one client key, taking and returning tokens
// in one call (go-redis/redis_rate's semantics, batched).
//
// KEYS[1] the key's TAT (theoretical arrival time, µs)
// ARGV[1] T: µs per token (1e6 / rate)
// ARGV[2] tau: µs of burst (T × burst)
// ARGV[3] want: tokens to take (0: only return)
// ARGV[4] ret: unspent tokens to give back first
//
// Returns {grant, retry_us}: grant tokens were taken (TAT moved by
// grant × T); when want > 0 and none could be, retry_us is how long until
// one can (at most T). A stored TAT that is no number, or past now + tau,
// was not written by this script: it is read as now, or now + tau (found
// by review on 2026-12-06: a value SET by hand or by a broken instance
// made every Take a failed script call served by the fallback, or refused
// the client for ages with a Retry-After wrapped around int64).
var scriptLease = rueidis.NewLuaScript(`
local T = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local ret = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
-- a TAT this GCRA cannot have left (no number, NaN, past now + tau: a
-- foreign or broken writer) is taken as the most it can mean
if tat ~= tat or tat < now then tat = now end
if tat > now + tau then tat = now + tau end
if ret > 0 then
  tat = tat - ret * T
  if tat < now then tat = now end
end
local grant = 0
if want > 0 then
  grant = math.floor((now + tau - tat) / T)
  if grant > want then grant = want end
  if grant < 0 then grant = 0 end
  tat = tat + grant * T
end
if tat > now then
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
else
  redis.call('DEL', KEYS[1])
end
if want > 0 and grant == 0 then
  return {0, tat + T - tau - now}
end
return {grant, 0}
`)

// scriptHeartbeat records the instance and returns how many announced
// themselves within the last ARGV[2] milliseconds.
//
// KEYS[1] sorted set: instance → last heartbeat (ms)
// ARGV[1] instance name
// ARGV[2] staleness bound, ms
var scriptHeartbeat = rueidis.NewLuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return redis.call('ZCARD', KEYS[1])
`)

// taskLua is shared by the task scripts: key names and pruning. Every task
// key carries one hash tag, so the scripts touch one slot; KEYS[1] names a
// key of that slot (for routing), the scripts build the others from the
// prefix.
const taskLua = `
local P = ARGV[1]          -- key prefix, ending in "{a2a}:"
local TTL = tonumber(ARGV[2])
local function tkey(id) return P .. 't:' .. id end
local function ckey(c) return P .. 'c:' .. c end
local function okey(o) return P .. 'o:' .. o end -- an owner's tasks
local ALL, AGE = P .. 'all', P .. 'age'
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- drop a task and its index entries
local function drop(id, ctx, own)
  if ctx then redis.call('ZREM', ckey(ctx), id) end
  if own and own ~= '' then redis.call('ZREM', okey(own), id) end
  redis.call('ZREM', ALL, id)
  redis.call('ZREM', AGE, id)
  redis.call('DEL', tkey(id))
end
-- forget index entries of tasks that expired (their status time is past
-- the TTL, with a margin for clocks, and their hash is gone)
local function prune(zkey, limit)
  local cut = nowms() - TTL * 1000 - 5000
  local old = redis.call('ZRANGEBYSCORE', zkey, '-inf', string.format('%.0f', cut), 'LIMIT', 0, limit)
  for _, id in ipairs(old) do
    if redis.call('EXISTS', tkey(id)) == 0 then
      redis.call('ZREM', zkey, id)
      redis.call('ZREM', ALL, id)
      redis.call('ZREM', AGE, id)
    end
  end
end
local function touch(ctx, own)
  redis.call('EXPIRE', ALL, TTL + 60)
  redis.call('EXPIRE', AGE, TTL + 60)
  redis.call('EXPIRE', ckey(ctx), TTL + 60)
  if own and own ~= '' then redis.call('EXPIRE', okey(own), TTL + 60) end
end
local function final(s)
  return s == '3' or s == '4' or s == '5' or s == '7'
end
`

// scriptCreate stores a new task, evicting the oldest past the bound.
//
// ARGV: prefix, ttl (s), id, context, state, status ms, data, max tasks,
// owner ("" for none)
// Returns 1, or 0 when the id exists.
var scriptCreate = rueidis.NewLuaScript(taskLua + `
local id, ctx, st, ms, data, maxn, own = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9]
local k = tkey(id)
if redis.call('EXISTS', k) == 1 then return 0 end
redis.call('HSET', k, 'd', data, 's', st, 'c', ctx, 'v', 1, 'u', ms, 'o', own)
redis.call('EXPIRE', k, TTL)
redis.call('ZADD', ckey(ctx), ms, id)
if own ~= '' then redis.call('ZADD', okey(own), ms, id) end
redis.call('ZADD', ALL, ms, id)
redis.call('ZADD', AGE, string.format('%.0f', nowms()), id)
touch(ctx, own)
local over = redis.call('ZCARD', AGE) - maxn
if over > 0 then
  local gone = redis.call('ZPOPMIN', AGE, over)
  for i = 1, #gone, 2 do
    local old = gone[i]
    local h = redis.call('HMGET', tkey(old), 'c', 'o')
    drop(old, h[1], h[2])
  end
end
-- the indexes this task joined forget expired tasks too (found by review
-- on 2026-12-06: an owner's or a context's index was pruned only by a
-- listing of it, and an owner that kept creating tasks grew it for good)
prune(ALL, 16)
prune(ckey(ctx), 16)
if own ~= '' then prune(okey(own), 16) end
return 1
`)

// scriptUpdate is the check-and-set of a task.
//
// ARGV: prefix, ttl (s), id, expected version, state, status ms, data
// Returns 1 (stored), 0 (the version moved: read again), -1 (no such
// task), -2 (the stored task is final).
var scriptUpdate = rueidis.NewLuaScript(taskLua + `
local id, ver, st, ms, data = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local k = tkey(id)
local cur = redis.call('HMGET', k, 'v', 's', 'c', 'o')
if not cur[1] then return -1 end
if final(cur[2]) then return -2 end
if cur[1] ~= ver then return 0 end
redis.call('HSET', k, 'd', data, 's', st, 'v', tonumber(ver) + 1, 'u', ms)
redis.call('EXPIRE', k, TTL)
redis.call('ZADD', ckey(cur[3]), ms, id)
local own = cur[4] or ''
if own ~= '' then redis.call('ZADD', okey(own), ms, id) end
redis.call('ZADD', ALL, ms, id)
redis.call('EXPIRE', AGE, TTL + 60)
touch(cur[3], own)
return 1
`)

// scriptList returns one page of a context's tasks (or all tasks),
// newest status first, then id descending.
//
// ARGV: prefix, ttl (s), context ("" for all), cursor ms ("" for the
// first page), cursor id, page size, state ("0" for any), after ms
// ("-inf" for any), owner ("" for any), the most bytes of task data a
// page holds (a page holds one task at least)
// Returns {total, more, id1, ms1, data1, id2, ...}: more is 1 when a task
// follows the page.
var scriptList = rueidis.NewLuaScript(taskLua + `
local ctx, cms, cid, size, st, after, own = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
local maxb, bytes = tonumber(ARGV[10]), 0
-- the smallest index that holds every match: a context's tasks, an
-- owner's, or all; a task of another owner does not exist for the caller
local z, byOwner = ALL, false
if ctx ~= '' then z = ckey(ctx) elseif own ~= '' then z, byOwner = okey(own), true end
prune(z, 1000)
local function mine(st2, own2)
  return (st == '0' or st2 == st) and (own == '' or own2 == own)
end
local total = 0
if st == '0' and (own == '' or byOwner) then
  total = redis.call('ZCOUNT', z, after, '+inf')
else
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', z, after, '+inf')) do
    local h = redis.call('HMGET', tkey(id), 's', 'o')
    if h[1] and mine(h[1], h[2] or '') then total = total + 1 end
  end
end
local out = {total, 0}
local n = 0
local stale = {}
-- forget entries whose task is gone, after the walk (removing during it
-- would shift the offsets)
local function finish()
  for _, id in ipairs(stale) do
    redis.call('ZREM', z, id)
    redis.call('ZREM', ALL, id)
    redis.call('ZREM', AGE, id)
  end
  return out
end
local function take(id, ms)
  local h = redis.call('HMGET', tkey(id), 'd', 's', 'o')
  if not h[1] then
    stale[#stale + 1] = id
    return true
  end
  if not mine(h[2], h[3] or '') then return true end
  if n == size or (n > 0 and bytes + #h[1] > maxb) then out[2] = 1 return false end
  bytes = bytes + #h[1]
  n = n + 1
  out[#out + 1] = id
  out[#out + 1] = ms
  out[#out + 1] = h[1]
  return true
end
local max = '+inf'
if cms ~= '' then
  -- the rest of the cursor's millisecond: ids below the cursor's
  local tied = redis.call('ZRANGEBYSCORE', z, cms, cms)
  for i = #tied, 1, -1 do
    if tied[i] < cid then
      if not take(tied[i], cms) then return finish() end
    end
  end
  max = '(' .. cms
end
local off = 0
while true do
  local batch = redis.call('ZREVRANGEBYSCORE', z, max, after, 'WITHSCORES', 'LIMIT', off, 64)
  if #batch == 0 then break end
  for i = 1, #batch, 2 do
    if not take(batch[i], batch[i + 1]) then return finish() end
  end
  off = off + 64
end
return finish()
`)

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "rpcedge"
	}
	return h
}

// redactURL drops the password of a Redis URL for logs.
func redactURL(u string) string {
	at := strings.LastIndexByte(u, '@')
	if at < 0 {
		return u
	}
	scheme := strings.Index(u, "://")
	if scheme < 0 || scheme > at {
		return u
	}
	return u[:scheme+3] + "***" + u[at:]
}
