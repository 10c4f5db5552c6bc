package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"
	"github.com/rpcedge/rpcedge/a2a"
)

// NOTE: task events across the fleet.
//
// A stream (A2A SendStreamingMessage, SubscribeToTask) follows its task
// through whatever instance it is connected to, while the task may be
// changed through any other (a CancelTask through the balancer, the agent's
// work on the instance that took the message). Each instance's Broker
// delivers the changes it stores to its own streams at once, and PUBLISHes
// them on one Redis channel of the fleet; each instance SUBSCRIBEs to that
// channel and hands the changes of tasks it has streams for to them. A
// message is "<origin>\n<task id>\n<change as JSON>": an instance skips its
// own (the origin is random per process, so two processes that share an
// instance name are still told apart) and the tasks it does not follow
// without decoding them. Every instance receives every change: one
// message per stored change, fleet-wide, which is cheap beside the task
// store's own script per change.
//
// Redis pub/sub delivers at most once: while Redis is unreachable the
// instance's streams get only the changes stored through the instance
// itself (the task store answers 503 then anyway), and the changes of
// that time are not replayed. A stream that misses a change still ends at
// its task's final status if that arrives; otherwise at the stream's
// duration limit. Changes arrive in the order each instance published
// them; a change older than one already sent (by the task's Seq) is
// dropped by the stream. Remote changes are handed to the local streams
// from one goroutine: a local stream whose queue is full holds it up for
// at most a2a.Config.StreamWait before that stream is cut. That goroutine
// is not the Redis client's reader: the subscription's callback only
// queues a message (up to eventQueue messages and eventQueueBytes; past
// either a message is dropped and counted,
// rpcedge_fleet_events_dropped_total), since the instance's
// every call shares the client's one connection, and a reader held up by
// a slow stream would stall them all and take the instance "down" with
// Redis fine (found by review on 2026-12-05).

// Broker is the fleet's a2a.Broker (set it as a2a.Config.Events, with the
// fleet's TaskStore as Config.Tasks): task changes stored through any
// instance reach the streams of every instance. Create it with
// Fleet.Broker and Close it before the Fleet.
type Broker struct {
	f       *Fleet
	local   *a2a.LocalBroker
	channel string
	origin  string
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
	queue   chan []byte  // remote messages, for deliver
	queued  atomic.Int64 // their bytes
	dropped *metrics.Counter
	wg      sync.WaitGroup // deliver
}

// eventQueue is how many remote messages wait for the delivering
// goroutine, and eventQueueBytes how many bytes: a change carries its
// task (up to a2a's MaxTaskBytes, 1 MiB by default), so a count alone let
// a stalled delivery hold some 4 GiB (found by review on 2026-12-06).
const (
	eventQueue      = 4096
	eventQueueBytes = 64 << 20
)

var _ a2a.Broker = (*Broker)(nil)

// Broker returns the fleet's broker of task changes and starts listening
// to the fleet's channel (retrying while Redis is down).
func (f *Fleet) Broker() *Broker {
	var raw [8]byte
	rand.Read(raw[:])
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broker{
		f:       f,
		local:   a2a.NewLocalBroker(),
		channel: f.channel("{a2a}:events"),
		origin:  hex.EncodeToString(raw[:]),
		cancel:  cancel,
		done:    make(chan struct{}),
		queue:   make(chan []byte, eventQueue),
		dropped: f.set.GetOrCreateCounter(`rpcedge_fleet_events_dropped_total{instance=` + strconv.Quote(f.opts.Instance) + `}`),
	}
	b.wg.Add(1)
	go b.deliver(ctx)
	go b.listen(ctx)
	return b
}

// deliver hands the queued remote messages to the local streams.
func (b *Broker) deliver(ctx context.Context) {
	defer b.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-b.queue:
			b.queued.Add(-int64(len(msg)))
			b.receive(msg)
		}
	}
}

// Publish publishes c to the other instances and delivers it to this
// instance's streams of the task. A publication that fails (Redis down)
// is not retried. The other instances come first: delivering to a local
// stream whose queue is full may wait (a2a.Config.StreamWait) and spend
// ctx, which the publication would then miss (found by review on
// 2026-12-05: a final status never reached another instance's stream).
func (b *Broker) Publish(ctx context.Context, c *a2a.TaskChange) {
	b.publishRemote(ctx, c)
	b.local.Publish(ctx, c)
}

func (b *Broker) publishRemote(ctx context.Context, c *a2a.TaskChange) {
	if !b.f.up.Load() {
		return
	}
	msg, err := encodeChange(b.origin, c)
	if err != nil {
		b.f.log.Error("fleet: a task change cannot be encoded", "task", c.TaskID, "error", err)
		return
	}
	cctx, cancel := b.f.ctx(ctx)
	defer cancel()
	cl := b.f.client
	err = cl.Do(cctx, cl.B().Publish().Channel(b.channel).Message(rueidis.BinaryString(msg)).Build()).Error()
	b.f.checkFor(ctx, err)
}

// Subscribe follows the task's changes, wherever they are stored.
func (b *Broker) Subscribe(taskID string, deliver func(*a2a.TaskChange)) func() {
	return b.local.Subscribe(taskID, deliver)
}

// Local returns the broker of this instance's streams (for its counts).
func (b *Broker) Local() *a2a.LocalBroker { return b.local }

// Close stops listening. Streams still open get no more remote changes.
func (b *Broker) Close() {
	b.once.Do(func() {
		b.cancel()
		<-b.done
		b.wg.Wait()
	})
}

// listen receives the fleet's changes until Close, subscribing again
// after each loss of the connection.
func (b *Broker) listen(ctx context.Context) {
	defer close(b.done)
	b.f.follow(ctx, b.channel, "task-event", func(m rueidis.PubSubMessage) { b.enqueue(m.Message) })
}

// follow hands each message of channel to handle until ctx ends,
// subscribing again (every ProbeInterval) after each loss of the
// connection; what names the subscription in the log. When ctx ends it
// unsubscribes: the client only drops its handler, and Redis would go on
// pushing the channel's messages to the fleet's shared connection (found
// by review on 2026-12-07); it waits for Redis unsubscribeWait at most,
// so that closing is quick with Redis stalled (its connection then
// carries the messages until the Fleet closes it).
func (f *Fleet) follow(ctx context.Context, channel, what string, handle func(rueidis.PubSubMessage)) {
	cl := f.client
	for ctx.Err() == nil {
		err := cl.Receive(ctx, cl.B().Subscribe().Channel(channel).Build(), handle)
		if ctx.Err() != nil {
			uctx, cancel := context.WithTimeout(context.Background(), unsubscribeWait)
			cl.Do(uctx, cl.B().Unsubscribe().Channel(channel).Build())
			cancel()
			return
		}
		if err != nil {
			f.log.Debug("fleet: the "+what+" subscription ended; subscribing again", "error", err)
		}
		t := time.NewTimer(f.opts.ProbeInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// unsubscribeWait bounds the UNSUBSCRIBE a subscription sends as it ends.
const unsubscribeWait = 250 * time.Millisecond

// enqueue queues a message for deliver, or drops and counts it when the
// queue holds eventQueue messages or eventQueueBytes. It never waits: it
// runs on the connection's reader.
func (b *Broker) enqueue(msg string) {
	n := int64(len(msg))
	if b.queued.Add(n) > eventQueueBytes {
		b.queued.Add(-n)
		b.dropped.Inc()
		return
	}
	select {
	case b.queue <- []byte(msg):
	default:
		b.queued.Add(-n)
		b.dropped.Inc()
	}
}

// receive hands a change published by another instance to the local
// streams of its task, if any.
func (b *Broker) receive(msg []byte) {
	origin, rest, ok := bytes.Cut(msg, []byte{'\n'})
	if !ok || string(origin) == b.origin {
		return
	}
	id, data, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok || !b.local.Following(string(id)) {
		return
	}
	c, err := decodeChange(string(id), data)
	if err != nil {
		b.f.log.Warn("fleet: a task change from another instance is malformed", "task", string(id), "error", err)
		return
	}
	b.local.Publish(context.Background(), c)
}

// The published form of a change: mirror types of tasks.go's.
type changeJSON struct {
	ContextID string      `json:"ctx"`
	Seq       uint64      `json:"seq"`
	Events    []eventJSON `json:"ev"`
}

type eventJSON struct {
	Status    *statusJSON   `json:"st,omitempty"`
	Artifact  *artifactJSON `json:"ar,omitempty"`
	Append    bool          `json:"ap,omitempty"`
	LastChunk bool          `json:"lc,omitempty"`
}

type statusJSON struct {
	State   a2a.TaskState `json:"s"`
	Message *messageJSON  `json:"m,omitempty"`
	Time    int64         `json:"ts,omitempty"`
}

func encodeChange(origin string, c *a2a.TaskChange) ([]byte, error) {
	j := changeJSON{ContextID: c.ContextID, Seq: c.Seq, Events: make([]eventJSON, len(c.Events))}
	for i, ev := range c.Events {
		e := &j.Events[i]
		e.Append, e.LastChunk = ev.Append, ev.LastChunk
		if st := ev.Status; st != nil {
			e.Status = &statusJSON{State: st.State}
			if !st.Timestamp.IsZero() {
				e.Status.Time = st.Timestamp.UnixNano()
			}
			if st.Message != nil {
				m := toMessageJSON(st.Message)
				e.Status.Message = &m
			}
		}
		if a := ev.Artifact; a != nil {
			e.Artifact = &artifactJSON{a.ArtifactID, a.Name, a.Description, toParts(a.Parts), a.Metadata, a.Extensions}
		}
	}
	data, err := json.Marshal(&j)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 0, len(origin)+len(c.TaskID)+2+len(data))
	msg = append(msg, origin...)
	msg = append(msg, '\n')
	msg = append(msg, c.TaskID...)
	msg = append(msg, '\n')
	return append(msg, data...), nil
}

func decodeChange(taskID string, data []byte) (*a2a.TaskChange, error) {
	var j changeJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	if j.Seq == 0 {
		return nil, errors.New("no seq")
	}
	c := &a2a.TaskChange{TaskID: taskID, ContextID: j.ContextID, Seq: j.Seq, Events: make([]a2a.TaskEvent, len(j.Events))}
	for i, e := range j.Events {
		ev := &c.Events[i]
		ev.Append, ev.LastChunk = e.Append, e.LastChunk
		switch {
		case e.Status != nil:
			st := &a2a.TaskStatus{State: e.Status.State}
			if e.Status.Time != 0 {
				st.Timestamp = time.Unix(0, e.Status.Time).UTC()
			}
			if e.Status.Message != nil {
				m := fromMessageJSON(e.Status.Message)
				st.Message = &m
			}
			ev.Status = st
		case e.Artifact != nil:
			a := e.Artifact
			ev.Artifact = &a2a.Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
				Parts: fromParts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions}
		default:
			return nil, fmt.Errorf("event %d is neither a status nor an artifact", i)
		}
	}
	return c, nil
}
