package a2a

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// NOTE: streams.
//
// SendStreamingMessage (message/stream) and SubscribeToTask
// (tasks/resubscribe) answer 200 text/event-stream through fastserver's
// Request.Stream, the one stream mechanism of the server: each event is a
// JSON-RPC response with the request's id whose result is a stream
// response (1.0: {"task"|"message"|"statusUpdate"|"artifactUpdate":…};
// 0.3: the kind-tagged object), the last one being the handler's own
// result. Every refusal before the first event is a plain JSON answer, in
// the contract's order: the params and the task first (as SendMessage and
// GetTask check them), then the stream itself: 503 / -32603 with
// Retry-After past fastserver's Config.MaxStreams, 406 / -32600 for a
// client whose Accept does not allow text/event-stream (or HTTP/1.0).
//
// A stream subscribes to its task's changes (Broker) before it reads or
// creates the task, so that nothing falls between the first event (the
// task) and the rest. It ends after a status that is final (completed,
// failed, canceled, rejected) or interrupted (input-required,
// auth-required): 0.3 marks that last status-update "final": true. It also
// ends, with the task's current status as its last event, when the server
// begins to shut down (fastserver.Stream.Stopping) and when
// Config.MaxStreamDuration passes; the client resubscribes (to another
// instance, in a fleet). A client that reads too slowly fills its queue of
// Config.StreamQueue changes and is cut (fastserver.Stream.Cut): no final
// event, the connection closed. An idle stream sends an SSE comment every
// Config.KeepAlive, which is also how a client gone is noticed (the write
// fails); then the handler returns and unsubscribes.

var (
	errTooManyStreams    = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "too many streams open: try again later", RetryAfter: 1}
	errNotEventStream    = &fastserver.Error{Status: 406, Code: decode.CodeInvalidRequest, Message: "streaming methods answer text/event-stream: the Accept header must allow it"}
	errStreamHTTP10      = &fastserver.Error{Status: 406, Code: decode.CodeInvalidRequest, Message: "streaming methods answer text/event-stream, which needs HTTP/1.1: the request is HTTP/1.0"}
	errNoStreamTransport = &fastserver.Error{Code: CodeUnsupportedOperation, Message: "streaming is not available on this transport"}
)

// subscribeFinal answers SubscribeToTask for a task in a final state: A2A
// 1.0 names UnsupportedOperationError (-32004). 0.3 names no error
// ("failures can occur if the task is no longer active"); the same one is
// answered.
func subscribeFinal(id string, st TaskState, v Version) *fastserver.Error {
	return &fastserver.Error{Code: CodeUnsupportedOperation,
		Message: "the task is in a final state (" + st.name(v) + "): there is nothing to subscribe to",
		Data:    taskData(id)}
}

// streamRefusal turns why a stream cannot start into its answer.
func streamRefusal(st *fastserver.Stream) error {
	err := st.Err()
	switch {
	case err == nil && st.Lines():
		// A stream of messages (stdio) carries one response per request:
		// A2A's stream is a series of them.
		return errNoStreamTransport
	case err == nil:
		return nil
	case errors.Is(err, fastserver.ErrStreamLimit):
		return errTooManyStreams
	case errors.Is(err, fastserver.ErrStreamHTTP10):
		return errStreamHTTP10
	case errors.Is(err, fastserver.ErrStreamNotAccepted):
		return errNotEventStream
	case errors.Is(err, fastserver.ErrStreamUnavailable):
		return errNoStreamTransport
	}
	return err
}

// streamMessage serves SendStreamingMessage and message/stream: the checks
// of SendMessage, then the stream.
func (s *Server) streamMessage(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	call, p, err := s.prepareSend(r, v)
	if err != nil {
		return dst, err
	}
	return r.Stream(dst, &sendStream{s: s, call: call, history: p.history, v: v})
}

type sendStream struct {
	s       *Server
	call    *Call
	history int
	v       Version
}

// ServeStream runs the agent and follows the task it creates or
// continues: the task (or the agent's direct message, alone), then its
// changes.
func (h *sendStream) ServeStream(st *fastserver.Stream, dst []byte) ([]byte, error) {
	s, call := h.s, h.call
	if err := streamRefusal(st); err != nil {
		return dst, err
	}
	f := s.follow(st, call.TaskID)
	defer f.cancel()
	ctx := st.Context()
	reply, err := s.runAgent(ctx, call)
	if err != nil {
		return dst, err
	}
	if reply.Message != nil {
		if err := st.Start(); err != nil {
			return dst, err
		}
		return appendReplyMessage(dst, reply.Message, call, h.v), nil
	}
	t, err := s.storeReply(ctx, call, reply)
	if err != nil {
		return dst, err
	}
	// The call holds copies of what it needs of the request, and from
	// here they are the stored task's, bounded by the store's bytes: the
	// body goes back now, not when the stream ends (MaxStreamDuration,
	// an hour), as SubscribeToTask's does (found by review on
	// 2026-12-07: a few streams of padded messages held the in-flight
	// budget every other request needs). While the agent runs it stays
	// charged, for the copies the agent holds.
	st.ReleaseBody()
	s.then(reply)
	return s.serveFollow(st, f, t, h.v, h.history, dst)
}

// subscribeToTask serves SubscribeToTask and tasks/resubscribe: params
// (-32602), the task (-32001), a task in a final state (-32004), then the
// stream.
func (s *Server) subscribeToTask(r *fastserver.Request, dst []byte, v Version) ([]byte, error) {
	id, _, e := taskParams(r.Msg, false)
	if e != nil {
		return dst, e
	}
	t, err := s.getOwned(r, id)
	if err != nil {
		return dst, storeError(err, id)
	}
	if t.Status.State.Final() {
		return dst, subscribeFinal(id, t.Status.State, v)
	}
	return r.Stream(dst, &subStream{s: s, id: id, v: v})
}

type subStream struct {
	s  *Server
	id string
	v  Version
}

// ServeStream subscribes, then reads the task again (it may have changed
// since the check) and follows it.
func (h *subStream) ServeStream(st *fastserver.Stream, dst []byte) ([]byte, error) {
	s := h.s
	if err := streamRefusal(st); err != nil {
		return dst, err
	}
	// What the stream needs of the request is in h: its body goes back
	// now, not when the stream ends (MaxStreamDuration, an hour).
	st.ReleaseBody()
	f := s.follow(st, h.id)
	defer f.cancel()
	t, err := s.tasks.Get(st.Context(), h.id)
	if err != nil {
		return dst, storeError(err, h.id)
	}
	if t.Status.State.Final() {
		return dst, subscribeFinal(h.id, t.Status.State, h.v)
	}
	return s.serveFollow(st, f, t, h.v, -1, dst)
}

// follower is a stream's subscription: a bounded queue of changes.
type follower struct {
	ch    chan *TaskChange
	over  chan struct{} // closed when the queue overflowed (the stream is cut)
	done  chan struct{} // closed when the stream stops reading
	cut   atomic.Bool
	unsub func() // once; it waits for subscribed
	// subscribed is closed once Subscribe returned and unsubscribe is set: a
	// cut may come from a delivery that runs before that.
	subscribed  chan struct{}
	unsubscribe func()
	// started: the stream reads its queue (serveFollow). Before, nothing
	// reads it (the agent of a SendStreamingMessage may run long), so a
	// full queue drops its oldest change instead of cutting the stream,
	// and lossy says so: the stream then starts from the task as stored
	// after the drops, which holds every change dropped.
	started, lossy atomic.Bool
}

// follow subscribes st to the task's changes. A change that finds the
// queue full waits for room until Config.StreamWait after it was
// published (holding up the task's publisher), then cuts the stream: its
// client reads too slowly.
func (s *Server) follow(st *fastserver.Stream, taskID string) *follower {
	f := &follower{ch: make(chan *TaskChange, s.streamQueue), over: make(chan struct{}), done: make(chan struct{}), subscribed: make(chan struct{})}
	// Once: a cut stream unsubscribes early, and again as it ends.
	f.unsub = sync.OnceFunc(func() {
		<-f.subscribed
		f.unsubscribe()
	})
	f.unsubscribe = s.events.Subscribe(taskID, func(c *TaskChange) {
		if f.cut.Load() {
			return
		}
		select {
		case f.ch <- c:
			return
		default:
		}
		// lossy before started is read: of this and serveFollow's
		// started-then-lossy, one sees the other (atomics are
		// sequentially consistent), so a change dropped here is one the
		// stream's fresh read of the task holds.
		f.lossy.Store(true)
		if !f.started.Load() {
			select {
			case <-f.ch: // the oldest
			default:
			}
			select {
			case f.ch <- c:
			default: // taken by a racing publisher: lossy covers it
			}
			return
		}
		// The other streams had the same time to make room while
		// the publisher waited for the ones before.
		wait := s.streamWait
		if !c.published.IsZero() {
			wait = min(wait, time.Until(c.published.Add(s.streamWait)))
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case f.ch <- c:
		case <-f.done:
		case <-t.C:
			if f.cut.CompareAndSwap(false, true) {
				close(f.over)
				st.Cut()
				// Unsubscribed now, not when the handler notices the
				// cut: the task's changes stop reaching a stream that
				// takes none. On a goroutine, as deliver must not call
				// the Broker, given the processor at once: a publisher
				// in a tight loop would otherwise keep it waiting.
				go f.unsub()
				runtime.Gosched()
			}
		}
	})
	close(f.subscribed)
	return f
}

// cancel stops the subscription: a publisher waiting for room gives up at
// once.
func (f *follower) cancel() {
	close(f.done)
	f.unsub()
}

// ends reports whether a stream ends after a status in state s: a final
// or an interrupted state.
func ends(s TaskState) bool {
	return s.Final() || s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// catchUp sends the task as stored, now, to a stream that missed a
// change: each artifact whole (append false: it replaces what the client
// holds of it; its last chunk once the task is final), then the status.
// done reports that the status ends the stream: dst then holds it as the
// last event. buf is scratch space, returned for reuse.
func (s *Server) catchUp(st *fastserver.Stream, now *Task, v Version, dst, buf []byte) (_, _ []byte, done bool, err error) {
	final := ends(now.Status.State)
	for i := range now.Artifacts {
		ev := TaskEvent{Artifact: &now.Artifacts[i], LastChunk: now.Status.State.Final()}
		buf = appendArtifactEvent(buf[:0], now.ID, now.ContextID, &ev, v)
		if err := st.SendResult(buf); err != nil {
			return dst, buf, false, err
		}
	}
	status := now.Status
	if final {
		return appendStatusEvent(dst, now.ID, now.ContextID, &status, true, v), buf, true, nil
	}
	buf = appendStatusEvent(buf[:0], now.ID, now.ContextID, &status, false, v)
	return dst, buf, false, st.SendResult(buf)
}

// serveFollow sends t (the task as the stream starts), then the changes
// whose Seq is above t's, until a status that ends the stream, which is
// returned as the last event.
func (s *Server) serveFollow(st *fastserver.Stream, f *follower, t *Task, v Version, history int, dst []byte) ([]byte, error) {
	f.started.Store(true)
	if f.lossy.Load() {
		// Changes were dropped before the stream started: start from the
		// task as stored now, which holds them.
		if now, err := s.tasks.Get(st.Context(), t.ID); err == nil && now.Seq > t.Seq {
			t = now
		}
	}
	if ends(t.Status.State) {
		if err := st.Start(); err != nil {
			return dst, err
		}
		return appendTaskEvent(dst, t, v, history), nil
	}
	buf := appendTaskEvent(make([]byte, 0, 512), t, v, history)
	if err := st.SendResult(buf); err != nil {
		return dst, err
	}
	st.SetDeadline(time.Now().Add(s.maxStream + streamSlack))
	limit := time.NewTimer(s.maxStream)
	defer limit.Stop()
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	ctx := st.Context()
	last, status := t.Seq, t.Status
	for {
		select {
		case c := <-f.ch:
			if c.Seq <= last {
				continue // already in t, or behind a newer change
			}
			if c.Seq > last+1 {
				// A change before c has not come: published late (out of
				// order, by concurrent writers or a remote broker) or
				// lost. The stored task holds it: the stream catches up
				// from there rather than skip it (found by review on
				// 2026-12-06: an artifact published after the completion
				// never reached the stream, which ended without it).
				if now, err := s.tasks.Get(ctx, t.ID); err == nil && now.Seq >= c.Seq {
					last = now.Seq
					var done bool
					if dst, buf, done, err = s.catchUp(st, now, v, dst, buf); done || err != nil {
						return dst, err
					}
					status = now.Status
					tick.Reset(s.keepAlive)
					continue
				}
			}
			last = c.Seq
			for i := range c.Events {
				ev := &c.Events[i]
				if ev.Status != nil {
					status = *ev.Status
					if ends(status.State) {
						return appendStatusEvent(dst, t.ID, t.ContextID, &status, true, v), nil
					}
					buf = appendStatusEvent(buf[:0], t.ID, t.ContextID, &status, false, v)
				} else if ev.Artifact != nil {
					buf = appendArtifactEvent(buf[:0], t.ID, t.ContextID, ev, v)
				} else {
					continue
				}
				if err := st.SendResult(buf); err != nil {
					return dst, err
				}
			}
			tick.Reset(s.keepAlive)
		case <-tick.C:
			// A task gone from the store (evicted, expired) will send no
			// more changes: the stream ends with -32001 rather than
			// keep-alives until its duration limit (found by review on
			// 2026-12-05). A store that cannot answer ends nothing.
			if !s.taskExists(ctx, t.ID) {
				return dst, storeError(ErrTaskNotFound, t.ID)
			}
			if err := st.Comment("keep-alive"); err != nil {
				return dst, err
			}
		case <-f.over:
			return dst, fastserver.ErrStreamClosed
		case <-st.Stopping():
			return appendStatusEvent(dst, t.ID, t.ContextID, &status, true, v), nil
		case <-limit.C:
			return appendStatusEvent(dst, t.ID, t.ContextID, &status, true, v), nil
		case <-ctx.Done():
			return dst, context.Cause(ctx)
		}
	}
}

// TaskExister is implemented by a TaskStore that can tell whether it
// holds a task without reading it (MemoryStore, the fleet's Redis store):
// a stream asks at each keep-alive.
type TaskExister interface {
	// Exists reports whether the store holds the task; an error means
	// it cannot tell.
	Exists(ctx context.Context, id string) (bool, error)
}

// taskExists reports whether the store still holds the task, true when it
// cannot tell (unreachable): only a task known gone ends a stream.
func (s *Server) taskExists(ctx context.Context, id string) bool {
	if e, ok := s.tasks.(TaskExister); ok {
		ok, err := e.Exists(ctx, id)
		return ok || err != nil
	}
	_, err := s.tasks.Get(ctx, id)
	return !errors.Is(err, ErrTaskNotFound)
}

// streamSlack is how long past Config.MaxStreamDuration the handler
// deadline of a stream falls: time to write the last event.
const streamSlack = 5 * time.Second

// appendTaskEvent appends the stream response holding t.
func appendTaskEvent(dst []byte, t *Task, v Version, history int) []byte {
	if v == Version10 {
		dst = append(dst, `{"task":`...)
		dst = appendTask(dst, t, v, history)
		return append(dst, '}')
	}
	return appendTask(dst, t, v, history)
}

// appendStatusEvent appends a TaskStatusUpdateEvent stream response; final
// is 0.3's flag (1.0 has none: the stream ends).
func appendStatusEvent(dst []byte, taskID, contextID string, st *TaskStatus, final bool, v Version) []byte {
	if v == Version10 {
		dst = append(dst, `{"statusUpdate":{"taskId":`...)
	} else {
		dst = append(dst, `{"kind":"status-update","taskId":`...)
	}
	dst = decode.AppendString(dst, taskID)
	dst = append(dst, `,"contextId":`...)
	dst = decode.AppendString(dst, contextID)
	dst = append(dst, `,"status":`...)
	dst = appendStatus(dst, st, v)
	if v == Version10 {
		return append(dst, "}}"...)
	}
	dst = append(dst, `,"final":`...)
	dst = appendBool(dst, final)
	return append(dst, '}')
}

// appendArtifactEvent appends a TaskArtifactUpdateEvent stream response.
func appendArtifactEvent(dst []byte, taskID, contextID string, ev *TaskEvent, v Version) []byte {
	if v == Version10 {
		dst = append(dst, `{"artifactUpdate":{"taskId":`...)
	} else {
		dst = append(dst, `{"kind":"artifact-update","taskId":`...)
	}
	dst = decode.AppendString(dst, taskID)
	dst = append(dst, `,"contextId":`...)
	dst = decode.AppendString(dst, contextID)
	dst = append(dst, `,"artifact":`...)
	dst = appendArtifact(dst, ev.Artifact, v)
	dst = append(dst, `,"append":`...)
	dst = appendBool(dst, ev.Append)
	dst = append(dst, `,"lastChunk":`...)
	dst = appendBool(dst, ev.LastChunk)
	if v == Version10 {
		return append(dst, "}}"...)
	}
	return append(dst, '}')
}
