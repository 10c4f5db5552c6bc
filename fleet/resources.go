package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"
	"github.com/rpcedge/rpcedge/internal/coalesce"
	"github.com/rpcedge/rpcedge/mcp"
)

// NOTE: MCP resource updates across the fleet.
//
// A client follows resources (a 2026-07-28 subscriptions/listen stream, a
// 2025-xx session's GET stream) on whatever instance the balancer gave
// it, while the change may be noticed on another: the instance that wrote
// the resource, a job. ResourceUpdates is the mcp.Relay that carries the
// updates: mcp.Server.NotifyResourceUpdated hands it the URI, which it
// PUBLISHes on one Redis channel of the fleet as "<origin>\n<uri>"; every
// instance SUBSCRIBEs to the channel and tells its own streams of the
// URIs other origins published (the origin is random per process).
//
// Publishing runs on a goroutine of its own, so NotifyResourceUpdated
// never waits for Redis. An update means "read it again", so updates of a
// URI merge while one waits to be published: the pending set holds each
// URI once, at most updateQueue URIs and updateQueueBytes of them (past
// either an update is dropped and counted); a burst is published in one
// round trip. Receiving does not queue: telling the local streams only
// marks a URI pending on each (mcp merges there too), which never waits,
// so it runs on the Redis client's reader.
//
// Redis pub/sub delivers at most once: while Redis is unreachable an
// instance's updates reach its own streams only, those of that time are
// not replayed, and a client that must not miss one reads the resource
// again when its stream is re-established.

// updateQueue and updateQueueBytes bound the URIs waiting to be
// published.
const (
	updateQueue      = 4096
	updateQueueBytes = 4 << 20
)

// ResourceUpdates carries MCP resource updates between the fleet's
// instances: pass it to mcp.WithRelay. Create it with
// Fleet.ResourceUpdates and Close it before the Fleet.
type ResourceUpdates struct {
	f       *Fleet
	channel string
	origin  string
	cancel  context.CancelFunc
	done    chan struct{} // both goroutines ended
	once    sync.Once

	q *coalesce.Queue // the URIs waiting to be published, each once

	mu                           sync.Mutex                     // Receive's
	deliver                      atomic.Pointer[[]func(string)] // Receive's functions
	published, received, dropped *metrics.Counter
}

var _ mcp.Relay = (*ResourceUpdates)(nil)

// ResourceUpdates returns the fleet's relay of MCP resource updates and
// starts publishing and listening (subscribing again while Redis is
// down).
func (f *Fleet) ResourceUpdates() *ResourceUpdates {
	var raw [8]byte
	rand.Read(raw[:])
	ctx, cancel := context.WithCancel(context.Background())
	label := `{instance=` + strconv.Quote(f.opts.Instance) + `}`
	u := &ResourceUpdates{
		f:         f,
		channel:   f.channel("{mcp}:resources"),
		origin:    hex.EncodeToString(raw[:]),
		cancel:    cancel,
		done:      make(chan struct{}),
		q:         coalesce.New(updateQueue, updateQueueBytes),
		published: f.set.GetOrCreateCounter(`rpcedge_fleet_resource_updates_published_total` + label),
		received:  f.set.GetOrCreateCounter(`rpcedge_fleet_resource_updates_received_total` + label),
		dropped:   f.set.GetOrCreateCounter(`rpcedge_fleet_resource_updates_dropped_total` + label),
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); u.publish(ctx) }()
	go func() { defer wg.Done(); u.listen(ctx) }()
	go func() { wg.Wait(); close(u.done) }()
	return u
}

// Publish queues an update of uri for the other instances; it never
// waits. An update of a URI already queued merges into it.
func (u *ResourceUpdates) Publish(uri string) {
	if u.q.Add(uri) == coalesce.Dropped {
		u.dropped.Inc()
	}
}

// Receive adds a function that tells this instance's streams of the
// updates other instances publish (mcp.New calls it): a ResourceUpdates
// may serve several mcp.Servers of the instance, each told of every
// update.
func (u *ResourceUpdates) Receive(deliver func(uri string)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var fs []func(string)
	if p := u.deliver.Load(); p != nil {
		fs = append(fs, *p...)
	}
	fs = append(fs, deliver)
	u.deliver.Store(&fs)
}

// Close stops publishing and listening: what is still queued is dropped.
func (u *ResourceUpdates) Close() {
	u.once.Do(func() {
		u.cancel()
		<-u.done
	})
}

// publish sends the queued updates, a batch in one round trip.
func (u *ResourceUpdates) publish(ctx context.Context) {
	var batch []string
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.q.Wake():
		}
		batch = u.q.Take(batch)
		if len(batch) == 0 {
			continue
		}
		if !u.f.up.Load() {
			u.dropped.Add(len(batch)) // Redis is down: this instance's streams only
			continue
		}
		cl := u.f.client
		// A slice of its own per batch: DoMulti may return (ctx done)
		// while the client's writer still reads the commands (found by
		// review on 2026-12-07, under -race).
		cmds := make(rueidis.Commands, 0, len(batch))
		for _, uri := range batch {
			cmds = append(cmds, cl.B().Publish().Channel(u.channel).Message(u.origin+"\n"+uri).Build())
		}
		cctx, cancel := u.f.ctx(ctx)
		for i, r := range cl.DoMulti(cctx, cmds...) {
			if err := r.Error(); err != nil {
				u.f.checkFor(ctx, err)
				u.dropped.Add(len(batch) - i)
				break
			}
			u.published.Inc()
		}
		cancel()
	}
}

// listen receives the fleet's updates until Close, subscribing again
// after each loss of the connection.
func (u *ResourceUpdates) listen(ctx context.Context) {
	u.f.follow(ctx, u.channel, "resource-update", func(m rueidis.PubSubMessage) {
		origin, uri, ok := strings.Cut(m.Message, "\n")
		if !ok || origin == u.origin {
			return
		}
		if fs := u.deliver.Load(); fs != nil {
			u.received.Inc()
			for _, d := range *fs {
				d(uri)
			}
		}
	})
}
