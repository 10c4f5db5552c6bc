// Package fleet runs rpcedge as several instances behind a load balancer
// with their shared state in Redis: a rate limit that holds fleet-wide
// (Limiter, a fastserver.RateLimiter), an A2A task store every
// instance serves (TaskStore, an a2a.TaskStore), and the changes of those
// tasks carried to the A2A streams of every instance (Broker, an
// a2a.Broker).
//
//	f, err := fleet.New(fleet.Options{URL: "redis://127.0.0.1:6379/0", Instance: "edge-1"})
//	lim, err := f.Limiter(fleet.LimiterOptions{Rate: 100})     // fastserver.Config.RateLimiter
//	tasks, err := f.TaskStore(fleet.TaskOptions{})             // a2a.Config.Tasks
//	events := f.Broker()                                       // a2a.Config.Events
//	// fastserver.Config.MoreMetrics = f.WritePrometheus
//	...
//	events.Close(); lim.Close(); f.Close()
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
// an instance that has not reached Redis yet).
//
// # Tasks
//
// One hash per task plus sorted sets by creation and, scored by status
// time, one per scope a ListTasks can name (all tasks, a context, an
// owner, an owner in a context, each also by state), under one hash tag;
// every change is a Lua check-and-set on the task's version that refuses
// to leave a final state, so a cancel racing a completion ends one way
// for every instance. Bounded in count (oldest evicted) and per-task
// size, kept TTL after the last change. While Redis is down task calls
// answer 503 / -32603 with Retry-After.
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
// Keys are the client's address (rate limit) and random task ids; every
// script's work is bounded. A create evicts at most the excess and prunes
// at most 16 entries of each index it joins. A listing reads the one
// index that holds exactly its matches (by context, owner, both or
// neither, each with or without a state): a ZCOUNT for its total and a
// read per task of its page, whatever the scope's size, plus the entries
// of expired tasks it meets (forgotten as met; those past the TTL are
// pruned first, at most 1,000 a listing). At 100,000 tasks a
// status-filtered page takes under 0.1 ms of Redis, as at 10,000; before
// the state indexes it counted its total over its whole scope, 0.3 to
// 0.4 s of Redis at 100,000 tasks (past the default Options.Timeout, so
// that every instance's calls timed out and fell back for that moment, at
// any client's will). The indexes cost a create about 31 commands in
// Redis instead of 19 (some 1.8 times its time), a change of state 24
// instead of 11, and 450 to 700 bytes of Redis memory a task (a task in
// a context of its own: 5 keys instead of 2). A listing's total counts a
// task that expired less than 5 s ago (the prune's margin for clocks);
// its pages do not list it. Give the fleet its own Redis database or
// Options.Prefix, and a password in the URL in production; the URL's
// password is never logged.
package fleet
