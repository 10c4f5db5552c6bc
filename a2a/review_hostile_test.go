package a2a

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
)

// bigHistoryTask stores a task waiting for input (the test agent's "ask")
// whose history holds n messages, built directly: building it through n
// continuations is what the review found quadratic.
func bigHistoryTask(t *testing.T, s *Server, n int) string {
	t.Helper()
	a := call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"ask"}]}}`))
	id, _ := get(parse(t, a.result), "task", "id").(string)
	if id == "" {
		t.Fatalf("ask: %+v", a)
	}
	tk, _ := s.Task(id)
	h := make([]Message, n)
	for i := range h {
		h[i] = tk.History[i%len(tk.History)]
	}
	if _, err := s.Tasks().Update(context.Background(), id, func(old *Task) (*Task, error) {
		nt := *old
		nt.History = h
		return &nt, nil
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

func askMore(id string, i int) string {
	return req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"more-`+strconv.Itoa(i)+`","taskId":"`+id+`","parts":[{"text":"ask"}]},"configuration":{"historyLength":0}}`)
}

// A continued message costs about its own size, not the task's history:
// each one copied the whole history (slices.Concat) under the store's
// lock, 20 MB for a 300-byte message at 100,000 messages, so a client
// could make the server allocate gigabytes a second and hold every other
// A2A request behind the lock. (Found by review on 2026-12-06.)
func TestHostileContinuationCostsItsSize(t *testing.T) {
	const n, rounds = 20000, 20
	s := newTestServer(t, nil)
	id := bigHistoryTask(t, s, n)
	if a := call(t, s, "", askMore(id, 0)); a.code != 0 {
		t.Fatalf("first continuation: %+v", a)
	}
	bodies := make([]string, rounds)
	for i := range bodies {
		bodies[i] = askMore(id, i+1)
	}
	var bad answer
	cost := memtest.Allocated(func() {
		for _, b := range bodies {
			if a := call(t, s, "", b); a.code != 0 {
				bad = a
			}
		}
	})
	if bad.status != 0 {
		t.Fatalf("a continuation failed: %+v", bad)
	}
	per := cost / rounds
	t.Logf("%d continuations of a task of %d messages: %d bytes allocated each", rounds, n, per)
	if per > 64<<10 {
		t.Errorf("a continuation allocated %d bytes: it copies the history of %d messages (%d bytes a message)", per, n, per/n)
	}
	tk, _ := s.Task(id)
	if got, want := len(tk.History), n+2*(rounds+1); got != want {
		t.Fatalf("history of %d messages, want %d", got, want)
	}
	for i := range rounds + 1 {
		if m := tk.History[n+2*i]; m.MessageID != "more-"+strconv.Itoa(i) {
			t.Fatalf("history[%d] is %q, want more-%d", n+2*i, m.MessageID, i)
		}
	}
	if st := memStore(s); st.bytes != taskSize(tk) {
		t.Errorf("the store counts %d bytes, the task is %d", st.bytes, taskSize(tk))
	}
}

// Two successors of one task (a TaskStore may call its update function
// more than once) never share the slots after it, and a snapshot a client
// or agent appends to does not write into the stored history.
func TestHostileHistorySharing(t *testing.T) {
	msg := func(id string) Message { return Message{MessageID: id, Role: RoleUser, Parts: PartsOf(TextPart(id))} }
	var base Task
	appendHistory(&base, &Task{History: []Message{msg("0")}}, msg("1"))
	var a, b Task
	appendHistory(&a, &base, msg("a"))
	appendHistory(&b, &base, msg("b"))
	if a.History[2].MessageID != "a" || b.History[2].MessageID != "b" || len(base.History) != 2 {
		t.Fatalf("siblings share a slot: a %q, b %q", a.History[2].MessageID, b.History[2].MessageID)
	}
	if cap(a.History) != len(a.History) {
		t.Errorf("a stored history has room (cap %d, len %d): an append to a snapshot would write into it", cap(a.History), len(a.History))
	}
	grown := append(a.History, msg("x"))
	var c Task
	appendHistory(&c, &a, msg("c"))
	if grown[3].MessageID != "x" || c.History[3].MessageID != "c" {
		t.Errorf("an append to a snapshot and a successor share a slot: %q, %q", grown[3].MessageID, c.History[3].MessageID)
	}
	if historySize(&c) < messageSize(&c.History[3])*int64(len(c.History)) {
		t.Errorf("size estimate %d is below the messages'", historySize(&c))
	}

	// A continuation refused by the store's bound gives back its slots:
	// the next one still appends in place, and the history is right.
	s := newTestServer(t, func(cfg *Config) { cfg.MaxTaskBytes = 512 << 10 })
	id := bigHistoryTask(t, s, 100)
	if a := call(t, s, "", askMore(id, 0)); a.code != 0 {
		t.Fatalf("continuation: %+v", a)
	}
	big := req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"big","taskId":"`+id+`","parts":[{"text":"ask"},{"text":"`+strings.Repeat("x", 600<<10)+`"}]}}`)
	if a := call(t, s, "", big); a.code != -32602 {
		t.Fatalf("a message past the budget: %+v", a)
	}
	before, _ := s.Task(id)
	if a := call(t, s, "", askMore(id, 1)); a.code != 0 {
		t.Fatalf("continuation after a refusal: %+v", a)
	}
	after, _ := s.Task(id)
	if after.hist == nil || after.hist != before.hist {
		t.Error("the continuation after a refused one copied the history")
	}
	if got := after.History[len(after.History)-2].MessageID; got != "more-1" {
		t.Errorf("last client message %q, want more-1", got)
	}
}

// An artifact built in chunks costs each chunk its own parts: each one
// copied (and decoded into a 144-byte Part) every part before it, so the
// demo's stream skill made an 8 KB message of 1000 chunks allocate 155 MB.
// (Found by review on 2026-12-06.)
func TestHostileChunkedArtifactCostsItsChunks(t *testing.T) {
	const warm, rounds = 900, 100
	s := newTestServer(t, nil)
	id := bigHistoryTask(t, s, 1)
	ctx := context.Background()
	chunk := func(i int) {
		u := ArtifactUpdate{Artifact: Artifact{ArtifactID: "out", Parts: PartsOf(TextPart("c" + strconv.Itoa(i)))}, Append: i > 0}
		if _, err := s.UpdateArtifact(ctx, id, u); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	for i := range warm {
		chunk(i)
	}
	cost := memtest.Allocated(func() {
		for i := warm; i < warm+rounds; i++ {
			chunk(i)
		}
	})
	per := cost / rounds
	t.Logf("chunks %d to %d: %d bytes allocated each", warm, warm+rounds, per)
	if per > 16<<10 {
		t.Errorf("a chunk allocated %d bytes: it copies the %d parts before it", per, warm)
	}
	tk, _ := s.Task(id)
	ps := tk.Artifacts[0].Parts
	if ps.Len() != warm+rounds {
		t.Fatalf("%d parts, want %d", ps.Len(), warm+rounds)
	}
	for i, p := range ps.All() {
		if p.Text != "c"+strconv.Itoa(i) {
			t.Fatalf("part %d is %q", i, p.Text)
		}
	}
	if st := memStore(s); st.bytes != taskSize(tk) {
		t.Errorf("the store counts %d bytes, the task is %d", st.bytes, taskSize(tk))
	}
}

// Streams of one task that do not read hold up the task's publisher for
// StreamWait in all, not StreamWait each: with the waits one after the
// other, n such streams (any client may open them, up to MaxStreams) held
// one change, and the CancelTask or agent that made it, n times
// StreamWait, far past the handler deadline. Each stream still has
// StreamWait from the change's publication to make room. (Found by review
// on 2026-12-06.)
func TestHostileSlowStreamsHoldPublisherOnce(t *testing.T) {
	const n, wait = 3, 400 * time.Millisecond
	s, _, addr := streamServer(t, fastserver.Config{WriteTimeout: time.Minute}, func(c *Config) { c.StreamQueue, c.StreamWait = 4, wait })
	id := holdTask(t, s)
	b := s.events.(*LocalBroker)
	for range n {
		c := post(t, addr, "1.0", streamReq(1, "SubscribeToTask", `{"id":"`+id+`"}`))
		if tc, ok := c.conn.(*net.TCPConn); ok {
			tc.SetReadBuffer(4096)
		}
	}
	waitUntil(t, "subscribed", func() bool { return b.Subscribers() == n })
	big := strings.Repeat("x", 64<<10)
	var longest time.Duration
	sent := 0
	for ; sent < 2000 && b.Subscribers() > 0; sent++ {
		u := ArtifactUpdate{Artifact: Artifact{ArtifactID: "big", Parts: PartsOf(TextPart(big))}}
		start := time.Now()
		if _, err := s.UpdateArtifact(context.Background(), id, u); err != nil {
			t.Fatal(err)
		}
		longest = max(longest, time.Since(start))
	}
	if b.Subscribers() != 0 {
		t.Fatalf("%d streams not cut after %d changes", b.Subscribers(), sent)
	}
	t.Logf("%d slow streams cut after %d changes; the longest change took %v", n, sent, longest)
	if longest > 2*wait {
		t.Errorf("a change was held %v by %d slow streams (StreamWait %v)", longest, n, wait)
	}
}

// A stream cut for reading too slowly unsubscribes at the cut, not when
// its handler notices: a producer faster than the handler (a chunk is
// now a few microseconds) sent hundreds of changes to the cut stream's
// no-op subscription first, and TestStreamSlowReaderCut counted them.
// (Found by review on 2026-12-06.)
func TestHostileCutStreamUnsubscribes(t *testing.T) {
	const wait = 100 * time.Millisecond
	s, _, addr := streamServer(t, fastserver.Config{WriteTimeout: time.Minute}, func(c *Config) { c.StreamQueue, c.StreamWait = 4, wait })
	id := holdTask(t, s)
	b := s.events.(*LocalBroker)
	c := post(t, addr, "1.0", streamReq(1, "SubscribeToTask", `{"id":"`+id+`"}`))
	if tc, ok := c.conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	waitUntil(t, "subscribed", func() bool { return b.Subscribers() == 1 })
	big := strings.Repeat("x", 64<<10)
	cutAt, sent := -1, 0
	for ; sent < 3000 && b.Subscribers() > 0; sent++ {
		start := time.Now()
		if _, err := s.UpdateArtifact(context.Background(), id, ArtifactUpdate{Artifact: Artifact{ArtifactID: "big", Parts: PartsOf(TextPart(big))}}); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) >= wait {
			// The last change held StreamWait is the one that cut the
			// stream: the first such one may be a stall of a loaded
			// machine (a CI run under -race counted 289 changes "after"
			// a pause that came before the cut).
			cutAt = sent
		}
	}
	if cutAt < 0 || b.Subscribers() != 0 {
		t.Fatalf("not cut after %d changes (%d subscribers)", sent, b.Subscribers())
	}
	if after := sent - cutAt - 1; after > 20 {
		t.Errorf("%d changes went to the stream's subscription after it was cut", after)
	}
}
