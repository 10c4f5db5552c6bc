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
// ARGV[4] ret: unspent tokens to give back first; negative: tokens to
// charge (requests admitted without Redis, by the per-instance share),
// up to the whole burst
//
// Returns {grant, retry_us, used_us}: grant tokens were taken (TAT moved
// by grant × T); when want > 0 and none could be, retry_us is how long
// until one can (at most T); used_us is how much of the burst is spent
// after the call (TAT − now, 0 to tau), which the instance's share
// follows. A stored TAT that is no number, or past now + tau,
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
elseif ret < 0 then
  tat = tat - ret * T
  if tat > now + tau then tat = now + tau end
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
  return {0, tat + T - tau - now, tat - now}
end
return {grant, 0, tat - now}
`)

// scriptHeartbeat records the instance and returns how many instances
// are alive. Each member is scored by its beat plus its own staleness
// bound, and dropped once that score is a caller's bound in the past: an
// instance counts for at least 5 of its own heartbeats, whatever the
// caller's. Scored by the beat alone and judged by the caller's bound,
// instances with different heartbeats (a change rolled out one instance
// at a time) dropped each other between beats and counted a smaller
// fleet, a larger share each with Redis down (found by review on
// 2026-12-06). A dead instance may count up to both bounds: a smaller
// share, the safe side. Members an older release scored by the beat
// alone are judged as that release judged them.
//
// KEYS[1] sorted set: instance → its beat plus its bound (ms)
// ARGV[1] the instance's member (its name and a random suffix)
// ARGV[2] its staleness bound, ms (5 of its heartbeats)
var scriptHeartbeat = rueidis.NewLuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stale = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], string.format('%.0f', now + stale), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('(%.0f', now - stale))
local p = redis.call('PTTL', KEYS[1])
if p < stale * 2 then redis.call('PEXPIRE', KEYS[1], stale * 2) end
return redis.call('ZCARD', KEYS[1])
`)

// taskLua is shared by the task scripts: key names, the indexes of a
// task, expiry and eviction. Every task key carries one hash tag, so the
// scripts touch one slot; KEYS[1] names a key of that slot (for routing),
// the scripts build the others from the prefix.
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
// "b:c" do not share a key; ctx and own are keyPart's forms: a context
// or owner over 64 bytes is named by "#" and its SHA-256 in hex):
//
//	t:<id>                            the task's hash
//	all, s:<st>                       all tasks
//	c:<ctx>, cs:<st>:<ctx>            a context's
//	o:<own>, os:<st>:<own>            an owner's
//	co:<#own>:<own>:<ctx>, cos:<st>:<#own>:<own>:<ctx>
//	                                  an owner's in one context
//	oa:<own>                          an owner's by creation (Redis ms),
//	                                  for its share (TaskOptions.MaxOwnerTasks)
//	age                               every task by creation (Redis ms)
//	exp                               every task by the Redis ms its hash
//	                                  expires (its last change + TTL)
//	meta                              hash: id → "<st>:<#own>:<own><ctx>",
//	                                  the indexes of the task
//
// A task of state 0 (unspecified; no listing filters on it) is in no
// state index; a task without an owner in no owner index; a task without
// a context (none should exist) in no context index.
//
// Expiry: a task's hash goes with its TTL; exp and meta, which do not,
// say when and from which indexes to forget it. reap takes the due
// entries of exp (a bounded number a call: every create, update and
// listing reaps some, and each instance's reaper, scriptReap, the rest
// every second) and removes the tasks from every index (found by review
// on 2026-12-06: indexes were pruned only when a create joined them or a
// listing read them, by status time, so the indexes of a state reached
// by updates grew for good, and live tasks with old status times blocked
// the prune). A task written by a release without exp (before
// 2026-12-07) is added to it by its next update, or by scriptReap's walk
// over age.
const taskLua = `
local P = ARGV[1]          -- key prefix, ending in "{a2a}:"
local TTL = tonumber(ARGV[2])
local function tkey(id) return P .. 't:' .. id end
local ALL, AGE, EXP, META = P .. 'all', P .. 'age', P .. 'exp', P .. 'meta'
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
-- an owner's tasks by creation
local function oakey(o) return P .. 'oa:' .. o end
-- every index a task of context c, owner o and state s is in (nil or
-- false counts as ''/'0'): one per subset of its known attributes
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
-- Redis's clock, read once per script
local now_
local function nowms()
  if not now_ then
    local t = redis.call('TIME')
    now_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_
end
-- a task's entry in meta, and back (nil for a malformed one): its
-- context, owner, state and the bytes of its data counted in TB and OB
-- (an entry without them, "s:#o:oc", an older release's: none counted)
local function menc(c, o, s, b)
  c, o, s = c or '', o or '', s or '0'
  local m = s .. ':' .. #o .. ':' .. o .. c
  if b and b > 0 then return '=' .. b .. ':' .. m end
  return m
end
local function mdec(m)
  local b = 0
  if string.sub(m, 1, 1) == '=' then
    local k = string.find(m, ':', 2, true)
    if not k then return nil end
    b = tonumber(string.sub(m, 2, k - 1)) or 0
    m = string.sub(m, k + 1)
  end
  local i = string.find(m, ':', 1, true)
  if not i then return nil end
  local j = string.find(m, ':', i + 1, true)
  if not j then return nil end
  local n = tonumber(string.sub(m, i + 1, j - 1))
  if not n then return nil end
  return string.sub(m, j + n + 1), string.sub(m, j + 1, j + n), string.sub(m, 1, i - 1), b
end
-- the bytes of task data stored: TB in all, OB per owner (a field
-- dropped when it reaches 0); count adds d to owner o's and the total
local TB, OB = P .. 'tb', P .. 'ob'
local function count(o, d)
  if d == 0 then return end
  if redis.call('INCRBY', TB, d) < 0 then redis.call('SET', TB, 0) end
  if o and o ~= '' and redis.call('HINCRBY', OB, o, d) <= 0 then redis.call('HDEL', OB, o) end
end
-- forget tasks: items are {id, context, owner, state, bytes} (unknown
-- attributes nil: then only ALL); one ZREM per index for all of them,
-- and their bytes taken off the sums. del: delete their hashes too.
local function forget(items, del)
  if #items == 0 then return end
  local byk, order, ids, byo = {}, {}, {}, {}
  for _, it in ipairs(items) do
    ids[#ids + 1] = it[1]
    local zs = idxs(it[2], it[3], it[4])
    if it[3] and it[3] ~= '' then zs[#zs + 1] = oakey(it[3]) end
    for _, z in ipairs(zs) do
      local l = byk[z]
      if not l then
        l = {}
        byk[z] = l
        order[#order + 1] = z
      end
      l[#l + 1] = it[1]
    end
    if it[5] and it[5] > 0 then
      local o = it[3] or ''
      byo[o] = (byo[o] or 0) + it[5]
    end
  end
  for _, z in ipairs(order) do redis.call('ZREM', z, unpack(byk[z])) end
  redis.call('ZREM', AGE, unpack(ids))
  redis.call('ZREM', EXP, unpack(ids))
  redis.call('HDEL', META, unpack(ids))
  if del then
    local keys = {}
    for i, id in ipairs(ids) do keys[i] = tkey(id) end
    redis.call('DEL', unpack(keys))
  end
  for o, b in pairs(byo) do count(o, -b) end
end
-- the attributes meta holds for each of ids ({id} when it holds none)
local function known(ids)
  local items = {}
  if #ids == 0 then return items end
  local ms = redis.call('HMGET', META, unpack(ids))
  for i, id in ipairs(ids) do
    if ms[i] then
      local c, o, s, b = mdec(ms[i])
      items[i] = {id, c, o, s, b}
    else
      items[i] = {id}
    end
  end
  return items
end
-- a task's hash expires TTL after this change: say so in exp and meta
-- (b: the bytes of its data counted in the sums)
local function expires(id, c, o, s, ttlms, b)
  redis.call('ZADD', EXP, string.format('%.0f', nowms() + ttlms), id)
  redis.call('HSET', META, id, menc(c, o, s, b))
end
-- forget up to limit tasks whose hash expired; true when more may be due
local function reap(limit)
  local now = nowms()
  local due = redis.call('ZRANGEBYSCORE', EXP, '-inf', string.format('%.0f', now), 'LIMIT', 0, limit)
  if #due == 0 then return false end
  local gone = {}
  for _, id in ipairs(due) do
    local pt = redis.call('PTTL', tkey(id))
    if pt == -2 then
      gone[#gone + 1] = id
    else
      -- alive: its TTL was renewed by a writer that does not keep exp
      -- (an older release): due again when it expires
      if pt < 0 then pt = TTL * 1000 end
      redis.call('ZADD', EXP, string.format('%.0f', now + pt), id)
    end
  end
  forget(known(gone), false)
  return #due == limit
end
-- evict tasks by id, from every index: their attributes and bytes as
-- meta holds them (a task an older release wrote, missing from meta: as
-- its hash holds them, no bytes counted)
local function evictIds(ids)
  local items = known(ids)
  for i, it in ipairs(items) do
    if it[2] == nil then
      local h = redis.call('HMGET', tkey(it[1]), 'c', 'o', 's')
      if h[3] then items[i] = {it[1], h[1], h[2], h[3]} end
    end
  end
  forget(items, true)
end
-- evict the n oldest tasks by creation
local function evict(n)
  if n <= 0 then return end
  local popped = redis.call('ZPOPMIN', AGE, n)
  local ids = {}
  for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
  evictIds(ids)
end
-- evict the n oldest tasks of owner o by creation, but keep; returns how
-- many
local function evictOwn(o, keep, n)
  if n <= 0 then return 0 end
  local ids = {}
  for _, id in ipairs(redis.call('ZRANGE', oakey(o), 0, n)) do
    if id ~= keep and #ids < n then ids[#ids + 1] = id end
  end
  if #ids == 0 then return 0 end
  -- (forget drops them from oa:<o> when it knows their owner; an entry
  -- whose hash and meta are gone is dropped here)
  redis.call('ZREM', oakey(o), unpack(ids))
  evictIds(ids)
  return #ids
end
-- evict the oldest task by creation but keep; returns how many (0 or 1)
local function evictOldest(keep)
  local ids = {}
  for _, id in ipairs(redis.call('ZRANGE', AGE, 0, 1)) do
    if id ~= keep and #ids == 0 then ids[1] = id end
  end
  if #ids == 0 then return 0 end
  redis.call('ZREM', AGE, ids[1])
  evictIds(ids)
  return 1
end
-- make room for need more bytes of owner o before a write of task keep
-- (nil for a new task): past a byte bound, first forget expired tasks
-- not yet reaped (their bytes still count), then evict the owner's
-- oldest while o would be over maxo, then the oldest of all while the
-- total would be over maxt, never keep, at most budget tasks in all.
-- Returns what is left of the budget and whether the write fits; when it
-- does not, the write is refused and the next one goes on from there (a
-- create evicting 64 tasks of 100 bytes to store one of 1 MiB went past
-- its owner's bound, found by review on 2026-12-06).
local function room(keep, o, need, maxt, maxo, budget)
  if need <= 0 then return budget, true end
  local function sums()
    local ob = 0
    if o ~= '' then ob = tonumber(redis.call('HGET', OB, o) or '0') end
    return tonumber(redis.call('GET', TB) or '0'), ob
  end
  local t, ob = sums()
  if t + need <= maxt and (o == '' or ob + need <= maxo) then return budget, true end
  -- expired tasks first: a write must not evict a live task for the
  -- bytes of one that is gone (found by review on 2026-12-06)
  reap(budget)
  t, ob = sums()
  while o ~= '' and ob + need > maxo and budget > 0 do
    if evictOwn(o, keep, 1) == 0 then break end
    budget = budget - 1
    t, ob = sums()
  end
  while t + need > maxt and budget > 0 do
    if evictOldest(keep) == 0 then break end
    budget = budget - 1
    t, ob = sums()
  end
  return budget, t + need <= maxt and (o == '' or ob + need <= maxo)
end
-- extend gives k at least secs to live, never less than it has: the
-- indexes are shared by instances whose TTLs may differ, and a shorter
-- one must not cut the life of a longer one's tasks (found by review on
-- 2026-12-06). (PTTL and a comparison rather than EXPIRE's NX and GT
-- options, which need Redis 7.)
local function extend(k, secs)
  local p = redis.call('PTTL', k)
  if p ~= -2 and p < secs * 1000 then redis.call('EXPIRE', k, secs) end
end
-- keep a task's indexes TTL past its last change (an index key whose
-- entries all expired then goes by itself)
local function touch(c, o, s)
  extend(AGE, TTL + 60)
  extend(EXP, TTL + 60)
  extend(META, TTL + 60)
  -- the sums live as long as the entries that take bytes off them (they
  -- outlived an outage of a minute with bytes of tasks long gone: found
  -- by review on 2026-12-06)
  extend(TB, TTL + 60)
  extend(OB, TTL + 60)
  for _, z in ipairs(idxs(c, o, s)) do extend(z, TTL + 60) end
  if o and o ~= '' then extend(oakey(o), TTL + 60) end
end
local function final(s)
  return s == '3' or s == '4' or s == '5' or s == '7'
end
`

// Bounds of the task scripts' work per call (see doc.go's Security).
const (
	// evictPerCreate is the most tasks one create evicts past MaxTasks;
	// a larger excess (MaxTasks lowered) goes over the next creates
	// (found by review on 2026-12-06: 20,000 → 100 in one script held
	// Redis for 0.3 s).
	evictPerCreate = 64
	// reapPerWrite is the most expired tasks a create or an update
	// forgets, reapPerList a listing (before it counts); the reaper
	// takes reapPerCall a call.
	reapPerWrite = 16
	reapPerList  = 64
	reapPerCall  = 256
	// sweepPerCall is how many tasks of age one reaper call looks at for
	// tasks of an older release missing from exp.
	sweepPerCall = 256
	// listSkip is the most entries a listing passes over that it does
	// not list (tasks expired but not yet reaped, or no longer matching):
	// past it the page ends, short or empty, with a next page token
	// (found by review on 2026-12-06: a page walked 30,000 expired tasks
	// of one owner, 0.5 s of Redis).
	listSkip = 256
)

// scriptCreate stores a new task, evicting past the bounds (at most
// evictPerCreate in all: first, to make room for its bytes, expired
// tasks and the owner's oldest past the owner's bytes and the oldest of
// all past the total bytes, then the oldest of its owner past the
// owner's share, then the oldest of all past max tasks) and forgetting
// expired ones (at most reapPerWrite).
//
// ARGV: prefix, ttl (s), id, context (keyPart), state, status ms, data,
// max tasks, owner (keyPart; "" for none), evictions, reaps, max tasks
// of an owner, max bytes in all, max bytes of an owner
// Returns 1, 0 when the id exists, or -3 when the evictions allowed did
// not make room for its bytes (nothing written; the next write goes on).
var scriptCreate = rueidis.NewLuaScript(taskLua + `
local id, c, st, ms, data, maxn, o = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9]
local k = tkey(id)
if redis.call('EXISTS', k) == 1 then return 0 end
-- an id that expired unreaped (ids are random: should not happen) is
-- forgotten before it is used again
local prev = redis.call('HGET', META, id)
if prev then forget(known({id}), false) end
local budget, fits = room(nil, o, #data, tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[10]))
if not fits then return -3 end
redis.call('HSET', k, 'd', data, 's', st, 'c', c, 'v', 1, 'u', ms, 'o', o)
redis.call('EXPIRE', k, TTL)
for _, z in ipairs(idxs(c, o, st)) do redis.call('ZADD', z, ms, id) end
if o ~= '' then
  redis.call('ZADD', oakey(o), string.format('%.0f', nowms()), id)
  local own = redis.call('ZCARD', oakey(o)) - tonumber(ARGV[12])
  if own > 0 then budget = budget - evictOwn(o, id, math.min(own, budget)) end
end
-- the oldest past max tasks go before the new task joins the creation
-- order: a task created in the same millisecond as the oldest, its id
-- sorting first, was the one ZPOPMIN took (found by review on
-- 2026-12-06: a create reported success for the task it had evicted)
local over = redis.call('ZCARD', AGE) + 1 - maxn
if over > 0 then evict(math.min(over, budget)) end
redis.call('ZADD', AGE, string.format('%.0f', nowms()), id)
expires(id, c, o, st, TTL * 1000, #data)
count(o, #data)
touch(c, o, st)
reap(tonumber(ARGV[11]))
return 1
`)

// scriptUpdate is the check-and-set of a task. A change of state moves
// the task from the old state's indexes to the new one's (and a task an
// older release indexed under a long context's or owner's own name, to
// its keyPart's; one an older release created, into its owner's
// creation order).
//
// A change of the task's size is counted in the byte sums; one that
// grows it past the byte bounds first makes room as a create does (never
// evicting this task), and is refused when it cannot.
//
// ARGV: prefix, ttl (s), id, expected version, state, status ms, data,
// context (keyPart), owner (keyPart), reaps, max bytes in all, max bytes
// of an owner, evictions
// Returns 1 (stored), 0 (the version moved: read again), -1 (no such
// task), -2 (the stored task is final), -3 (no room for its bytes).
var scriptUpdate = rueidis.NewLuaScript(taskLua + `
local id, ver, st, ms, data, c, o = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local k = tkey(id)
local cur = redis.call('HMGET', k, 'v', 's', 'c', 'o')
if not cur[1] then return -1 end
if final(cur[2]) then return -2 end
if cur[1] ~= ver then return 0 end
-- the bytes counted for it so far (none for a task an older release
-- wrote, whose size was never added); room for what it grows by
local was = 0
local m = redis.call('HGET', META, id)
if m then
  local _, _, _, b = mdec(m)
  was = b or 0
end
local _, fits = room(id, o, #data - was, tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13]))
if not fits then return -3 end
redis.call('HSET', k, 'd', data, 's', st, 'v', tonumber(ver) + 1, 'u', ms, 'c', c, 'o', o)
redis.call('EXPIRE', k, TTL)
local now = {}
for _, z in ipairs(idxs(c, o, st)) do
  redis.call('ZADD', z, ms, id)
  now[z] = true
end
for _, z in ipairs(idxs(cur[3], cur[4], cur[2])) do
  if not now[z] then redis.call('ZREM', z, id) end
end
-- a task an older release created is counted in its owner's share from
-- its first change on, as if created then (a no-op for the others)
if o ~= '' then redis.call('ZADD', oakey(o), 'NX', string.format('%.0f', nowms()), id) end
expires(id, c, o, st, TTL * 1000, #data)
count(o, #data - was)
touch(c, o, st)
reap(tonumber(ARGV[10]))
return 1
`)

// scriptList returns one page of the tasks of a scope, newest status
// first, then id descending.
//
// ARGV: prefix, ttl (s), context (keyPart; "" for all), cursor ms (""
// for the first page), cursor id, page size, state ("0" for any), after
// ms ("-inf" for any), owner (keyPart; "" for any), the most bytes of
// task data a page holds (a page holds one task at least), the most
// entries passed over, reaps
// Returns {total, more, cursor ms, cursor id, id1, ms1, data1, id2, ...}:
// more is 1 when the listing goes on after the cursor (the last entry
// the page took or passed over).
//
// The scope's index holds exactly its matches (see taskLua), so the total
// is its ZCOUNT (after a reap) and the page walk reads the page's entries
// plus the stale ones it meets, at most listSkip of them (each forgotten:
// a hash that expired; or, should an index entry be left by a writer
// that does not move it, a task that no longer matches this index). The
// walk goes by rank from the cursor's place, O(log n) to find (the
// cursor's own entry, or, when it is gone, the place it would have: the
// cursor is put in the index for that moment), whatever the number of
// tasks at one millisecond. A task written before the state and
// (context, owner) indexes existed is in none of them until its next
// update: it is missing from those listings meanwhile (see doc.go).
var scriptList = rueidis.NewLuaScript(taskLua + `
local c, cms, cid, size, st, after, o = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
local maxb, skipmax, bytes, skipped = tonumber(ARGV[10]), tonumber(ARGV[11]), 0, 0
local z = zkey(c, o, st)
reap(tonumber(ARGV[12]))
local total = redis.call('ZCOUNT', z, after, '+inf')
local lo = -math.huge
if after ~= '-inf' then lo = tonumber(after) end
local out = {total, 0, '', ''}
local n = 0
local stale, foreign = {}, {}
-- forget entries whose task is gone or does not match, after the walk
-- (removing during it would shift the ranks): a task gone, from every
-- index meta names (else from z's and every wider scope's, which held
-- it too); one that does not match, from z
local function finish()
  if #stale > 0 then
    local items, unknown = known(stale), {}
    for _, it in ipairs(items) do
      if not it[4] then unknown[#unknown + 1] = it[1] end
    end
    if #unknown > 0 then
      for _, k in ipairs(idxs(c, o, st)) do redis.call('ZREM', k, unpack(unknown)) end
    end
    forget(items, false)
  end
  if #foreign > 0 then redis.call('ZREM', z, unpack(foreign)) end
  return out
end
-- the rank of the first entry after the cursor
local r = 0
if cms ~= '' then
  local sc = redis.call('ZSCORE', z, cid)
  if sc and tonumber(sc) == tonumber(cms) then
    r = redis.call('ZREVRANK', z, cid) + 1
  else
    -- the cursor's task is gone or moved: its place by Redis's own
    -- order, with the cursor in the index for this moment
    redis.call('ZADD', z, cms, cid)
    r = redis.call('ZREVRANK', z, cid)
    if sc then
      redis.call('ZADD', z, sc, cid)
      -- moved ahead of the cursor's place (a newer status): one more
      -- entry before it
      if tonumber(sc) > tonumber(cms) then r = r + 1 end
    else
      redis.call('ZREM', z, cid)
    end
  end
end
local batch = math.min(64, size + 1)
while true do
  local es = redis.call('ZREVRANGE', z, r, r + batch - 1, 'WITHSCORES')
  if #es == 0 then return finish() end
  for i = 1, #es, 2 do
    local id, ms = es[i], es[i + 1]
    if tonumber(ms) < lo then return finish() end
    local h = redis.call('HMGET', tkey(id), 'd', 's', 'o', 'c')
    if not h[1] then
      stale[#stale + 1] = id
      skipped = skipped + 1
    elseif (st ~= '0' and h[2] ~= st) or (o ~= '' and h[3] ~= o) or (c ~= '' and h[4] ~= c) then
      foreign[#foreign + 1] = id
      skipped = skipped + 1
    else
      if n == size or (n > 0 and bytes + #h[1] > maxb) then
        out[2] = 1
        return finish()
      end
      bytes = bytes + #h[1]
      n = n + 1
      out[#out + 1] = id
      out[#out + 1] = ms
      out[#out + 1] = h[1]
    end
    out[3], out[4] = ms, id
    if skipped >= skipmax then
      out[2] = 1
      return finish()
    end
  end
  r = r + batch
  batch = 64
end
`)

// scriptReap is the reaper's call: it forgets up to ARGV[3] expired tasks
// and looks at ARGV[5] tasks of age from rank ARGV[4] for tasks an older
// release wrote (alive and missing from exp: added to it; gone: dropped
// from all and age, the only indexes known without their hash).
//
// ARGV: prefix, ttl (s), reaps, sweep rank, sweep count
// Returns {more, next sweep rank}: more is 1 when more tasks may be due.
var scriptReap = rueidis.NewLuaScript(taskLua + `
local more = reap(tonumber(ARGV[3]))
local from, cnt = tonumber(ARGV[4]), tonumber(ARGV[5])
local ids = redis.call('ZRANGE', AGE, from, from + cnt - 1)
local next = from + #ids
if #ids < cnt then next = 0 end
if #ids > 0 then
  local ms = redis.call('HMGET', META, unpack(ids))
  local lost, moved = {}, 0
  for i, id in ipairs(ids) do
    if not ms[i] then
      local pt = redis.call('PTTL', tkey(id))
      if pt == -2 then
        lost[#lost + 1] = {id}
      else
        if pt < 0 then pt = TTL * 1000 end
        local h = redis.call('HMGET', tkey(id), 'c', 'o', 's')
        expires(id, h[1], h[2], h[3], pt)
        moved = moved + 1
      end
    end
  end
  forget(lost, false)
  if moved > 0 then touch('', '', '0') end
end
return {more and 1 or 0, next}
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
