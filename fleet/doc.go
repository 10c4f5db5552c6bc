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
// with burst B/N, N from the instances' heartbeats.
//
// # Tasks
//
// One hash per task plus sorted sets per context, per owner, for all
// tasks and by creation, under one hash tag; every change is a Lua check-and-set on
// the task's version that refuses to leave a final state, so a cancel
// racing a completion ends one way for every instance. Bounded in count
// (oldest evicted) and per-task size, kept TTL after the last change.
// While Redis is down task calls answer 503 / -32603 with Retry-After.
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
// script's work is bounded by an index (a page walks at most the
// context's, the owner's or, with neither, all tasks' index; a create
// evicts at most the excess). That bound is the index's size: a listing
// with a status filter counts its total over the whole index, about 8 µs
// a task, so over some 30,000 tasks in scope it holds Redis past the
// default Options.Timeout, and every instance's calls time out and fall
// back for that moment. A per-state index would bound it; until then keep
// Options.Timeout above what such a listing takes, or TaskOptions.MaxTasks
// (or TTL) low enough. Give the fleet its own Redis database or
// Options.Prefix, and a password in the URL in production; the URL's
// password is never logged.
package fleet
