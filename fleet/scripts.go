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

// taskLua is shared by the task scripts: key names, the indexes of a
// task, and pruning. Every task key carries one hash tag, so the scripts
// touch one slot; KEYS[1] names a key of that slot (for routing), the
// scripts build the others from the prefix.
//
// A task is in one sorted set (scored by its status ms) per scope a
// ListTasks can name: all tasks, its context, its owner, its context and
// owner, each alone and with its state. A listing then reads the one
// index that holds exactly its matches: its total is a ZCOUNT and its page
// a range read, whatever the scope's size (the listings with a status
// filter, or with a context and an owner, used to walk the whole scope
// with an HMGET per task: 3 to 8 µs a task, past the fleet's call
// timeout from some 30,000 to 80,000 tasks in scope).
//
// Key names (st a state number, so without ':'; #own the owner's length
// in bytes, so that owner "a:b" in context "c" and owner "a" in context
// "b:c" do not share a key):
//
//	all, s:<st>                       all tasks
//	c:<ctx>, cs:<st>:<ctx>            a context's
//	o:<own>, os:<st>:<own>            an owner's
//	co:<#own>:<own>:<ctx>, cos:<st>:<#own>:<own>:<ctx>
//	                                  an owner's in one context
//
// A task of state 0 (unspecified; no listing filters on it) is in no
// state index; a task without an owner in no owner index; a task without
// a context (none should exist) in no context index.
const taskLua = `
local P = ARGV[1]          -- key prefix, ending in "{a2a}:"
local TTL = tonumber(ARGV[2])
local function tkey(id) return P .. 't:' .. id end
local ALL, AGE = P .. 'all', P .. 'age'
-- the index of one scope: c context, o owner ('' for any), s state ('0'
-- for any)
local function zkey(c, o, s)
  if o == '' then
    if c == '' then
      if s == '0' then return ALL end
      return P .. 's:' .. s
    end
    if s == '0' then return P .. 'c:' .. c end
    return P .. 'cs:' .. s .. ':' .. c
  end
  if c == '' then
    if s == '0' then return P .. 'o:' .. o end
    return P .. 'os:' .. s .. ':' .. o
  end
  local co = #o .. ':' .. o .. ':' .. c
  if s == '0' then return P .. 'co:' .. co end
  return P .. 'cos:' .. s .. ':' .. co
end
-- every index a task of context c, owner o and state s is in (nil counts
-- as ''/'0'): one per subset of its known attributes
local function idxs(c, o, s)
  c, o, s = c or '', o or '', s or '0'
  local out = {}
  for _, cc in ipairs(c == '' and {''} or {'', c}) do
    for _, oo in ipairs(o == '' and {''} or {'', o}) do
      for _, ss in ipairs(s == '0' and {'0'} or {'0', s}) do
        out[#out + 1] = zkey(cc, oo, ss)
      end
    end
  end
  return out
end
-- Redis's clock, read once per script (a create prunes up to 8 indexes)
local now_
local function nowms()
  if not now_ then
    local t = redis.call('TIME')
    now_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_
end
-- drop a task and its index entries
local function drop(id, ctx, own, st)
  for _, z in ipairs(idxs(ctx, own, st)) do redis.call('ZREM', z, id) end
  redis.call('ZREM', AGE, id)
  redis.call('DEL', tkey(id))
end
-- forget index entries of tasks that expired (their status time is past
-- the TTL, with a margin for clocks, and their hash is gone); the entries
-- of such a task in indexes other than zkey, ALL and AGE are left to the
-- prune of those (a create prunes every index it joins, a listing the
-- one it reads), as its context, owner and state went with its hash
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
-- keep a task's indexes TTL past its last change (an index key whose
-- entries all expired then goes by itself)
local function touch(ctx, own, st)
  redis.call('EXPIRE', AGE, TTL + 60)
  for _, z in ipairs(idxs(ctx, own, st)) do redis.call('EXPIRE', z, TTL + 60) end
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
local mine = idxs(ctx, own, st)
for _, z in ipairs(mine) do redis.call('ZADD', z, ms, id) end
redis.call('ZADD', AGE, string.format('%.0f', nowms()), id)
touch(ctx, own, st)
local over = redis.call('ZCARD', AGE) - maxn
if over > 0 then
  local gone = redis.call('ZPOPMIN', AGE, over)
  for i = 1, #gone, 2 do
    local old = gone[i]
    local h = redis.call('HMGET', tkey(old), 'c', 'o', 's')
    drop(old, h[1], h[2], h[3])
  end
end
-- the indexes this task joined forget expired tasks too (found by review
-- on 2026-12-06: an owner's or a context's index was pruned only by a
-- listing of it, and an owner that kept creating tasks grew it for good)
for _, z in ipairs(mine) do prune(z, 16) end
return 1
`)

// scriptUpdate is the check-and-set of a task. A change of state moves
// the task from the old state's indexes to the new one's.
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
local ctx, own = cur[3] or '', cur[4] or ''
local now = {}
for _, z in ipairs(idxs(ctx, own, st)) do
  redis.call('ZADD', z, ms, id)
  now[z] = true
end
if (cur[2] or '0') ~= st then
  for _, z in ipairs(idxs(ctx, own, cur[2])) do
    if not now[z] then redis.call('ZREM', z, id) end
  end
end
touch(ctx, own, st)
return 1
`)

// scriptList returns one page of the tasks of a scope, newest status
// first, then id descending.
//
// ARGV: prefix, ttl (s), context ("" for all), cursor ms ("" for the
// first page), cursor id, page size, state ("0" for any), after ms
// ("-inf" for any), owner ("" for any), the most bytes of task data a
// page holds (a page holds one task at least)
// Returns {total, more, id1, ms1, data1, id2, ...}: more is 1 when a task
// follows the page.
//
// The scope's index holds exactly its matches (see taskLua), so the total
// is its ZCOUNT and the page walk reads the page's entries plus the stale
// ones it meets (each forgotten when met: a hash that expired; or, should
// an expired task's id be created again with other attributes, a task
// that no longer matches this index). A task written before the state
// and (context, owner) indexes existed is in none of them until its next
// update: it is missing from those listings meanwhile (see doc.go).
var scriptList = rueidis.NewLuaScript(taskLua + `
local ctx, cms, cid, size, st, after, own = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
local maxb, bytes = tonumber(ARGV[10]), 0
local z = zkey(ctx, own, st)
prune(z, 1000)
local total = redis.call('ZCOUNT', z, after, '+inf')
local out = {total, 0}
local n = 0
local stale, foreign = {}, {}
-- forget entries whose task is gone or does not match, after the walk
-- (removing during it would shift the offsets); a task in z was in every
-- index of a scope wider than z's too
local function finish()
  for _, id in ipairs(stale) do
    for _, k in ipairs(idxs(ctx, own, st)) do redis.call('ZREM', k, id) end
    redis.call('ZREM', AGE, id)
  end
  for _, id in ipairs(foreign) do redis.call('ZREM', z, id) end
  return out
end
local function take(id, ms)
  local h = redis.call('HMGET', tkey(id), 'd', 's', 'o', 'c')
  if not h[1] then
    stale[#stale + 1] = id
    return true
  end
  if (st ~= '0' and h[2] ~= st) or (own ~= '' and h[3] ~= own) or (ctx ~= '' and h[4] ~= ctx) then
    foreign[#foreign + 1] = id
    return true
  end
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
