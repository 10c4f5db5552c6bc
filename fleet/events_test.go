package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

func testChange(id string, seq uint64) *a2a.TaskChange {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123e6, time.UTC)
	return &a2a.TaskChange{TaskID: id, ContextID: "ctx-" + id, Seq: seq, Events: []a2a.TaskEvent{
		{Artifact: &a2a.Artifact{ArtifactID: "a1", Name: "out", Parts: a2a.PartsOf(a2a.TextPart("chunk é\n"), a2a.Part{Kind: a2a.PartData, Data: json.RawMessage(`{"k":[1,2]}`)}), Metadata: json.RawMessage(`{"m":true}`)}, Append: true, LastChunk: seq%2 == 0},
		{Status: &a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at, Message: &a2a.Message{MessageID: "s1", Role: a2a.RoleAgent, Parts: a2a.PartsOf(a2a.TextPart("step"))}}},
	}}
}

func TestChangeEncoding(t *testing.T) {
	c := testChange("t-1", 4)
	msg, err := encodeChange("me", c)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "me\nt-1\n"
	if string(msg[:len(prefix)]) != prefix {
		t.Fatalf("message %q", msg)
	}
	got, err := decodeChange("t-1", msg[len(prefix):])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, c)
	}
	for _, bad := range []string{`{`, `{"seq":0,"ev":[]}`, `{"seq":1,"ev":[{}]}`} {
		if _, err := decodeChange("x", []byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// twoInstances starts a Redis and two Fleets on it under prefix, "a" and
// "b", with their Brokers (closed when the test ends).
func twoInstances(t *testing.T, prefix string) (r *services.Redis, fa, fb *Fleet, ba, bb *Broker) {
	t.Helper()
	r = services.StartRedis(t)
	fa, fb = newFleet(t, r, "a", prefix), newFleet(t, r, "b", prefix)
	ba, bb = fa.Broker(), fb.Broker()
	t.Cleanup(ba.Close)
	t.Cleanup(bb.Close)
	return r, fa, fb, ba, bb
}

// Two instances on one Redis: a change published through one reaches the
// subscribers of the task on the other (and its own at once), not those of
// other tasks; an instance does not deliver its own change twice.
func TestBrokerAcrossInstances(t *testing.T) {
	r, fa, fb, ba, bb := twoInstances(t, "ev:")
	onA := make(chan *a2a.TaskChange, 16)
	onB := make(chan *a2a.TaskChange, 16)
	other := make(chan *a2a.TaskChange, 16)
	defer ba.Subscribe("t-1", func(c *a2a.TaskChange) { onA <- c })()
	defer bb.Subscribe("t-1", func(c *a2a.TaskChange) { onB <- c })()
	defer bb.Subscribe("t-2", func(c *a2a.TaskChange) { other <- c })()
	time.Sleep(200 * time.Millisecond) // both listening
	for seq := uint64(1); seq <= 3; seq++ {
		ba.Publish(context.Background(), testChange("t-1", seq))
	}
	for seq := uint64(1); seq <= 3; seq++ {
		for name, ch := range map[string]chan *a2a.TaskChange{"a": onA, "b": onB} {
			select {
			case c := <-ch:
				if !reflect.DeepEqual(c, testChange("t-1", seq)) {
					t.Errorf("%s got %+v, want seq %d", name, c, seq)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: change %d did not arrive", name, seq)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	if len(onA) != 0 || len(onB) != 0 || len(other) != 0 {
		t.Errorf("extra deliveries: a %d, b %d, other task %d", len(onA), len(onB), len(other))
	}
	// The other way, after B's listener lost Redis and found it again.
	r.Restart()
	waitUp(t, fb)
	waitUp(t, fa)
	deadline := time.Now().Add(10 * time.Second)
	for got := false; !got; {
		if time.Now().After(deadline) {
			t.Fatal("no change from b reached a after a Redis restart")
		}
		bb.Publish(context.Background(), testChange("t-1", 9))
		select {
		case c := <-onA:
			got = c.Seq == 9
		case <-time.After(200 * time.Millisecond):
		}
		for len(onB) > 0 {
			<-onB
		}
	}
}

// TestSlowStreamDoesNotStallInstance: a stream on instance B that stops
// reading (its deliver waits 1 s a change) holds up only the delivery of
// remote changes, never the Redis client's reader that every call of B
// shares: B's task store answers at once and B stays up, while A
// publishes changes of that task and 40 of others. (Found by review on
// 2026-12-05: the reader waited in the delivery, B's calls passed their
// timeout, and B marked itself down with Redis fine.)
func TestSlowStreamDoesNotStallInstance(t *testing.T) {
	_, _, fb, ba, bb := twoInstances(t, "slow:")
	sb := newStore(t, fb, TaskOptions{})
	var got atomic.Int32
	defer bb.Subscribe("slow", func(c *a2a.TaskChange) { got.Add(1); time.Sleep(time.Second) })()
	time.Sleep(200 * time.Millisecond) // the subscription is in place
	ctx := context.Background()
	changes := fb.changes.Get()
	ba.Publish(ctx, testChange("slow", 1))
	ba.Publish(ctx, testChange("slow", 2))
	for i := range 40 {
		ba.Publish(ctx, testChange("other", uint64(i+3)))
	}
	for deadline := time.Now().Add(5 * time.Second); got.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	for range 5 {
		if _, err := sb.Get(ctx, "no-such-task"); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("B's task store while one of its streams is slow: %v", err)
		}
	}
	if !fb.Up() || fb.changes.Get() != changes {
		t.Errorf("B turned itself down because one of its streams was slow")
	}
}

// TestPublishReachesOthersFirst: a change published on A whose local
// streams are slow (each waits 1 s, as a full a2a follower does before it
// is cut) still reaches B's stream, within the 1 s context a2a gives a
// publication: the other instances are published to first.
func TestPublishReachesOthersFirst(t *testing.T) {
	_, fa, _, ba, bb := twoInstances(t, "first:")
	onB := make(chan *a2a.TaskChange, 16)
	defer bb.Subscribe("t-1", func(c *a2a.TaskChange) { onB <- c })()
	defer ba.Subscribe("t-1", func(c *a2a.TaskChange) { time.Sleep(time.Second) })()
	defer ba.Subscribe("t-1", func(c *a2a.TaskChange) { time.Sleep(time.Second) })()
	time.Sleep(200 * time.Millisecond) // the subscriptions are in place
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	final := &a2a.TaskChange{TaskID: "t-1", ContextID: "c", Seq: 7, Events: []a2a.TaskEvent{{Status: &a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Now()}}}}
	ba.Publish(ctx, final)
	select {
	case c := <-onB:
		if c.Seq != 7 {
			t.Errorf("B got seq %d, want 7", c.Seq)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("the change published on A never reached B's stream (A up %v, errors %d)", fa.Up(), fa.errs.Get())
	}
}

// TestEventQueueBytes: the queue of remote changes waiting for delivery
// holds at most eventQueueBytes, whatever their count (a change carries
// its task: 4,096 of 1 MiB each were some 4 GiB while delivery stalled);
// past it a change is dropped and counted, and room comes back as
// delivery takes them.
func TestEventQueueBytes(t *testing.T) {
	b := &Broker{queue: make(chan []byte, eventQueue), dropped: metrics.NewSet().NewCounter("dropped")}
	big := strings.Repeat("x", 1<<20)
	for range 100 {
		b.enqueue(big)
	}
	if n, q := len(b.queue), b.queued.Load(); n != eventQueueBytes>>20 || q != eventQueueBytes || b.dropped.Get() != uint64(100-n) {
		t.Fatalf("100 changes of 1 MiB: %d queued (%d bytes), %d dropped; want %d, %d bytes", n, q, b.dropped.Get(), eventQueueBytes>>20, eventQueueBytes)
	}
	msg := <-b.queue
	b.queued.Add(-int64(len(msg))) // as deliver does
	b.enqueue(big)
	if len(b.queue) != eventQueueBytes>>20 {
		t.Errorf("after one delivery: %d queued", len(b.queue))
	}
	for range eventQueue + 10 {
		b.enqueue("m")
	}
	if len(b.queue) > eventQueue {
		t.Errorf("%d queued, past eventQueue", len(b.queue))
	}
}
