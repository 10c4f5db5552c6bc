package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Skills of the demo agent.
const (
	// SkillEcho answers with a completed task whose artifact repeats the
	// message's text parts (the default skill).
	SkillEcho = "echo"
	// SkillWait answers with a task that stays working until it is
	// canceled or its deadline passes, then completes.
	SkillWait = "wait"
	// SkillStream answers with a working task whose artifact, the
	// message's text, then comes in chunks (append, lastChunk) with a
	// working status between them, and completes: what
	// SendStreamingMessage shows as it happens.
	SkillStream = "stream"
)

// Limits of the stream skill.
const (
	// DefaultChunks and MaxChunks bound params.metadata.chunks.
	DefaultChunks, MaxChunks = 4, 1000
	// DefaultChunkDelay and MaxChunkDelay bound params.metadata.delayMs,
	// the pause before each chunk.
	DefaultChunkDelay, MaxChunkDelay = 100 * time.Millisecond, 10 * time.Second
	// DefaultMaxStreaming bounds the stream skill's works in progress in
	// one process. Each holds its message's text, up to the body ceiling
	// (1 MiB by default), for as long as MaxChunks × MaxChunkDelay
	// (about 2.8 hours), with a goroutine and a timer: at most about
	// 1 GiB at the default ceiling. That is a tenth of
	// DefaultMaxWaiting, whose tasks hold no text; 10,000 would let
	// idle clients pin 10 GiB.
	DefaultMaxStreaming = 1000
)

// Limits of the wait skill.
const (
	// DefaultWait is the wait skill's deadline when the message names
	// none.
	DefaultWait = 30 * time.Second
	// MaxWait is the longest deadline the wait skill takes.
	MaxWait = time.Hour
	// DefaultMaxWaiting bounds the tasks waiting in one process.
	DefaultMaxWaiting = 10000
)

// A2ACard returns the demo agent card (contract §5): the skills echo,
// wait and stream; streaming (SendStreamingMessage, SubscribeToTask); no
// push notifications, no extended card. The endpoint members are filled
// in per request by the server.
func A2ACard() a2a.AgentCard {
	return a2a.AgentCard{
		Name:        "rpcedge",
		Description: "rpcedge demo agent: answers each message with a completed task whose artifact repeats the message's text parts; skill wait keeps a task working until it is canceled or a deadline passes; skill stream sends the text back in chunks.",
		Version:     "0.1.0",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         true,
			PushNotifications: false,
			ExtendedAgentCard: false,
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID:          SkillEcho,
			Name:        "Echo",
			Description: "Repeats the text parts of the message as the task's artifact.",
			Tags:        []string{"echo", "demo"},
			Examples:    []string{"hello"},
		}, {
			ID:          SkillWait,
			Name:        "Wait",
			Description: "Keeps the task working until it is canceled or params.metadata.seconds (default 30, at most 3600) pass, then completes it. Name it with params.metadata.skillId \"wait\".",
			Tags:        []string{"wait", "demo"},
			Examples:    []string{"hold this for a while"},
		}, {
			ID:          SkillStream,
			Name:        "Stream",
			Description: "Sends the message's text back as the artifact \"stream\" in params.metadata.chunks pieces (default 4, at most 1000), params.metadata.delayMs apart (default 100, 0 to 10000), a working status between them, then completes. Follow it with SendStreamingMessage or SubscribeToTask.",
			Tags:        []string{"stream", "demo"},
			Examples:    []string{"tell me this slowly"},
		}},
	}
}

// A2AOptions configures the demo A2A server.
type A2AOptions struct {
	// PublicURL is the base URL the card names the endpoint under ("" for
	// the request's Host).
	PublicURL string
	// Tasks is the task store; nil for the default bounded in-memory one
	// (10,000 tasks, 64 MiB).
	Tasks a2a.TaskStore
	// Events carries task changes to streams; nil for the in-process
	// broker (a fleet shares one, with Tasks).
	Events a2a.Broker
	// StreamQueue and KeepAlive are a2a.Config's (0: their defaults).
	StreamQueue int
	KeepAlive   time.Duration
	// MaxWaiting bounds the wait skill's tasks waiting in this process;
	// past it a wait task is rejected. A task stops counting at its
	// deadline, or when its cancel reaches this process (from any
	// instance of a fleet). 0 means DefaultMaxWaiting.
	MaxWaiting int
	// MaxStreaming bounds the stream skill's works in progress in this
	// process; past it a stream task is rejected. Each holds its
	// message's text (up to the body ceiling) until its last chunk is
	// sent, it is canceled or Close; one whose
	// reply is never stored holds its slot until Close or for at most
	// 30 s. 0 means DefaultMaxStreaming.
	MaxStreaming int
	// MaxTasks, MaxTaskBytes, MaxOwnerTasks and MaxOwnerTaskBytes are
	// a2a.Config's, for the in-memory store (0: their defaults).
	MaxTasks          int
	MaxTaskBytes      int64
	MaxOwnerTasks     int
	MaxOwnerTaskBytes int64
	// Auth, when set, protects the endpoint with OAuth: the card declares
	// its security schemes (A2AAuthCard) and an extended card
	// (A2AExtendedCard) is served to authenticated callers.
	Auth *A2AAuth
}

// A2AAuth is the demo agent's OAuth configuration.
type A2AAuth struct {
	// Resource checks the tokens of /a2a.
	Resource *auth.Resource
	// TokenURL and MetadataURL are the authorization server's token
	// endpoint and metadata, as the card names them.
	TokenURL, MetadataURL string
	// Scopes are required on every call.
	Scopes []string
}

// A2ADemo is the demo A2A server with its background work (the wait
// skill's deadlines, the stream skill's chunks). Close stops that work.
type A2ADemo struct {
	// Server is the A2A server.
	Server *a2a.Server

	mu      sync.Mutex
	waiting map[string]*waiter // the wait skill's slots, by task id
	max     int
	// streams are the stream skill's slots (A2AOptions.MaxStreaming),
	// from admission to the end of the chunks.
	streams    map[*streamSlot]struct{}
	maxStreams int
	closed     bool
	pending    sync.WaitGroup
	stop       chan struct{} // closed by Close: the stream skill's work ends
	// storeWait is how long a wait or stream task's reply may take to be
	// stored (Reply.Then) before its slot is given back: a reply the
	// server could not store (the store unreachable or full, the task
	// gone final meanwhile) leaves no task to cancel or complete, and
	// its Then never runs.
	storeWait time.Duration
}

// waitStoreWait is A2ADemo.storeWait: past any handler deadline.
const waitStoreWait = 30 * time.Second

// NewA2A returns the demo A2A server of contract §5 with the wait skill.
func NewA2A(o A2AOptions) (*A2ADemo, error) {
	d := &A2ADemo{waiting: make(map[string]*waiter), max: o.MaxWaiting, streams: make(map[*streamSlot]struct{}), maxStreams: o.MaxStreaming,
		stop: make(chan struct{}), storeWait: waitStoreWait}
	if d.max <= 0 {
		d.max = DefaultMaxWaiting
	}
	if d.maxStreams <= 0 {
		d.maxStreams = DefaultMaxStreaming
	}
	cfg := a2a.Config{
		Card:        A2ACard(),
		Agent:       a2a.AgentFunc(d.handle),
		PublicURL:   o.PublicURL,
		Tasks:       o.Tasks,
		Events:      o.Events,
		StreamQueue: o.StreamQueue,
		KeepAlive:   o.KeepAlive,

		MaxTasks:          o.MaxTasks,
		MaxTaskBytes:      o.MaxTaskBytes,
		MaxOwnerTasks:     o.MaxOwnerTasks,
		MaxOwnerTaskBytes: o.MaxOwnerTaskBytes,
	}
	if a := o.Auth; a != nil {
		cfg.Auth = a.Resource
		cfg.Card = A2AAuthCard(a.TokenURL, a.MetadataURL, a.Scopes)
		ext := A2AExtendedCard(cfg.Card)
		cfg.ExtendedCard = &ext
	}
	s, err := a2a.New(cfg)
	if err != nil {
		return nil, err
	}
	d.Server = s
	return d, nil
}

// A2A returns the demo A2A server with the in-memory task store.
// publicURL is the base URL the card names the endpoint under ("" for the
// request's Host); New's error for a malformed one is returned.
func A2A(publicURL string) (*a2a.Server, error) {
	d, err := NewA2A(A2AOptions{PublicURL: publicURL})
	if err != nil {
		return nil, err
	}
	return d.Server, nil
}

func (d *A2ADemo) handle(ctx context.Context, c *a2a.Call) (*a2a.Reply, error) {
	switch c.SkillID {
	case SkillWait:
		return d.wait(c)
	case SkillStream:
		return d.stream(c)
	}
	return Echo(ctx, c)
}

// waiter is a wait task's slot in this process (one of
// A2AOptions.MaxWaiting): the timer of its deadline and its subscription
// to the task's changes, through which a cancel frees the slot. Its fields
// are guarded by A2ADemo.mu; whoever takes it out of A2ADemo.waiting ends
// the subscription.
type waiter struct {
	timer  *time.Timer
	guard  *time.Timer // frees the slot if the reply is never stored
	unsub  func()      // nil until subscribed, and once taken to be called
	ended  bool        // the task reached a final state: nothing to complete
	stored bool        // the reply was stored (Reply.Then ran)
}

// wait is the wait skill: the task stays working until it is canceled or
// its deadline passes; then this process completes it (UpdateTask), unless
// a cancel came first, wherever it came from. The task's slot in this
// process is freed by its deadline, or as soon as the cancel reaches this
// process (Broker: at once in-process, over pub/sub in a fleet; should a
// fleet lose that message, at the deadline); a reply the server could not
// store (its store unreachable or full) gives the slot back after
// storeWait (30 s), there being no task to cancel. A task whose process dies
// before its deadline stays working until it is canceled or its store
// forgets it.
func (d *A2ADemo) wait(c *a2a.Call) (*a2a.Reply, error) {
	if c.Task != nil {
		return nil, &fastserver.Error{Code: a2a.CodeUnsupportedOperation, Message: "a waiting task takes no more messages: cancel it, or let its deadline pass"}
	}
	dur, e := waitFor(c.Metadata)
	if e != nil {
		return nil, e
	}
	deadline := time.Now().Add(dur).UTC()
	id, w := c.TaskID, new(waiter)
	d.mu.Lock()
	if d.closed || len(d.waiting) >= d.max {
		d.mu.Unlock()
		return &a2a.Reply{State: a2a.TaskStateRejected, Status: textMessage("too many tasks are waiting in this process; try again later")}, nil
	}
	d.pending.Add(1)
	d.waiting[id] = w
	w.timer = time.AfterFunc(dur, func() { d.finish(id, w, dur) })
	d.mu.Unlock()
	// Subscribed before the reply is stored (after this returns), so no
	// cancel can come before; outside d.mu, which deliver takes.
	unsub := d.Server.Events().Subscribe(id, func(ch *a2a.TaskChange) {
		if endsTask(ch) {
			d.release(id, w)
		}
	})
	d.mu.Lock()
	if d.waiting[id] == w {
		w.unsub, unsub = unsub, nil
	}
	d.mu.Unlock()
	if unsub != nil { // freed meanwhile (the deadline passed, or Close)
		unsub()
	}
	guard := time.AfterFunc(d.storeWait, func() {
		d.mu.Lock()
		stored := w.stored
		d.mu.Unlock()
		if !stored {
			d.release(id, w)
		}
	})
	d.mu.Lock()
	w.guard = guard
	d.mu.Unlock()
	return &a2a.Reply{State: a2a.TaskStateWorking,
		Status: textMessage("working until canceled, or until " + deadline.Format(time.RFC3339Nano)),
		Then: func() {
			d.mu.Lock()
			w.stored = true
			g := w.guard
			d.mu.Unlock()
			if g != nil {
				g.Stop()
			}
		}}, nil
}

// release frees the slot of a wait task that reached a final state (a
// cancel, from this process or another): its timer stopped, its
// subscription ended. It runs in the Broker's deliver, which must not
// call the Broker: the subscription is ended on a goroutine of its own
// (counted in pending, so that Close waits for it).
func (d *A2ADemo) release(id string, w *waiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiting[id] != w {
		return // freed already: the deadline passed, or Close
	}
	delete(d.waiting, id)
	w.ended = true
	if unsub := w.unsub; unsub != nil {
		w.unsub = nil
		d.pending.Add(1) // before the timer's count is given back
		go func() {
			defer d.pending.Done()
			unsub()
		}()
	}
	if w.timer.Stop() {
		d.pending.Done()
	}
}

// finish completes a waiting task at its deadline, unless it was canceled
// meanwhile.
func (d *A2ADemo) finish(id string, w *waiter, dur time.Duration) {
	defer d.pending.Done()
	d.mu.Lock()
	if d.waiting[id] == w {
		delete(d.waiting, id)
	}
	unsub, ended := w.unsub, w.ended
	w.unsub = nil
	d.mu.Unlock()
	if unsub != nil {
		unsub()
	}
	if ended {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := &a2a.Reply{State: a2a.TaskStateCompleted,
		Status:    textMessage("done: the deadline passed"),
		Artifacts: []a2a.Artifact{{Name: "wait", Parts: a2a.PartsOf(a2a.TextPart("waited " + dur.String()))}}}
	// A deadline shorter than the answer: the task may not be stored
	// yet; give it half a second. Any other error means the task was
	// canceled (ErrTaskFinal) or evicted, or the store is unreachable:
	// nothing to complete.
	for try := 0; try < 20; try++ {
		_, err := d.Server.UpdateTask(ctx, id, done)
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Waiting returns the number of wait tasks whose deadline is pending in
// this process.
func (d *A2ADemo) Waiting() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.waiting)
}

// Streaming returns the number of the stream skill's works in progress
// in this process: those sending their chunks, and those admitted whose
// reply is not stored yet.
func (d *A2ADemo) Streaming() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.streams)
}

// Close stops the pending deadlines (their tasks stay working) and the
// stream skill's chunks (their tasks stay working), gives back the slots
// of stream replies not stored yet, and waits for the work in progress.
func (d *A2ADemo) Close() {
	d.mu.Lock()
	if !d.closed {
		close(d.stop)
	}
	d.closed = true
	for s := range d.streams {
		if !s.running { // those running give theirs back as they stop
			s.guard.Stop()
			delete(d.streams, s)
		}
	}
	var unsubs []func()
	for id, w := range d.waiting {
		if w.timer.Stop() {
			d.pending.Done()
		}
		if w.unsub != nil {
			unsubs = append(unsubs, w.unsub)
			w.unsub = nil
		}
		delete(d.waiting, id)
	}
	d.mu.Unlock()
	for _, unsub := range unsubs { // outside d.mu, which a deliver may wait for
		unsub()
	}
	d.pending.Wait()
}

// waitFor reads params.metadata.seconds: absent means DefaultWait; else a
// number above 0 and at most MaxWait's seconds.
func waitFor(meta []byte) (time.Duration, *fastserver.Error) {
	v, n := decode.Lookup(meta, "seconds")
	if n == 0 || string(v) == "null" {
		return DefaultWait, nil
	}
	s, err := strconv.ParseFloat(string(v), 64)
	if n > 1 || err != nil || v[0] == '"' || !(s > 0) || s > MaxWait.Seconds() || math.IsInf(s, 0) {
		return 0, fastserver.InvalidParams("metadata.seconds", fmt.Sprintf("metadata.seconds must be a number above 0 and at most %d", int(MaxWait.Seconds())))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// streamSlot is a stream-skill work's slot in this process (one of
// A2AOptions.MaxStreaming). It is held while it is in A2ADemo.streams;
// its fields are guarded by A2ADemo.mu.
type streamSlot struct {
	guard   *time.Timer // gives the slot back if the reply is never stored
	running bool        // Then took the slot: the chunks give it back
}

// stream is the stream skill: a working task whose artifact "stream", the
// text parts of the message, comes in chunks (the first one starts it,
// the others append, the last says so) with a working status between
// them; then the task completes. A cancel stops it at once.
//
// A slot is taken here, so that admission is decided under one lock and
// never goes past A2AOptions.MaxStreaming; the task is rejected when none
// is free. Then is not called when the outcome cannot be stored (the task
// went final meanwhile, or the store is down): the slot is then given
// back by its guard after storeWait (30 s), or by Close. Whoever takes
// the slot out of d.streams gives it back: the guard or Close (before
// Then), Then (after Close), or the end of sendChunks. Should the guard
// fire before a slow store lets Then run, Then takes a slot anew if one is
// free, or else moves the stored working task to rejected.
func (d *A2ADemo) stream(c *a2a.Call) (*a2a.Reply, error) {
	n, e := metaInt(c.Metadata, "chunks", DefaultChunks, 1, MaxChunks)
	if e != nil {
		return nil, e
	}
	ms, e := metaInt(c.Metadata, "delayMs", int(DefaultChunkDelay/time.Millisecond), 0, int(MaxChunkDelay/time.Millisecond))
	if e != nil {
		return nil, e
	}
	// The chunks are pieces of one string, sized before it is built and
	// cut at rune boundaries: a []rune of the text grown by append, and a
	// string per chunk, cost 27 times a 1 MiB message, against the 8 of
	// contract §3 (found by review on 2026-12-06).
	texts := c.Message.Parts.OfKind(a2a.PartText)
	size := 0
	for _, p := range texts.All() {
		size += len(p.Text)
	}
	var b strings.Builder
	b.Grow(size)
	for _, p := range texts.All() {
		b.WriteString(p.Text)
	}
	text := b.String()
	runes := utf8.RuneCountInString(text)
	if runes == 0 {
		return &a2a.Reply{State: a2a.TaskStateRejected, Status: textMessage("nothing to stream: the message has no text part")}, nil
	}
	n = min(n, runes)
	chunks := make([]string, n)
	start, r := 0, 0 // the byte and rune where chunk i starts
	for i := range n {
		end, next := start, (i+1)*runes/n
		for ; r < next; r++ {
			_, w := utf8.DecodeRuneInString(text[end:])
			end += w
		}
		chunks[i], start = text[start:end], end
	}
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return &a2a.Reply{State: a2a.TaskStateRejected, Status: textMessage("the server is shutting down")}, nil
	case len(d.streams) >= d.maxStreams:
		d.mu.Unlock()
		return &a2a.Reply{State: a2a.TaskStateRejected, Status: textMessage(tooManyStreams)}, nil
	}
	slot := new(streamSlot)
	d.streams[slot] = struct{}{}
	slot.guard = time.AfterFunc(d.storeWait, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !slot.running {
			delete(d.streams, slot)
		}
	})
	d.mu.Unlock()
	id, delay := c.TaskID, time.Duration(ms)*time.Millisecond
	// The work is counted in pending when it starts, in Then, not here:
	// Then is not called when the outcome cannot be stored, and a count
	// taken here would never be given back, leaving Close (and the
	// process's shutdown) waiting for ever.
	return &a2a.Reply{State: a2a.TaskStateWorking, Status: textMessage(fmt.Sprintf("streaming %d chunks", n)),
		Then: func() {
			d.mu.Lock()
			slot.guard.Stop()
			_, held := d.streams[slot]
			switch {
			case d.closed:
				delete(d.streams, slot)
				d.mu.Unlock()
				return
			case !held && len(d.streams) >= d.maxStreams:
				// The guard gave the slot back and it was taken:
				// the task, stored working, must still end.
				d.pending.Add(1)
				d.mu.Unlock()
				defer d.pending.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				d.Server.UpdateTask(ctx, id, &a2a.Reply{State: a2a.TaskStateRejected, Status: textMessage(tooManyStreams)})
				return
			}
			d.streams[slot] = struct{}{}
			slot.running = true
			d.pending.Add(1)
			d.mu.Unlock()
			defer func() {
				d.mu.Lock()
				delete(d.streams, slot)
				d.mu.Unlock()
				d.pending.Done()
			}()
			d.sendChunks(id, chunks, delay)
		}}, nil
}

// endsTask reports whether a change brings its task to a final state (a
// cancel, from this process or another).
func endsTask(ch *a2a.TaskChange) bool {
	for _, ev := range ch.Events {
		if ev.Status != nil && ev.Status.State.Final() {
			return true
		}
	}
	return false
}

// tooManyStreams is the status of a stream task rejected past
// A2AOptions.MaxStreaming.
const tooManyStreams = "too many streams are in progress in this process; try again later"

// sendChunks is the stream skill's work after the answer.
//
// A cancel (from this process or, through the Broker, another) ends the
// wait for the next chunk at once, so that the slot is free then, not up
// to MaxChunkDelay later.
func (d *A2ADemo) sendChunks(id string, chunks []string, delay time.Duration) {
	ctx := context.Background()
	ended := make(chan struct{})
	var endOnce sync.Once
	if delay > 0 {
		unsub := d.Server.Events().Subscribe(id, func(ch *a2a.TaskChange) {
			if endsTask(ch) {
				endOnce.Do(func() { close(ended) })
			}
		})
		defer unsub()
		// A cancel stored before the subscription (Then runs after the
		// reply is stored, on a goroutine of its own) was published to
		// nobody: the task says so.
		if tk, ok := d.Server.Task(id); ok && tk.Status.State.Final() {
			return
		}
	}
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for i, ch := range chunks {
		if delay > 0 {
			t.Reset(delay)
			select {
			case <-t.C:
			case <-d.stop:
				return
			case <-ended:
				return // canceled: its state is final already
			}
		}
		u := a2a.ArtifactUpdate{Artifact: a2a.Artifact{ArtifactID: "stream", Name: "stream", Parts: a2a.PartsOf(a2a.TextPart(ch))},
			Append: i > 0, LastChunk: i == len(chunks)-1}
		if _, err := d.Server.UpdateArtifact(ctx, id, u); err != nil {
			return // canceled, evicted, or the store is down: nothing more to send
		}
		if i < len(chunks)-1 {
			st := &a2a.Reply{State: a2a.TaskStateWorking, Status: textMessage(fmt.Sprintf("%d of %d chunks sent", i+1, len(chunks)))}
			if _, err := d.Server.UpdateTask(ctx, id, st); err != nil {
				return
			}
		}
	}
	d.Server.UpdateTask(ctx, id, &a2a.Reply{State: a2a.TaskStateCompleted, Status: textMessage(fmt.Sprintf("all %d chunks sent", len(chunks)))})
}

// metaInt reads the integer params.metadata[name]: absent or null is def;
// else a whole number from lo to hi.
func metaInt(meta []byte, name string, def, lo, hi int) (int, *fastserver.Error) {
	v, n := decode.Lookup(meta, name)
	if n == 0 || string(v) == "null" {
		return def, nil
	}
	k, err := strconv.Atoi(string(v))
	if n > 1 || err != nil || k < lo || k > hi {
		return 0, fastserver.InvalidParams("metadata."+name, fmt.Sprintf("metadata.%s must be a whole number from %d to %d", name, lo, hi))
	}
	return k, nil
}

func textMessage(s string) *a2a.Message {
	return &a2a.Message{Parts: a2a.PartsOf(a2a.TextPart(s))}
}

// Echo is the demo agent: a completed task with one artifact, "echo",
// whose parts repeat the message's text parts in order. The artifact
// shares the message's parts (a view of its text parts): nothing is
// copied. A message without a text part has nothing to echo: its task is
// rejected, with a status message that says why.
func Echo(_ context.Context, c *a2a.Call) (*a2a.Reply, error) {
	texts := c.Message.Parts.OfKind(a2a.PartText)
	if texts.Len() == 0 {
		return &a2a.Reply{
			State:  a2a.TaskStateRejected,
			Status: &a2a.Message{Parts: a2a.PartsOf(a2a.TextPart("nothing to echo: the message has no text part"))},
		}, nil
	}
	return &a2a.Reply{Artifacts: []a2a.Artifact{{Name: "echo", Parts: texts}}}, nil
}
