// Package fleet runs rpcedge as several instances behind a load balancer
// with their shared state in Redis: a rate limit that holds fleet-wide
// (Limiter, a fastserver.RateLimiter), an A2A task store every
// instance serves (TaskStore, an a2a.TaskStore), the changes of those
// tasks carried to the A2A streams of every instance (Broker, an
// a2a.Broker), and MCP resource updates carried to the listen streams
// and sessions of every instance (ResourceUpdates, an mcp.Relay).
//
//	f, err := fleet.New(fleet.Options{URL: "redis://127.0.0.1:6379/0", Instance: "edge-1"})
//	lim, err := f.Limiter(fleet.LimiterOptions{Rate: 100})     // fastserver.Config.RateLimiter
//	tasks, err := f.TaskStore(fleet.TaskOptions{})             // a2a.Config.Tasks
//	events := f.Broker()                                       // a2a.Config.Events
//	updates := f.ResourceUpdates()                             // mcp.WithRelay(updates)
//	// fastserver.Config.MoreMetrics = f.WritePrometheus
//	...
//	updates.Close(); events.Close(); lim.Close(); f.Close()
//
// cmd/rpcedge does this with -redis URL -instance NAME.
//
// # Rate limit
//
// A GCRA per client key, in one Lua script on Redis's clock (the
// semantics of go-redis/redis_rate), served from leases: an instance takes
// about a quarter second of a client's demand in one call and spends it
// locally, so Redis sees a few calls per second per hot client and
// instance instead of one per request. Over any window W the fleet admits
// at most B + R·W + N·L requests of one client (burst B, rate R, N
// instances, L = LimiterOptions.MaxLease, default R × 250 ms): see
// Limiter. When Redis cannot be reached each instance falls back to R/N
// with burst B/N, N from the instances' heartbeats (Options.Instances for
// an instance that has not reached Redis yet). That share of a client
// starts as spent, in proportion, as the client's budget in Redis was at
// the last answer, and what it admits is charged to Redis when Redis
// answers again, so the bound holds across an outage (a flapping Redis
// grants no extra burst) — provided Redis keeps its data: a Redis
// restarted without it (no RDB, no AOF) starts every client's budget
// full, one burst more per client that the fleet cannot tell from a
// quiet client. Each instance is one member of the membership
// however it is named (its Instance and a random suffix). A client's
// budget is kept under a key naming the limiter's Rate, Burst and
// LimiterOptions.Name: limiters of other rates never share it.
//
// Upgrading from a release before 2026-12-07: the budget keys were
// "rl:<address>", now "rl:<name>.<µs per token>.<burst>:<address>", so
// each client starts with a fresh budget once, and while old and new
// instances serve together each kind keeps its own (up to twice the
// limit for the rollout).
//
// # Tasks
//
// One hash per task plus sorted sets by creation and, scored by status
// time, one per scope a ListTasks can name (all tasks, a context, an
// owner, an owner in a context, each also by state), under one hash tag;
// every change is a Lua check-and-set on the task's version that refuses
// to leave a final state, so a cancel racing a completion ends one way
// for every instance. Bounded in count (oldest evicted), in count per
// owner (TaskOptions.MaxOwnerTasks, default a tenth of MaxTasks: an owner
// past it evicts its own oldest, by a sorted set of its tasks by
// creation, never another owner's), in bytes of task data in all and per
// owner (TaskOptions.MaxBytes, default 1 GiB, and MaxOwnerBytes, a tenth
// of it: a create, or an update that grows a task, that would pass them
// first forgets expired tasks not yet reaped, then evicts the owner's
// oldest, then the oldest of all, never the task written, and is refused
// 503 when the 64 evictions of one write do not make room, the next
// write going on; the sums are kept in Redis, "tb" and the hash "ob",
// as long as the indexes, and each task's meta entry holds the size
// counted for it) and per-task size, kept TTL after the last change. An expiry index (a sorted set by
// the time each task's hash expires, and a hash of each task's context,
// owner and state) lets the scripts forget an expired task in every
// index it was in: each create, update and listing forgets a few, and
// each instance's reaper the rest every second. A context id or owner
// longer than 64 bytes is named in the keys (and the task's hash) by
// "#" and its SHA-256 in hex, so that its length costs Redis once, in
// the task's JSON. Update refuses to change a task's id, context or
// owner. While Redis is down task calls answer 503 / -32603 with
// Retry-After.
//
// Upgrading from a release without the state indexes (before 2026-12-06):
// tasks the old code wrote are in the indexes of all tasks, of their
// context and of their owner only. They are listed as before without a
// status filter and by context or by owner alone, but are missing (from
// the page and the total) from listings with a status filter or with
// both a context and an owner until their next change, which indexes
// them fully; those never changed again leave with their TTL. Nothing
// needs migrating. Old and new instances should not share a Redis for
// long: an old instance's changes do not move a task between state
// indexes (a listing drops such an entry when it meets it, but counts
// it until then).
//
// Upgrading from a release without the byte bounds (before 2026-12-07):
// tasks the old code wrote are not in the byte sums (their meta entries
// carry no size) until their next change, which counts them whole; those
// never changed again leave with their TTL or by the count bounds. While
// old instances serve too, their writes and evictions do not move the
// sums, and they read the new meta entries' state wrongly (a new task
// they forget may leave index entries, which listings drop when they meet
// them): do not let old and new instances share a Redis for long.
//
// Upgrading from a release without the owner's share (no "oa:" keys):
// tasks the old code created are not in their owner's creation order,
// so they do not count in its share (nor are evicted by it) until their
// next change, which adds them as if created then; those
// never changed again leave with their TTL or by MaxTasks. While old
// instances serve too, their creates are not counted either, and their
// evictions leave entries in the creation order that the owner's next
// eviction drops.
//
// Upgrading from a release without the expiry index (before
// 2026-12-07): each instance's reaper walks the tasks by creation, a few
// hundred a second, and adds those the old code wrote to the expiry
// index while they live (an update does too), so they leave every index
// when they expire. Entries of tasks that had expired before the walk
// reached them are dropped from all tasks and the creation order only;
// a listing forgets the others as it meets them, and counts them until
// then. Tasks with a context id or owner over 64 bytes are listed by
// that context or owner again after their next change. Old instances'
// changes do not keep the expiry index (a task they keep alive is put
// back in it when found alive).
//
// # Streams
//
// An A2A stream (SendStreamingMessage, SubscribeToTask) may be open on any
// instance and its task changed through any other: each change stored is
// published on one Redis pub/sub channel of the fleet and delivered by
// every instance to its streams of that task (Broker). The balancer needs
// no affinity for streams: a subscription through any instance follows
// the task. Pub/sub is at most once: changes stored while an instance's
// subscription to Redis is broken do not reach its streams (the task
// store is down then too), and are not replayed.
//
// # Redis down
//
// A call that fails for want of Redis (refused, broken, slower than
// Options.Timeout, or answered LOADING, BUSY or MASTERDOWN, as a Redis
// restarted with its data answers until it is loaded; and a PING after
// it too) turns the Fleet "down": it
// logs once, rpcedge_fleet_redis_up drops to 0, the limiter serves the
// per-instance share and the task store fails at once; a probe tries Redis
// every Options.ProbeInterval and the first answer turns the Fleet "up"
// again (logged once). Nothing needs restarting.
//
// # Client
//
// github.com/redis/rueidis, chosen over go-redis v9 on measured cost per
// call and allocations for the calls the fleet makes (the lease script,
// from many goroutines at once: auto-pipelining on one connection, 2
// allocations against 16), and because it never retries a script by
// itself (a lease or a check-and-set must not run twice); fleet/e2e's
// BenchmarkClients measures both.
//
// # Security
//
// Keys are the client's address (rate limit), random task ids, and
// context ids and owners of at most 65 bytes; every script's work is
// bounded. A create evicts at most 64 tasks past its owner's share,
// MaxTasks and the byte bounds together, an update that grows a task 64
// past the byte bounds (a larger excess, a bound lowered, goes over the
// next writes), and a create or an update forgets at most 16 expired tasks,
// a listing 64, a reaper call 256 (while more are due, up to 8 calls a
// second an instance). A listing
// reads the one index that holds exactly its matches (by context, owner,
// both or neither, each with or without a state): a ZCOUNT for its total
// and a read per task of its page, whatever the scope's size, plus the
// entries of expired tasks it meets, at most 256 (forgotten as met; past
// those the page ends, short or empty, with a next page token). It goes
// from its page token by rank, O(log n) however many tasks share a
// millisecond. At 100,000 tasks a status-filtered page takes under 0.1
// ms of Redis, as at 10,000; before the state indexes it counted its
// total over its whole scope, 0.3 to 0.4 s of Redis at 100,000 tasks
// (past the default Options.Timeout, so that every instance's calls
// timed out and fell back for that moment, at any client's will); before
// the bound on entries passed over, a page of an owner with 30,000
// expired tasks took 0.5 s. The indexes cost a create about 29 commands
// in Redis (19 without them), a change of state 30 (11), a change
// without one 26, and 600 to 900 bytes of Redis memory a task (a task in
// a context of its own: 5 keys instead of 2); the expiry index is about
// 200 of those bytes, 6 of an update's commands, and a third more of its
// time. The owner's share costs an owned task one entry in its owner's
// creation order (about 135 bytes with the server's ids, at 2,000 tasks
// an owner), its create 3 commands (32 in all), its updates 2 (28
// without a change of state); a create at the share also evicts the
// owner's oldest, 16 more (TestOwnerShareCost). The byte bounds cost a
// create 4 commands (6 owned: the sums read and counted, their keys'
// PTTL), an update 6 (its meta entry read too) and an eviction 2;
// measured on 2026-12-06 with all of these, an owner-less create is 26.4
// commands, an owned one 40.5, one at the share 58.2, an update 33.0
// (extending the keys a PTTL each). The share bounds one
// owner, not one client: an issuer that hands out token subjects freely
// hands out shares. A listing's total counts a task that expired within about the
// last second, while the reapers keep up (their rate above: some 2,000
// tasks a second an instance); its pages do not list it. Give the fleet
// its own Redis database or Options.Prefix, and a password in the URL
// in production; the URL's password is never logged. (Pub/sub ignores the
// database number: the channels of a fleet in a database other than 0
// carry it in their names, ":db<n>", so an upgrade from a release before
// 2026-12-07 of such a fleet loses changes between old and new instances
// until all are upgraded.)
package fleet
