package a2a

import (
	"context"
	"sync"
	"time"
)

// NOTE: task events.
//
// Every change the server stores of a task in progress (a status, an
// artifact or a chunk of one, a cancel) is also published, after the store
// took it, as a TaskChange: the task's Seq after the change and the
// change's events in the order a stream carries them (artifacts, then the
// status). Streams (SendStreamingMessage, SubscribeToTask) subscribe to
// their task's changes through a Broker before they read the task, send
// the task as their first event, then every change whose Seq is above the
// task's: so a change is never both in the first event and after it, and a
// change that arrives late (behind a newer one, from another instance) is
// dropped rather than sent out of order. A stream ends at the first status
// that is final or interrupted (input-required, auth-required).
//
// The Broker is in-process by default (NewLocalBroker); package fleet
// carries changes between instances over Redis pub/sub, so that a stream
// follows its task through any instance whatever instance changes it.

// TaskEvent is one event of a task's stream, as the server holds it
// whatever the wire shape: either a new status (TaskStatusUpdateEvent) or
// an artifact, whole or a chunk of one (TaskArtifactUpdateEvent).
type TaskEvent struct {
	// Status, when not nil, is the task's new status.
	Status *TaskStatus
	// Artifact, when not nil (and Status nil), is an artifact of the
	// task or a chunk of one.
	Artifact *Artifact
	// Append says that Artifact's parts extend the artifact of the same
	// ArtifactID already sent (A2A's append).
	Append bool
	// LastChunk says that Artifact is the artifact's last chunk (A2A's
	// lastChunk); a whole artifact is its own last chunk.
	LastChunk bool
}

// TaskChange is one stored change of a task and its events, as a Broker
// carries it. Its values are never modified once published.
type TaskChange struct {
	// TaskID and ContextID name the task.
	TaskID, ContextID string
	// Seq is the task's Seq once changed (Task.Seq).
	Seq uint64
	// Events are the change's events in stream order.
	Events []TaskEvent

	// published is when this process published the change (zero for one
	// that came from another instance): a stream's wait for room in its
	// queue ends StreamWait after it, so that slow streams hold the
	// publisher StreamWait in all, not each in turn.
	published time.Time
}

// Broker carries task changes from the instance that stores them to the
// streams that follow the task (Config.Events). Implementations must be
// safe for concurrent use.
type Broker interface {
	// Publish delivers c to the current subscribers of c.TaskID, on this
	// instance and (for a shared broker) the others. A subscriber's
	// deliver may wait, boundedly (a stream whose queue is full waits
	// for room, Config.StreamWait, before it is cut): that is how a slow
	// reader slows down its task's producer. Delivery is at most once and
	// may be out of order: a stream that gets a change whose Seq is past
	// the next it expects catches up from the task as stored (each
	// artifact whole, then the status), and skips the late one when it
	// comes; a change lost for good is caught up at the next one.
	Publish(ctx context.Context, c *TaskChange)
	// Subscribe calls deliver with each change of the task published
	// from now on, until the returned cancel is called (after which
	// deliver is not called again, once cancel has returned). deliver
	// must return within a bounded time and must not call the Broker.
	Subscribe(taskID string, deliver func(*TaskChange)) (cancel func())
}

// LocalBroker is the in-process Broker: changes reach the streams of this
// process only. It is the default of a Server, and what package fleet's
// broker delivers through on each instance. The zero value is ready to
// use.
type LocalBroker struct {
	mu   sync.Mutex
	subs map[string]map[*localSub]struct{}
	n    int
}

type localSub struct {
	mu      sync.Mutex // held while deliver runs; cancel waits for it
	gone    bool
	deliver func(*TaskChange)
}

var _ Broker = (*LocalBroker)(nil)

// NewLocalBroker returns an empty LocalBroker.
func NewLocalBroker() *LocalBroker { return &LocalBroker{} }

// Publish calls the deliver function of each subscriber of c.TaskID, one
// after the other, outside the broker's lock (a deliver that waits holds
// up this task's publisher only); a subscription cancelled meanwhile is
// not called.
func (b *LocalBroker) Publish(_ context.Context, c *TaskChange) {
	b.mu.Lock()
	set := b.subs[c.TaskID]
	if len(set) == 0 {
		b.mu.Unlock()
		return
	}
	subs := make([]*localSub, 0, len(set))
	for sub := range set {
		subs = append(subs, sub)
	}
	b.mu.Unlock()
	for _, sub := range subs {
		sub.mu.Lock()
		if !sub.gone {
			sub.deliver(c)
		}
		sub.mu.Unlock()
	}
}

// Subscribe adds deliver to the task's subscribers.
func (b *LocalBroker) Subscribe(taskID string, deliver func(*TaskChange)) func() {
	sub := &localSub{deliver: deliver}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[string]map[*localSub]struct{})
	}
	set := b.subs[taskID]
	if set == nil {
		set = make(map[*localSub]struct{}, 1)
		b.subs[taskID] = set
	}
	set[sub] = struct{}{}
	b.n++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			// Out of the set first, so that no new Publish picks it
			// (a publisher busy with it may hold sub.mu a while);
			// then wait for a deliver in progress, and mark it gone
			// for a Publish that picked it before.
			b.mu.Lock()
			delete(set, sub)
			if cur, ok := b.subs[taskID]; ok && len(cur) == 0 {
				delete(b.subs, taskID)
			}
			b.n--
			b.mu.Unlock()
			sub.mu.Lock()
			sub.gone = true
			sub.mu.Unlock()
		})
	}
}

// Subscribers returns the number of subscriptions open.
func (b *LocalBroker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// Following reports whether the task has a subscriber here.
func (b *LocalBroker) Following(taskID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[taskID]) > 0
}

// publish sends the events of a change just stored as t (its Seq).
func (s *Server) publish(t *Task, events ...TaskEvent) {
	if len(events) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	s.events.Publish(ctx, &TaskChange{TaskID: t.ID, ContextID: t.ContextID, Seq: t.Seq, Events: events, published: time.Now()})
	cancel()
}

// changeEvents returns the events of a change that added artifacts (whole)
// and set status, in stream order.
func changeEvents(artifacts []Artifact, status *TaskStatus) []TaskEvent {
	evs := make([]TaskEvent, 0, len(artifacts)+1)
	for i := range artifacts {
		evs = append(evs, TaskEvent{Artifact: &artifacts[i], LastChunk: true})
	}
	if status != nil {
		evs = append(evs, TaskEvent{Status: status})
	}
	return evs
}
