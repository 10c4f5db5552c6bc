package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"
)

// Defaults of Options.
const (
	DefaultPrefix        = "rpcedge:"
	DefaultTimeout       = 250 * time.Millisecond
	DefaultProbeInterval = 250 * time.Millisecond
	DefaultHeartbeat     = time.Second
)

// Options configures a Fleet. Zero fields take their documented defaults.
type Options struct {
	// URL is the Redis server, "redis://[user:password@]host:port/db"
	// (or rediss:// for TLS, unix:///path). Required.
	URL string
	// Instance names this process in logs and metrics ("a", "edge-1"),
	// and starts its member of the fleet's membership, which a random
	// suffix per process keeps apart from any other process of the same
	// name (two processes on one host with the default, say). Default:
	// the host name.
	Instance string
	// Prefix starts every key the fleet writes. Default "rpcedge:".
	Prefix string
	// Timeout bounds every Redis call: a call that takes longer (and a
	// PING after it) counts as Redis being down. Default 250 ms: a frozen
	// Redis costs the requests that find it so at most twice this much
	// before the fleet falls back (a busy loopback Redis on a loaded
	// machine answers in well under it; a tighter bound flaps).
	Timeout time.Duration
	// ProbeInterval is how often a Fleet that lost Redis tries it again.
	// Default 250 ms.
	ProbeInterval time.Duration
	// Heartbeat is how often the instance announces itself, which is how
	// every instance learns the fleet's size (for the per-instance
	// fallback limit). Default 1 s; an instance silent for 5 of its own
	// heartbeats, and 5 of the counting instance's, no longer counts
	// (instances may be configured apart: none drops another early).
	Heartbeat time.Duration
	// Instances is the fleet's size an instance assumes until a heartbeat
	// has counted the instances: the fallback share of a limit is
	// 1/Instances of it while Redis has never answered. An instance
	// started while Redis is down cannot count the others, and with the
	// default, 1, every such instance allows the whole limit on its own;
	// set it to the number of instances the fleet runs to keep a fleet
	// that starts without Redis within the limit. Once Redis has answered,
	// the heartbeats' count is used (also after Redis goes down again: the
	// last count stays). Default 1.
	Instances int
	// Logger receives the fleet's logs, each with instance=Instance.
	// Default slog.Default().
	Logger *slog.Logger
}

// Fleet is one instance's connection to the fleet's shared state in
// Redis: it tracks whether Redis is reachable (logging once per change,
// probing until it comes back), announces the instance, and makes the
// Redis-backed rate limiter (Limiter) and A2A task store (TaskStore).
// Create it with New and Close it when done. A Fleet is safe for
// concurrent use.
type Fleet struct {
	opts   Options
	client rueidis.Client
	log    *slog.Logger
	keyPre string
	db     int    // the Redis database the URL selects
	member string // in the membership: Instance + "/" + random hex

	up       atomic.Bool
	size     atomic.Int64 // instances seen by the last heartbeat (Options.Instances before one), at least 1
	probing  atomic.Bool
	stateMu  sync.Mutex // orders up/down transitions and their logs
	closed   chan struct{}
	closeOne sync.Once
	wg       sync.WaitGroup

	set     *metrics.Set
	calls   *metrics.Counter
	errs    *metrics.Counter
	changes *metrics.Counter
}

// New connects to Redis and starts the instance's heartbeat. Redis need
// not be up yet: the Fleet starts "down", serves through its fallbacks,
// and comes up by itself (a malformed URL is an error).
func New(opts Options) (*Fleet, error) {
	if opts.URL == "" {
		return nil, errors.New("fleet: Options.URL is empty")
	}
	co, err := rueidis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("fleet: Options.URL: %w", err)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ProbeInterval <= 0 {
		opts.ProbeInterval = DefaultProbeInterval
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Instance == "" {
		opts.Instance = hostname()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Instances < 0 {
		return nil, fmt.Errorf("fleet: Options.Instances is %d: want 0 (the default, 1) or more", opts.Instances)
	}
	opts.Instances = max(opts.Instances, 1)
	// One client for every call: auto-pipelined, no client-side cache,
	// no retries (a lease or a check-and-set must never run twice), and
	// created even while Redis is down (ForceSingleClient).
	co.ForceSingleClient = true
	co.PipelineMultiplex = -1 // one connection, auto-pipelined: nothing stale after a restart
	co.DisableCache = true
	co.DisableRetry = true
	co.Dialer.Timeout = max(opts.Timeout, 500*time.Millisecond)
	co.ConnWriteTimeout = max(opts.Timeout, 500*time.Millisecond)
	co.ClientName = "rpcedge-" + opts.Instance
	co.DialCtxFn = probeDial(co.DialCtxFn) // see dial.go's NOTE
	c, err := rueidis.NewClient(co)
	if c == nil { // with ForceSingleClient, a client comes back even when the dial failed
		return nil, fmt.Errorf("fleet: %w", err)
	}
	var raw [8]byte
	rand.Read(raw[:])
	f := &Fleet{
		opts:   opts,
		member: opts.Instance + "/" + hex.EncodeToString(raw[:]),
		client: c,
		log:    opts.Logger.With("instance", opts.Instance),
		keyPre: opts.Prefix,
		db:     co.SelectDB,
		closed: make(chan struct{}),
		set:    metrics.NewSet(),
	}
	f.size.Store(int64(opts.Instances))
	inst := `instance=` + strconv.Quote(opts.Instance)
	f.set.NewGauge(`rpcedge_fleet_redis_up{`+inst+`}`, func() float64 {
		if f.up.Load() {
			return 1
		}
		return 0
	})
	f.set.NewGauge(`rpcedge_fleet_instances{`+inst+`}`, func() float64 { return float64(f.size.Load()) })
	f.calls = f.set.NewCounter(`rpcedge_fleet_redis_calls_total{` + inst + `}`)
	f.errs = f.set.NewCounter(`rpcedge_fleet_redis_errors_total{` + inst + `}`)
	f.changes = f.set.NewCounter(`rpcedge_fleet_redis_state_changes_total{` + inst + `}`)
	f.set.NewGauge(`rpcedge_fleet_instance_info{`+inst+`}`, func() float64 { return 1 })

	// The first heartbeat decides the starting state; it may take a
	// second (a process starting beside a busy Redis).
	if f.heartbeatWithin(max(opts.Timeout, time.Second)) {
		f.markUp()
	} else {
		f.markDown(errors.New("not reachable at start"))
	}
	f.wg.Add(1)
	go f.heartbeatLoop()
	return f, nil
}

// Instance returns the instance's name.
func (f *Fleet) Instance() string { return f.opts.Instance }

// Up reports whether Redis was reachable at the last call.
func (f *Fleet) Up() bool { return f.up.Load() }

// Size returns the number of instances that announced themselves within
// their last five heartbeats and this one's (this one included), as last
// seen; at least 1,
// and Options.Instances until a heartbeat has counted them.
func (f *Fleet) Size() int { return int(f.size.Load()) }

// WritePrometheus writes the fleet's metrics (fastserver.Config.MoreMetrics
// takes it):
//
//	rpcedge_fleet_redis_up{instance}                 gauge, 1 while Redis answers
//	rpcedge_fleet_instances{instance}                gauge, the fleet's size as last seen
//	rpcedge_fleet_redis_calls_total{instance}        counter
//	rpcedge_fleet_redis_errors_total{instance}       counter, calls that failed for want of Redis
//	rpcedge_fleet_redis_state_changes_total{instance} counter
//	rpcedge_fleet_events_dropped_total{instance}     counter, remote task changes dropped (Broker's queue full)
//	rpcedge_fleet_resource_updates_published_total{instance} counter, MCP resource updates published (ResourceUpdates)
//	rpcedge_fleet_resource_updates_received_total{instance}  counter, those of other instances received
//	rpcedge_fleet_resource_updates_dropped_total{instance}   counter, updates not published (queue full, Redis down)
//	rpcedge_fleet_instance_info{instance}            gauge, always 1
//
// and those of the limiters made from it.
func (f *Fleet) WritePrometheus(w io.Writer) {
	io.WriteString(w, fleetMetricsHelp)
	f.set.WritePrometheus(w)
}

// fleetMetricsHelp describes the fleet's metric families (fastserver's
// /metrics writes each before its family).
const fleetMetricsHelp = `# HELP rpcedge_fleet_redis_up Whether this instance reaches Redis (1) or serves with local limits (0).
# TYPE rpcedge_fleet_redis_up gauge
# HELP rpcedge_fleet_instances Instances in the fleet, as this instance last counted them.
# TYPE rpcedge_fleet_instances gauge
# HELP rpcedge_fleet_redis_calls_total Calls to Redis.
# TYPE rpcedge_fleet_redis_calls_total counter
# HELP rpcedge_fleet_redis_errors_total Calls to Redis that failed for want of Redis (no answer in time, or LOADING, BUSY, MASTERDOWN), not for another reply.
# TYPE rpcedge_fleet_redis_errors_total counter
# HELP rpcedge_fleet_redis_state_changes_total Changes between Redis reachable and not.
# TYPE rpcedge_fleet_redis_state_changes_total counter
# HELP rpcedge_fleet_events_dropped_total Task changes from other instances dropped because the delivering queue was full.
# TYPE rpcedge_fleet_events_dropped_total counter
# HELP rpcedge_fleet_resource_updates_published_total MCP resource updates this instance published to the others.
# TYPE rpcedge_fleet_resource_updates_published_total counter
# HELP rpcedge_fleet_resource_updates_received_total MCP resource updates received from other instances and told to this instance's streams.
# TYPE rpcedge_fleet_resource_updates_received_total counter
# HELP rpcedge_fleet_resource_updates_dropped_total MCP resource updates not published: the queue full, Redis unreachable or failing.
# TYPE rpcedge_fleet_resource_updates_dropped_total counter
# HELP rpcedge_fleet_instance_info This instance's name, as a label; always 1.
# TYPE rpcedge_fleet_instance_info gauge
# HELP rpcedge_fleet_lease_calls_total Lease calls (the GCRA script) made to Redis.
# TYPE rpcedge_fleet_lease_calls_total counter
# HELP rpcedge_fleet_lease_tokens_total Rate-limit tokens leased from Redis (way="granted"), given back unspent (way="returned"), and charged to Redis for requests the per-instance share admitted (way="charged").
# TYPE rpcedge_fleet_lease_tokens_total counter
# HELP rpcedge_fleet_limited_total Requests refused by the fleet-wide limit.
# TYPE rpcedge_fleet_limited_total counter
# HELP rpcedge_fleet_fallback_decisions_total Rate-limit decisions made with the local share while Redis was down.
# TYPE rpcedge_fleet_fallback_decisions_total counter
# HELP rpcedge_fleet_lease_waits_total Requests that waited for a lease refill.
# TYPE rpcedge_fleet_lease_waits_total counter
`

// Close stops the heartbeat and the probes, leaves the fleet's
// membership (the others' per-instance share grows at their next
// heartbeat), and closes the connection.
func (f *Fleet) Close() {
	f.closeOne.Do(func() {
		close(f.closed)
		f.wg.Wait()
		if f.up.Load() {
			ctx, cancel := f.ctx(context.Background())
			f.client.Do(ctx, f.client.B().Zrem().Key(f.keyPre+"instances").Member(f.member).Build())
			cancel()
		}
		f.client.Close()
	})
}

// channel names one of the fleet's pub/sub channels. Pub/sub ignores the
// database number, so the channel of a fleet in a database other than 0
// names it too (found by review on 2026-12-07: two fleets in databases 0
// and 1 of one server heard each other's task changes and resource
// updates).
func (f *Fleet) channel(name string) string {
	c := f.keyPre + name
	if f.db != 0 {
		c += ":db" + strconv.Itoa(f.db)
	}
	return c
}

// ctx returns a context bounded by the call timeout.
func (f *Fleet) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, f.opts.Timeout)
}

// check classifies the error of a Redis call: nil, a nil reply and a
// server error reply mean Redis is up; anything else (a refused or
// broken connection, a timeout, or a reply saying Redis cannot serve now:
// see isDown) means Redis is down. It returns err.
func (f *Fleet) check(err error) error {
	f.calls.Inc()
	if !isDown(err) {
		f.markUp()
		return err
	}
	f.errs.Inc()
	if f.up.Load() && f.ping() {
		// That connection broke, Redis did not: the call failed (its
		// caller falls back), the state stays.
		return err
	}
	f.markDown(err)
	return err
}

// ping reports whether Redis answers a PING within the call timeout.
func (f *Fleet) ping() bool {
	ctx, cancel := f.ctx(context.Background())
	defer cancel()
	return f.client.Do(ctx, f.client.B().Ping().Build()).Error() == nil
}

// checkFor is check for a call made under ctx, a caller's context: a
// call cut short because that context ended (the client went away, its
// request's deadline passed) says nothing about Redis, and is counted as
// a call, not as an error, without a PING (found by review on
// 2026-12-06).
func (f *Fleet) checkFor(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		f.calls.Inc()
		return err
	}
	return f.check(err)
}

// isDown reports whether err (from check) means Redis cannot serve: no
// answer (refused, broken, timed out), or an error reply saying so for
// every command: LOADING (a restarted Redis loading its data set, for
// seconds to minutes), BUSY (a script past its time limit), MASTERDOWN (a
// replica cut off from its master). A Redis answering those is down for
// the fleet, not up with every call failing (found by review on
// 2026-12-06: a Redis loading its data turned the fleet "up" and every
// task call failed 500 until it was loaded).
func isDown(err error) bool {
	if err == nil || rueidis.IsRedisNil(err) {
		return false
	}
	re, reply := rueidis.IsRedisErr(err)
	if !reply {
		return true
	}
	msg := re.Error()
	return re.IsLoading() || strings.HasPrefix(msg, "BUSY ") || strings.HasPrefix(msg, "MASTERDOWN")
}

// refusesWrites reports whether err is the reply of a Redis that is up
// but refuses writes: READONLY (a replica: a failover demoted the host),
// OOM (maxmemory reached under noeviction), MISCONF (snapshots failing
// under stop-writes-on-bgsave-error), NOREPLICAS (min-replicas-to-write
// not met). The fleet stays up (reads work, and the limiter backs off
// from a failing lease script on its own); a task call that needed the
// write answers as if Redis were down, 503 with Retry-After, not as a
// failure of the server (found by review on 2026-12-06).
func refusesWrites(err error) bool {
	re, reply := rueidis.IsRedisErr(err)
	if !reply {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"READONLY", "OOM ", "MISCONF", "NOREPLICAS"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func (f *Fleet) markUp() {
	if f.up.Load() {
		return
	}
	f.stateMu.Lock()
	defer f.stateMu.Unlock()
	if f.up.Swap(true) {
		return
	}
	f.changes.Inc()
	f.log.Info("fleet: redis is up: limits are fleet-wide, tasks are served", "redis", redactURL(f.opts.URL))
}

func (f *Fleet) markDown(err error) {
	f.stateMu.Lock()
	was := f.up.Swap(false)
	if was || f.changes.Get() == 0 {
		// A change, or the state at start: nothing logged yet (found by
		// review on 2026-12-06: an instance started with Redis
		// unreachable, a wrong address say, logged nothing until Redis
		// answered).
		f.changes.Inc()
		f.log.Warn("fleet: redis is down: limits fall back to per-instance shares, task calls answer 503 until it returns",
			"redis", redactURL(f.opts.URL), "error", err.Error(), "instances", f.size.Load())
	}
	f.stateMu.Unlock()
	f.probe()
}

// probe starts the loop that tries Redis until it answers, unless one
// runs.
func (f *Fleet) probe() {
	if !f.probing.CompareAndSwap(false, true) {
		return
	}
	select {
	case <-f.closed:
		f.probing.Store(false)
		return
	default:
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		t := time.NewTicker(f.opts.ProbeInterval)
		defer t.Stop()
		for {
			for !f.up.Load() {
				select {
				case <-f.closed:
					f.probing.Store(false)
					return
				case <-t.C:
				}
				f.heartbeat() // marks up on success
			}
			f.probing.Store(false)
			// A markDown between the loop's last look at up and the
			// store above found this probe running and started none:
			// look again, and go on probing if so.
			if f.up.Load() || !f.probing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

func (f *Fleet) heartbeatLoop() {
	defer f.wg.Done()
	t := time.NewTicker(f.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-f.closed:
			return
		case <-t.C:
			if f.up.Load() {
				f.heartbeat()
			}
		}
	}
}

// heartbeat announces the instance and reads the fleet's size, in one
// script; it reports whether Redis answered. The instance's member is its
// name and a random suffix (found by review on 2026-12-06: two processes
// of one name, the default host name say, were one member: each counted
// a fleet of one, and served the whole limit with Redis down, and the
// Close of one removed the other).
func (f *Fleet) heartbeat() bool { return f.heartbeatWithin(f.opts.Timeout) }

func (f *Fleet) heartbeatWithin(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	stale := 5 * f.opts.Heartbeat.Milliseconds()
	n, err := scriptHeartbeat.Exec(ctx, f.client, []string{f.keyPre + "instances"},
		[]string{f.member, strconv.FormatInt(stale, 10)}).AsInt64()
	if f.check(err) != nil {
		return false
	}
	if n < 1 {
		n = 1
	}
	f.size.Store(n)
	return true
}
