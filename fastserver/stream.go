package fastserver

// NOTE: streamed answers.
//
// A handler whose answer may stream calls Request.Stream with a
// StreamHandler, which runs on a goroutine of its own while the
// connection's goroutine waits for its first event or its return:
//
//   - It returns without sending: its result (or error) is answered exactly
//     as a plain Handler's would be, byte for byte, with the same status.
//   - It sends: the answer becomes 200 text/event-stream. The connection's
//     goroutine hands the Stream to fasthttp as the response body (a
//     BodyWriterTo, so that each Write is one chunk, flushed) and writes
//     the events as the handler queues them; the final JSON-RPC response
//     (result or error) is the last event, then the body ends.
//
// Events go through two buffers of StreamBuffer bytes, swapped between
// the handler and the writer: the writer takes whatever is queued and
// writes it as one chunk, so a handler faster than the network has its
// events coalesced (one write per batch, not per event), and one slower
// than it has each event written as soon as it is queued. A handler whose
// queue is full waits (Send blocks): a slow reader stalls its own handler,
// and a stream never holds more than two buffers (and one event larger
// than a buffer, alone). Every write gets a fresh write deadline
// (Config.WriteTimeout); a write that fails or times out closes the
// stream: the handler's context is cancelled and its Sends fail, and its
// return ends the request. The handler deadline (Config.HandlerTimeout)
// covers the whole call, streaming included; Shutdown lets streams finish
// within the grace period and then cancels their handlers, whose final
// event is the -32603 "server shutting down" error. A stream counts as
// answered (Stats.Answered) once its final event has been written.
//
// Why not fasthttp's SetBodyStreamWriter or a hijacked connection
// (measured in stream_bench_test.go): SetBodyStreamWriter starts its
// writer only after the handler returns (the answer must already be known
// to stream) and copies every byte through an in-memory pipe and a third
// goroutine; a hijacked connection is written by hand, loses keep-alive
// (a dial per stream) and escapes the server's write timeout and
// Shutdown. A coroutine (iter.Pull) that the writer resumes for each event
// avoids the goroutine but flushes every event on its own, which halved
// the events/s of the same benchmark.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// StreamHandler serves a call whose answer may be a stream of events (see
// Request.Stream).
type StreamHandler interface {
	// ServeStream is ServeRPC with a Stream to send events on before the
	// result: it appends the call's JSON result to dst and returns the
	// extended slice, or returns an error, exactly as ServeRPC does.
	ServeStream(s *Stream, dst []byte) ([]byte, error)
}

// StreamHandlerFunc adapts a function to StreamHandler.
type StreamHandlerFunc func(s *Stream, dst []byte) ([]byte, error)

// ServeStream calls f(s, dst).
func (f StreamHandlerFunc) ServeStream(s *Stream, dst []byte) ([]byte, error) { return f(s, dst) }

var _ StreamHandler = StreamHandlerFunc(nil)

// Errors a Stream returns when it cannot send.
var (
	// ErrStreamNotAccepted: the request's Accept header does not allow
	// text/event-stream (AcceptsEventStream), or the request is HTTP/1.0
	// (ErrStreamHTTP10, which wraps it), so the answer cannot be a stream.
	ErrStreamNotAccepted = errors.New("fastserver: the client does not accept text/event-stream")
	// ErrStreamHTTP10: the request is HTTP/1.0, which cannot carry a
	// chunked stream, whatever its Accept header lists. errors.Is reports
	// it as ErrStreamNotAccepted too.
	ErrStreamHTTP10 = fmt.Errorf("%w: an HTTP/1.0 request cannot get a stream", ErrStreamNotAccepted)
	// ErrStreamUnavailable: the transport has no streams (a Request not
	// served by a Server), or, on a stream of messages (ServeLines), what
	// SendResult returns: a request gets one response there.
	ErrStreamUnavailable = errors.New("fastserver: streamed answers are not available on this transport")
	// ErrStreamLimit: Config.MaxStreams streams are open.
	ErrStreamLimit = errors.New("fastserver: too many streams open")
	// ErrClientStreamLimit: the request's client holds
	// Config.MaxClientStreams streams. errors.Is reports it as
	// ErrStreamLimit too.
	ErrClientStreamLimit = fmt.Errorf("%w for this client", ErrStreamLimit)
	// ErrStreamClosed: the stream's connection failed or timed out, the
	// server stopped it, or the handler cut it (Stream.Cut); the client
	// will not see what follows.
	ErrStreamClosed = errors.New("fastserver: the stream is closed")
)

// errStreaming is what Request.Stream returns, through the handler, once
// the answer has become a stream.
var errStreaming = errors.New("fastserver: the answer is a stream")

// StreamBuffer is the size of each of a stream's two event buffers: the
// most a handler can queue before Send waits for the writer.
const StreamBuffer = 16 << 10

// Stream is the event stream of one call, as a StreamHandler sees it. Its
// first Send turns the answer into 200 text/event-stream; a handler that
// never sends is answered with plain JSON.
//
// Send, Comment and Call may be called from any goroutine the handler
// starts, one at a time, and not after ServeStream returns. A Stream is
// reused: nothing it returns may be kept after ServeStream returns.
type Stream struct {
	c       *call
	r       *Request
	h       StreamHandler
	dst     []byte
	live    bool   // events may be sent
	refusal error  // why not, when !live
	started bool   // the answer is a stream (set by the connection's goroutine)
	slot    bool   // holds one of Config.MaxStreams
	gen     uint64 // (under mu) counts the Stream's uses: reset adds one
	res     []byte // the array the next live stream's handler appends to
	// lines is the output of a stream of messages (ServeLines), whose
	// events are written as lines while the handler runs: set when the
	// Stream of a run there is made (serveLines) and never changed; nil
	// on a server's pooled Streams (HTTP), so it is read without mu.
	lines   *lineOut
	sending int  // (under mu) events being written to lines
	cslot   bool // holds one of its client's Config.MaxClientStreams
	ckey    netip.Addr
	// peer is the stream's place in its server's peerWatch while WriteTo
	// runs. left says the stream was closed because its client went
	// away, set by the watcher (under its mutex) or over net/http by the
	// request context's end (before the bridge finishes the stream);
	// finish reads it after WriteTo.
	peer peerNode
	left bool
	msg  []byte // (handler's) a response being built by SendResult

	// Shared between the handler and the writer, under mu.
	mu     sync.Mutex
	cond   sync.Cond
	fill   []byte // events queued by the handler
	closed bool   // the writer is gone
	done   bool   // the handler returned
	forced bool   // Start was called: the answer streams even without an event
	cut    bool   // Cut was called: nothing more is written
	events int

	spare   []byte        // the writer's buffer, swapped with fill
	first   chan struct{} // the first event was queued, or the handler returned
	hdone   chan struct{} // the handler's goroutine has ended
	sentAny bool          // (handler's) the first signal was given
	buf     []byte        // (handler's) an event being framed
	// (handler's) ReleaseBody was called; the request's id and method,
	// copied out of the body it gave back.
	bodyGone bool
	idCopy   []byte
	method   []byte

	// The handler's outcome, set before done.
	out      []byte
	err      error
	panicked bool
	pv       any
	stack    []byte

	// The writer's.
	status, code int
	finalOut     bool
	writeErr     error
	finished     bool
}

// Request returns the request being served, until ServeStream returns
// (the Request then serves later requests).
func (st *Stream) Request() *Request { return st.r }

// Context returns the call's context (Request.Context): the handler
// deadline, also cancelled when the stream's connection fails or the
// server's grace period ends. On a stream of messages, once ServeStream
// has returned, it is a context ended with ErrStreamClosed (the
// request's own serves later requests: found by review on 2026-12-07).
func (st *Stream) Context() context.Context {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lines != nil && st.done {
		return linesEnded
	}
	return st.r.Context()
}

// linesEnded is the Context of a stream of messages' Stream whose
// handler has returned.
var linesEnded = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrStreamClosed)
	return ctx
}()

// Live reports whether events can be sent: the transport streams, the
// client accepts text/event-stream, Config.MaxStreams is not reached and
// the stream has not closed. When it is false, Send, Comment and Call
// return the reason (Err returns it too).
func (st *Stream) Live() bool { return st.Err() == nil }

// Err returns why events cannot be sent, or nil when they can.
func (st *Stream) Err() error {
	// Under mu: while the handler has not returned (done is set under
	// mu), its request's context is still in place; a goroutine it left
	// behind asking as it returns reads done, not a context being
	// cleared (found by review on 2026-12-07).
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.live {
		return st.refusal
	}
	if st.closed || st.done {
		return ErrStreamClosed
	}
	return st.ended()
}

// usable returns why the stream takes no event, its context aside: the
// refusal, or ErrStreamClosed once it closed or its handler returned.
// Under mu, so that a sender the handler left behind (Stream's doc
// forbids it) reads what reset and run wrote under mu.
func (st *Stream) usable() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.live {
		return st.refusal
	}
	if st.closed || st.done {
		return ErrStreamClosed
	}
	return nil
}

// ended returns why the call's context ended (the handler deadline, the
// end of Shutdown's grace, the connection failing), or nil: a stream
// takes no event after it, so that a handler that sends until Send fails
// stops there (found by review on 2026-12-06: such a handler streamed on
// past HandlerTimeout and past Shutdown's grace, which only cancelled its
// context).
func (st *Stream) ended() error {
	if st.r == nil {
		return nil
	}
	return st.r.Context().Err()
}

// Started reports whether the handler has sent an event.
func (st *Stream) Started() bool {
	st.mu.Lock() // a stream of messages' Sends set it under mu
	defer st.mu.Unlock()
	return st.sentAny
}

// Send sends msg, one JSON-RPC message (a notification, or a request of
// the server's own), as a server-sent event: "data: " and the message.
// msg must be valid JSON; line breaks between its tokens are carried as
// continuation data lines. The first Send starts the stream (status 200,
// Content-Type text/event-stream). Send returns once the event is queued
// for the writer; it waits while the queue is full (the client is slow
// to read). It fails once the stream has closed (ErrStreamClosed) or the
// call's context has ended (the handler deadline, the end of Shutdown's
// grace: the context's error). msg may be reused when Send returns.
func (st *Stream) Send(msg []byte) error {
	if err := st.usable(); err != nil {
		return err
	}
	if st.lines != nil {
		return st.sendLine(msg)
	}
	st.buf = appendEvent(st.buf[:0], msg)
	return st.queue(st.buf)
}

// Comment sends an SSE comment line (": text"), which clients ignore: a
// keep-alive for proxies that close idle connections. It starts the
// stream like Send. text must not contain line breaks.
func (st *Stream) Comment(text string) error {
	if err := st.usable(); err != nil {
		return err
	}
	if bytesHasBreak(text) {
		return errors.New("fastserver: a stream comment must not contain line breaks")
	}
	if st.lines != nil {
		return st.Err() // a stream of messages has no comments: nothing to send
	}
	st.buf = append(append(append(st.buf[:0], ": "...), text...), "\n\n"...)
	return st.queue(st.buf)
}

// SendResult sends, as an event, a JSON-RPC response to the call being
// served: its id, and result (one valid JSON value) as the "result". It is
// for protocols whose stream is a series of responses to one request (A2A
// SendStreamingMessage), each event but the last sent this way, the last
// being the handler's own result. It starts the stream and waits like
// Send; result may be reused when it returns.
func (st *Stream) SendResult(result []byte) error {
	if err := st.usable(); err != nil {
		return err
	}
	if st.lines != nil {
		return ErrStreamUnavailable // one response per id on a stream of messages
	}
	st.msg = append(st.msg[:0], `{"jsonrpc":"2.0","id":`...)
	st.msg = append(st.msg, st.r.Msg.ID...)
	st.msg = append(st.msg, `,"result":`...)
	st.msg = append(st.msg, result...)
	st.msg = append(st.msg, '}')
	return st.Send(st.msg)
}

// Start makes the answer a stream (200 text/event-stream) without sending
// an event, so that a handler whose whole answer is its result (a stream
// of one event) still answers with a stream. It fails like Send.
func (st *Stream) Start() error {
	if err := st.Err(); err != nil {
		return err
	}
	if st.lines != nil {
		return nil // the answer is one line whatever was sent before it
	}
	st.mu.Lock()
	if st.closed || st.done {
		st.mu.Unlock()
		return ErrStreamClosed
	}
	st.forced = true
	st.mu.Unlock()
	if !st.sentAny {
		st.sentAny = true
		st.first <- struct{}{}
	}
	return nil
}

// Cut ends the stream now, from any goroutine, while ServeStream runs:
// nothing more is written, not even the final response, and the
// connection is closed (a write in progress fails at once); the handler's
// Sends fail and its context is cancelled (ErrStreamClosed). It is how a
// handler drops a client too slow to read what it must be sent.
func (st *Stream) Cut() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.live || st.cut || st.done {
		// Once ServeStream has returned the stream ends on its own, and
		// the pooled call may be serving the connection's next request:
		// a late Cut (a timer never stopped) must not reach it (found by
		// review on 2026-12-06). Under mu, with done set under mu after
		// ServeStream returns, the request cannot be released meanwhile.
		return
	}
	st.cut, st.closed = true, true
	st.cond.Broadcast()
	if ctx := st.c.rctx; ctx != nil {
		if conn := ctx.Conn(); conn != nil {
			conn.SetWriteDeadline(time.Now())
		}
	}
	st.c.dl.cancel(ErrStreamClosed)
}

// ReleaseBody gives back what the request's body holds while the stream
// runs: its share of the in-flight body budget (Config.InflightBodyBytes)
// and its buffer. A stream holds them until it ends, since its handler
// may read params all along; a handler that outlives what it needed of
// them (a subscription, once it has copied what it follows) calls
// ReleaseBody first, so that long streams with large bodies cannot tie up
// the budget every other request needs. After it the request's Msg keeps
// its id and method (copied) and has no params: nothing borrowed from the
// body may be used any more (params, values found in them, what the
// endpoint's Check kept in Request.Memo). The stream keeps copies of the
// id (its events, its final answer), so a share of the budget stays
// charged for them, idCopies times the id and method: a stream whose id
// is so large that this is no less than its body keeps its body's charge,
// as if ReleaseBody had not been called (found by review on 2026-12-07:
// streams with megabyte ids held several megabytes each, uncharged). It
// must be called before the stream's first event (Send, SendResult,
// Comment, Start); later, or when the answer cannot stream, it does
// nothing.
func (st *Stream) ReleaseBody() {
	c := st.c
	if c == nil || st.lines != nil || st.Err() != nil {
		return // a stream of messages' line is held until it is answered
	}
	// The connection's goroutine waits in Request.Stream for the first
	// event, then takes mu before it touches the call: until then, and
	// under mu, the call is this goroutine's. Under mu a sender the
	// handler started meanwhile (it should not) finds its event queued
	// after the release, or the release not done.
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.bodyGone || st.events > 0 || st.forced || st.done || st.closed {
		return
	}
	m := st.r.Msg
	keep := idCopies * int64(len(m.ID)+len(m.Method))
	held := c.first + c.body.wire.reserved + c.dz.ch.reserved + c.dz.held
	s := c.s
	if keep >= held || !s.budget.try(keep) {
		return // no gain, or no room for the copies' share: the body stays
	}
	st.bodyGone = true
	st.idCopy = append(st.idCopy[:0], m.ID...)
	st.method = append(st.method[:0], m.Method...)
	m.ID, m.Method, m.Params, m.ParamsType = st.idCopy, st.method, nil, decode.ParamsAbsent
	s.releaseBody(c) // c.held is false before the first event
	c.body.wire.reserved, c.dz.ch.reserved = 0, 0
	c.first, c.state = keep, false // the copies' share, released as the body's would be
	c.dec.Trim(0)                  // the body's buffer back to the pool: nothing refers to it
}

// idCopies is how many copies of a request's id and method a stream
// that released its body is charged for: the Stream's own, the final
// answer's prefix and its copy, a SendResult being framed, the two event
// buffers, and a handler's own (an event it builds, a template).
const idCopies = 8

// Stopping returns a channel that is closed when the server begins to
// shut down (Server.Shutdown): a long stream should then end on its own
// (with a last event that says where things stand) before the grace
// period ends and its context is cancelled. On a stream of messages it is
// closed when ServeLines' context is done. It is nil, never closed, for
// a Request not served by a Server, and on a stream of messages whose
// context can never be done.
func (st *Stream) Stopping() <-chan struct{} {
	if st.c == nil {
		return nil
	}
	if st.lines != nil {
		return st.lines.stop
	}
	return st.c.s.shutdown
}

// SetDeadline moves the call's deadline (Config.HandlerTimeout from the
// start of its handler) to t, for a stream that is meant to outlast it:
// the context is cancelled at t instead. It does nothing once the context
// has ended, or when the answer cannot stream.
func (st *Stream) SetDeadline(t time.Time) {
	if st.c == nil || st.usable() != nil {
		return
	}
	d := &st.c.dl
	d.mu.Lock()
	if d.active && d.err == nil {
		// Relative to now: a t without a monotonic reading is compared
		// by wall clock with the wall clock now, not at the epoch.
		d.deadline.Store(deadlineIn(monoNow(), time.Until(t)))
	}
	d.mu.Unlock()
}

// queue appends an event to the handler's buffer, waiting while it is
// full (an event larger than the buffer goes alone).
func (st *Stream) queue(ev []byte) error {
	st.mu.Lock()
	if !st.closed && !st.done {
		// Under mu, as in Err: the handler has not returned, so its
		// request's context is in place.
		if err := st.ended(); err != nil {
			st.mu.Unlock()
			return err
		}
	}
	gen := st.gen
	for !st.closed && !st.done && st.gen == gen && len(st.fill) > 0 && len(st.fill)+len(ev) > StreamBuffer {
		st.cond.Wait()
	}
	if st.closed || st.done || st.gen != gen {
		// Closed, or the handler has returned: a Send from a goroutine
		// it left behind fails rather than queueing into an answer that
		// is ending, or (the Stream being pooled) into another's (found
		// by review on 2026-12-06).
		st.mu.Unlock()
		return ErrStreamClosed
	}
	st.fill = append(st.fill, ev...)
	st.events++
	st.cond.Broadcast()
	st.mu.Unlock()
	if !st.sentAny {
		st.sentAny = true
		st.first <- struct{}{}
	}
	return nil
}

func bytesHasBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			return true
		}
	}
	return false
}

// appendEvent appends msg as one SSE event: every line of it prefixed with
// "data: ", then a blank line. JSON strings cannot hold raw line breaks, so
// the only ones in valid JSON are whitespace between tokens.
func appendEvent(dst, msg []byte) []byte {
	for {
		i := bytes.IndexAny(msg, "\r\n")
		if i < 0 {
			break
		}
		if i > 0 {
			dst = append(dst, "data: "...)
			dst = append(dst, msg[:i]...)
			dst = append(dst, '\n')
		}
		msg = msg[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, msg...)
	return append(dst, "\n\n"...)
}

// Stream runs h, whose answer may stream (see StreamHandler and Stream),
// and returns what the handler must return: the result appended to dst
// or h's error when h sends nothing, and an internal marker error, to be
// returned as it is, once the answer has become a stream (a handler that
// returns something else then, or panics, is logged, and the stream goes
// on: h's result is the final event). A handler uses it as its last
// statement:
//
//	func (x *X) ServeRPC(r *fastserver.Request, dst []byte) ([]byte, error) {
//		// checks that refuse with plain JSON come first
//		return r.Stream(dst, x.streamer)
//	}
//
// When the answer cannot stream (Stream.Live is false: the client's
// Accept does not allow text/event-stream, too many streams are open, or
// the transport has none), h runs on the calling goroutine all the same
// and its Sends fail with the reason, so h decides whether it can do
// without.
func (r *Request) Stream(dst []byte, h StreamHandler) ([]byte, error) {
	st := r.st
	if st == nil {
		st = &Stream{r: r, refusal: ErrStreamUnavailable}
		return h.ServeStream(st, dst)
	}
	c := st.c
	if c.lineOut != nil {
		return st.serveLines(r, dst, h)
	}
	if st.started {
		// Called again once the answer became a stream (a "retry"): the
		// stream goes on. Resetting it under its running handler lost its
		// slots and mixed two handlers' outcomes (found by review on
		// 2026-12-06).
		c.s.log.Warn("Request.Stream called again after the answer became a stream; the first stream goes on", "method", string(r.Msg.Method))
		return dst[:len(dst):len(dst)], errStreaming
	}
	st.reset(r)
	refusal := c.s.streamRefusal(c, st)
	st.mu.Lock()
	st.refusal, st.live = refusal, refusal == nil
	st.mu.Unlock()
	if refusal != nil {
		return h.ServeStream(st, dst)
	}
	st.slot = true
	// h appends its result to a copy of dst's prefix in an array of the
	// Stream's own, not to dst: the handler holds dst, and one that
	// appends to it once the answer streams (it must not) would write over
	// h's result (found by review on 2026-12-06). The two arrays then
	// trade places (complete, and the plain answer below): no allocation
	// once warm.
	if sameArray(st.res, dst) {
		st.res = nil
	}
	st.h, st.dst = h, append(st.res[:0], dst...)
	st.res = nil
	go st.run()
	<-st.first
	st.mu.Lock()
	plain := st.done && st.events == 0 && !st.forced
	st.mu.Unlock()
	if plain {
		// Done without an event: a plain answer, h's result in the
		// Stream's array; dst's becomes the Stream's for next time.
		<-st.hdone
		st.res = dst[:0]
		st.release()
		if st.panicked {
			panic(st.pv)
		}
		return st.out, st.err
	}
	st.started = true
	st.c.dl.streamed.Store(true) // its client is the peer watch's (WriteTo), not the watchdog's
	// dst's array holds, past len(dst), what h appends: capped, so that a
	// handler appending to what it gets back (it must not) writes a copy
	// of its own, not over h's result (found by review on 2026-12-06).
	return dst[:len(dst):len(dst)], errStreaming
}

func (st *Stream) reset(r *Request) {
	st.h, st.dst = nil, nil
	st.started, st.slot, st.cslot = false, false, false
	// Under mu, with a new generation: a sender that a previous use's
	// handler left behind waiting in queue (misuse: Stream's doc) wakes
	// to ErrStreamClosed, not into this use's buffer.
	st.mu.Lock()
	st.gen++
	st.r, st.live, st.refusal = r, false, nil
	st.fill, st.spare, st.buf = st.fill[:0], st.spare[:0], st.buf[:0]
	st.closed, st.done, st.events, st.sentAny = false, false, 0, false
	st.mu.Unlock()
	st.forced, st.cut, st.msg, st.bodyGone = false, false, st.msg[:0], false
	st.out, st.err, st.panicked, st.pv, st.stack = nil, nil, false, nil, nil
	st.status, st.code, st.finalOut, st.writeErr, st.finished = 0, 0, false, nil, false
	st.left = false
	if st.first == nil {
		st.cond.L = &st.mu
		st.first = make(chan struct{}, 1)
		st.hdone = make(chan struct{}, 1)
	}
}

// release gives back the stream's slot and drops buffers that grew large.
func (st *Stream) release() {
	st.h, st.dst = nil, nil
	if st.slot {
		st.slot = false
		st.c.s.streams.Add(-1)
	}
	if st.cslot {
		st.cslot = false
		st.c.s.clientStreams.give(st.ckey)
	}
	for _, b := range []*[]byte{&st.fill, &st.spare, &st.buf, &st.msg, &st.res, &st.idCopy, &st.method} {
		if cap(*b) > keepEventBuffer {
			*b = nil
		}
	}
}

// keepEventBuffer is the largest event buffer a pooled call keeps.
const keepEventBuffer = 2 * StreamBuffer

// run is the handler's goroutine.
func (st *Stream) run() {
	defer func() {
		if v := recover(); v != nil {
			st.panicked, st.pv = true, v
			st.stack = debug.Stack()
		}
		st.mu.Lock()
		st.done = true
		st.cond.Broadcast()
		st.mu.Unlock()
		if !st.sentAny {
			st.sentAny = true
			st.first <- struct{}{}
		}
		st.hdone <- struct{}{}
	}()
	st.out, st.err = st.h.ServeStream(st, st.dst)
}

// serveLines runs h on a stream of messages (ServeLines): on the calling
// goroutine, its events written as lines as it sends them (sendLine), its
// result the call's answer, written after them. Each run gets a Stream of
// its own, not the pooled call's: a goroutine a handler left behind
// holds a Stream that stays done, and cannot send into a later call's
// (found by review on 2026-12-07).
func (st *Stream) serveLines(r *Request, dst []byte, h StreamHandler) ([]byte, error) {
	c := st.c
	if cur := c.lineStream; cur != nil {
		// Called again from the handler it runs: the stream goes on.
		c.s.log.Warn("Request.Stream called again while its handler runs; the first stream goes on", "method", string(r.Msg.Method))
		return h.ServeStream(cur, dst)
	}
	ls := &Stream{c: c, r: r, live: true, lines: c.lineOut}
	ls.cond.L = &ls.mu
	c.lineStream = ls
	defer func() {
		c.lineStream = nil
		// done under mu, then the events being written are waited for:
		// none starts once the handler has returned, and none is
		// written after the answer.
		ls.mu.Lock()
		ls.done = true
		for ls.sending > 0 {
			ls.cond.Wait()
		}
		events := ls.events
		ls.mu.Unlock()
		if events > 0 {
			c.s.metrics.streamEvents.Add(events)
		}
	}()
	return h.ServeStream(ls, dst)
}

// sendLine is Send on a stream of messages: msg written as one line
// (lineOut.writeEvent) and flushed before it returns. The stream's lock
// is not held while it writes, so that Err, Live and Cut answer at once
// while a slow reader holds a write (found by review on 2026-12-07). The
// first write error closes the stream: this Send and every later one
// fail, and the call's context is cancelled (ErrStreamClosed).
func (st *Stream) sendLine(msg []byte) error {
	st.mu.Lock()
	if !st.live || st.closed || st.done {
		st.mu.Unlock()
		return ErrStreamClosed
	}
	if err := st.ended(); err != nil { // under mu: see Err
		st.mu.Unlock()
		return err
	}
	st.sending++
	st.mu.Unlock()
	written := false
	defer func() {
		// Deferred, so that a writer that panics (the panic goes on to
		// the handler's guard) still gives sending back: the handler's
		// return waits for it (found by review on 2026-12-07: it hung).
		st.mu.Lock()
		st.sending--
		if written {
			if st.events == 0 {
				st.c.s.metrics.streamsStarted.Inc()
			}
			st.events++
			st.sentAny = true
		} else {
			st.closed = true
		}
		st.cond.Broadcast()
		st.mu.Unlock()
	}()
	if err := st.lines.writeEvent(msg); err != nil {
		// Before sending is given back: the handler has not returned.
		st.c.dl.cancel(ErrStreamClosed)
		return fmt.Errorf("%w: %w", ErrStreamClosed, err)
	}
	written = true
	return nil
}

// Lines reports whether the stream belongs to a stream of messages
// (ServeLines: MCP's stdio transport) rather than to an HTTP answer.
// There its events are lines written before the call's answer, which is
// one line as a plain handler's; the transport serves nothing else until
// the handler returns, so a handler meant to stay open (a subscription)
// refuses there. SendResult fails with ErrStreamUnavailable (a request
// gets one response), Comment and Start send nothing, ReleaseBody does
// nothing, Cut ends the events and the call's context (ErrStreamClosed:
// the call is answered -32603 as one whose context ended), Stopping is closed
// when ServeLines' context is done, and Call's responses come back as
// lines of the stream.
func (st *Stream) Lines() bool { return st.lines != nil }

// streamRefusal says why c's answer cannot stream, or reserves a stream
// slot (and its client's, noted in st) and returns nil.
func (s *Server) streamRefusal(c *call, st *Stream) error {
	if c.rctx == nil {
		return ErrStreamUnavailable
	}
	h := &c.rctx.Request.Header
	if !h.IsHTTP11() {
		return ErrStreamHTTP10
	}
	if !AcceptsEventStream(c.f.get(fAccept)) {
		return ErrStreamNotAccepted
	}
	if s.streams.Add(1) > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		return ErrStreamLimit
	}
	if cs := s.clientStreams; cs != nil {
		key := cs.key(c.rctx, &c.f)
		if !cs.take(key) {
			s.streams.Add(-1)
			s.metrics.streamsClientRefused.Inc()
			return ErrClientStreamLimit
		}
		st.cslot, st.ckey = true, key
	}
	return nil
}

// AcceptsEventStream reports whether an Accept field value allows an
// answer of type text/event-stream, as RFC 9110 §12.5.1 reads it: the
// most specific media range that matches decides (text/event-stream, then
// text/*, then */*; names compared case-insensitively), and a weight of
// q=0 refuses ("*/*, text/event-stream;q=0" does not allow it; when one
// range comes twice, a q=0 on either refuses). A nil value — no Accept
// field — allows every type; an empty one allows none.
func AcceptsEventStream(accept []byte) bool {
	if accept == nil {
		return true
	}
	best, ok := 0, false // the specificity of the best match so far
	for len(accept) > 0 {
		item := accept
		if i := bytes.IndexByte(accept, ','); i >= 0 {
			item, accept = accept[:i], accept[i+1:]
		} else {
			accept = nil
		}
		params := []byte(nil)
		if i := bytes.IndexByte(item, ';'); i >= 0 {
			item, params = item[:i], item[i+1:]
		}
		item = bytes.TrimSpace(item)
		spec := 0
		switch {
		case bytes.EqualFold(item, ctEventStream):
			spec = 3
		case bytes.EqualFold(item, textAny):
			spec = 2
		case string(item) == "*/*":
			spec = 1
		default:
			continue
		}
		switch {
		case spec > best:
			best, ok = spec, !qZero(params)
		case spec == best:
			ok = ok && !qZero(params)
		}
	}
	return ok
}

var (
	ctEventStream = []byte("text/event-stream")
	textAny       = []byte("text/*")
	noCache       = []byte("no-cache")
	noBuffering   = []byte("no")
)

// startStream makes c's answer the stream that its handler started: the
// head now, the events as fasthttp writes the body.
func (s *Server) startStream(ctx *fasthttp.RequestCtx, c *call) {
	s.metrics.streamsStarted.Inc()
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(ctEventStream)
	ctx.Response.Header.SetBytesV("Cache-Control", noCache)
	ctx.Response.Header.SetBytesV("X-Accel-Buffering", noBuffering)
	ctx.Response.SetBodyStream(&c.st, -1)
	c.held = true // fasthttp now ends the stream, however it goes (CloseWithError)
}

// SupportsBodyWriteTo tells fasthttp to write the body with WriteTo, one
// chunk per batch of events.
func (st *Stream) SupportsBodyWriteTo() bool { return true }

// WriteTo writes the stream's events to w (fasthttp's chunked body
// writer, which flushes each Write) as the handler queues them, and the
// final response last.
func (st *Stream) WriteTo(w io.Writer) (int64, error) {
	if ctx := st.c.rctx; ctx != nil {
		if sock := watchedSocket(ctx.Conn()); sock != nil {
			// Out of the watch before the stream can be released and
			// serve the connection's next request.
			w := &st.c.s.peers
			w.add(&st.peer, sock, st, st.c.s.shutdown)
			defer w.remove(&st.peer)
		}
	}
	var n int64
	for {
		batch, ok := st.nextBatch()
		if !ok {
			return n, nil
		}
		if err := st.armWrite(); err != nil {
			st.writeErr = err
			return n, err
		}
		k, err := w.Write(batch)
		n += int64(k)
		if err != nil {
			st.writeErr = err
			st.close()
			return n, err
		}
	}
}

// peerLeft closes the stream whose client went away (peerWatch): its
// Sends fail and its handler's context is cancelled with ErrStreamClosed;
// finish counts it as cut.
func (st *Stream) peerLeft() {
	st.left = true
	st.close()
}

// Read is the io.Reader of the body, for writers that do not use WriteTo.
func (st *Stream) Read(p []byte) (int, error) {
	for len(st.spare) == 0 {
		batch, ok := st.nextBatch()
		if !ok {
			return 0, io.EOF
		}
		if err := st.armWrite(); err != nil {
			st.writeErr = err
			return 0, err
		}
		st.spare = batch
	}
	n := copy(p, st.spare)
	st.spare = st.spare[n:]
	return n, nil
}

// nextBatch waits for events and returns all of them, or, once the
// handler has returned and its events are out, the final response; ok is
// false after that.
func (st *Stream) nextBatch() (batch []byte, ok bool) {
	if st.finalOut {
		return nil, false
	}
	st.mu.Lock()
	for len(st.fill) == 0 && !st.done && !st.closed {
		st.cond.Wait()
	}
	if len(st.fill) > 0 && !st.closed {
		st.fill, st.spare = st.spare[:0], st.fill
		st.cond.Broadcast()
		st.mu.Unlock()
		return st.spare, true
	}
	st.mu.Unlock()
	<-st.hdone // the handler's outcome is set
	st.complete()
	st.spare = appendEvent(st.spare[:0], st.c.out)
	st.finalOut = true
	return st.spare, true
}

// close marks the writer gone: the handler's Sends fail and its context
// is cancelled.
func (st *Stream) close() {
	st.mu.Lock()
	st.closed = true
	st.cond.Broadcast()
	st.mu.Unlock()
	st.c.dl.cancel(ErrStreamClosed)
}

// complete turns the handler's outcome into the final response in c.out,
// once.
func (st *Stream) complete() {
	if st.finished {
		return
	}
	st.finished = true
	c := st.c
	if st.panicked {
		c.s.metrics.panics[stageHandler].Inc()
		c.s.log.Error("panic serving a request", "where", stageHandler.String(), "panic", fmt.Sprint(st.pv), "stack", string(st.stack), "method", string(c.msg.Method))
	}
	prev := c.out // the handler's dst: its array is the Stream's next
	st.status, st.code = c.s.afterHandler(c, st.out, st.err, st.panicked)
	if sameArray(c.out, st.out) {
		st.res = prev[:0] // the answer is in the Stream's array: trade
	} else {
		st.res = st.out[:0] // an error's answer was written in prev
	}
}

// sameArray reports whether a and b are slices of one array.
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}

// armWrite gives the next write a full write timeout, or fails once the
// stream was cut: under mu, so that a Cut (which sets the write deadline
// to now) is never undone by a refresh.
func (st *Stream) armWrite() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cut {
		return ErrStreamClosed
	}
	st.refreshDeadline()
	return nil
}

// refreshDeadline gives the next write a full write timeout.
func (st *Stream) refreshDeadline() {
	if ctx := st.c.rctx; ctx != nil {
		ctx.SetWriteDeadline(time.Now().Add(st.c.s.cfg.WriteTimeout))
	}
}

// CloseWithError is called by fasthttp, once, when the body is written
// or has failed (err): it stops the handler if it still runs and finishes
// the request. (Stream has no Close: fasthttp would call both, and the
// call is released by the first.)
func (st *Stream) CloseWithError(err error) error {
	if err != nil && st.writeErr == nil {
		st.writeErr = err
	}
	st.finish()
	return nil
}

// finish ends the request whose answer was this stream: the handler is
// stopped (its context cancelled, its Sends failing) if the writer gave
// up before it returned and waited for, then the call is counted and
// released.
func (st *Stream) finish() {
	c := st.c
	if c == nil || !st.started || c.rctx == nil {
		return
	}
	if !st.finalOut {
		st.close()
		<-st.hdone
	}
	st.complete()
	if !st.finalOut || st.writeErr != nil || st.left {
		c.s.metrics.streamsCut.Inc()
	}
	c.s.metrics.streamEvents.Add(st.events)
	st.release()
	st.started = false
	c.s.finishRPC(c.rctx, c, st.status, st.code)
}

// Call sends a request of the server's own, method with params (a JSON
// object, or nil for none), to the client on the stream and waits for the
// client's response, which the client POSTs to the endpoint as a JSON-RPC
// response with the id the server generated (answered 202), in the scope
// of the request making the call (Endpoint.ResponseScope); on a stream of
// messages (ServeLines) the request is a line and so is the client's
// response, which needs no scope. It returns the
// response's result, or an *Error holding the client's error. It fails
// when the stream cannot send (see Live), when the call's context ends,
// after Config.ClientResponseTimeout, or with ResponseScope's refusal of
// the request making it. The result belongs to the caller.
func (st *Stream) Call(method string, params []byte) ([]byte, error) {
	if err := st.Err(); err != nil {
		return nil, err
	}
	lines := st.lines
	c := st.c
	s := c.s
	var scope string // a stream of messages has one client: no scope
	if c.lineOut == nil && c.ep != nil && c.ep.ResponseScope != nil {
		sc, e := c.ep.ResponseScope(&c.req)
		if e != nil {
			return nil, e
		}
		scope = sc
	}
	id, ch := s.pending.add(scope)
	defer s.pending.remove(id)
	msg := make([]byte, 0, 64+len(method)+len(params))
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"method":`...)
	msg = decode.AppendString(msg, method)
	if len(params) > 0 {
		msg = append(msg, `,"params":`...)
		msg = append(msg, params...)
	}
	msg = append(msg, '}')
	if err := st.Send(msg); err != nil {
		return nil, err
	}
	// On a stream of messages a response is a line: once ServeLines
	// stops (its context done) or its input ends, none can come.
	var stop, readEnd <-chan struct{}
	if lines != nil {
		stop, readEnd = lines.stop, lines.readEnd
	}
	ctx := st.Context() // once: the handler may return meanwhile
	timer := time.NewTimer(s.cfg.ClientResponseTimeout)
	defer timer.Stop()
	select {
	case resp := <-ch:
		return parseClientResponse(resp)
	case <-ctx.Done():
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		return nil, ErrStreamClosed // a context already reset for another request
	case <-timer.C:
		return nil, ErrClientTimeout
	case <-stop:
	case <-readEnd:
	}
	// Reading stopped; a response read before it stopped is taken
	// (select chooses at random among the cases ready).
	select {
	case resp := <-ch:
		return parseClientResponse(resp)
	default:
		return nil, errLinesStopped
	}
}

// errLinesStopped is what Stream.Call returns on a stream of messages
// that stopped reading while it waited.
var errLinesStopped = fmt.Errorf("%w: the stream of messages stopped reading, so no response can come", ErrStreamClosed)

// ErrClientTimeout: the client did not answer a request sent with
// Stream.Call within Config.ClientResponseTimeout.
var ErrClientTimeout = errors.New("fastserver: the client did not answer in time")

// parseClientResponse returns the result of a client's JSON-RPC response,
// or its error as an *Error.
func parseClientResponse(resp []byte) ([]byte, error) {
	if v, n := decode.Lookup(resp, "result"); n == 1 {
		return v, nil
	}
	e := &Error{Code: decode.CodeInternalError, Message: "the client answered with an error"}
	if v, n := decode.Lookup(resp, "error"); n == 1 && len(v) > 0 && v[0] == '{' {
		if code, n := decode.Lookup(v, "code"); n == 1 {
			// errorObject checked it: an integer within int64.
			if k, err := strconv.ParseInt(string(code), 10, 64); err == nil && k == int64(int(k)) {
				e.Code = int(k)
			}
		}
		if m, n := decode.Lookup(v, "message"); n == 1 && len(m) > 1 && m[0] == '"' {
			e.Message = string(decode.AppendUnquoted(nil, m))
		}
		if d, n := decode.Lookup(v, "data"); n == 1 {
			e.Data = d
		}
	}
	return nil, e
}

// streamMetrics registers the stream metrics; open reads the slots held.
func (m *serverMetrics) streamMetrics(open func() float64) {
	m.set.NewGauge("rpcedge_streams_open", open)
	m.streamsStarted = m.set.NewCounter("rpcedge_streams_total")
	m.streamsCut = m.set.NewCounter("rpcedge_streams_cut_total")
	m.streamEvents = m.set.NewCounter("rpcedge_stream_events_total")
	m.streamsClientRefused = m.set.NewCounter("rpcedge_streams_client_refused_total")
}

// pendingCalls holds the server's requests to clients that await a
// response, by id. The ids are random (128 bits), so a client cannot
// answer a request it was not sent; each is bound to the scope of the
// request that made it (Endpoint.ResponseScope), so that one who learns
// an id (from a log, a proxy) cannot answer it from another.
type pendingCalls struct {
	mu sync.Mutex
	m  map[string]pendingCall
}

// pendingCall is one request awaiting its response.
type pendingCall struct {
	ch    chan []byte
	scope string
}

func (p *pendingCalls) add(scope string) (id []byte, ch chan []byte) {
	var raw [16]byte
	rand.Read(raw[:])
	id = make([]byte, 0, 32)
	id = append(id, `"rpcedge-`...)
	id = base64.RawURLEncoding.AppendEncode(id, raw[:])
	id = append(id, '"')
	ch = make(chan []byte, 1)
	p.mu.Lock()
	if p.m == nil {
		p.m = make(map[string]pendingCall)
	}
	p.m[string(id)] = pendingCall{ch: ch, scope: scope}
	p.mu.Unlock()
	return id, ch
}

func (p *pendingCalls) remove(id []byte) {
	p.mu.Lock()
	delete(p.m, string(id))
	p.mu.Unlock()
}

// deliver hands a client's response (the whole message, copied) to the
// request waiting for it in scope, and reports whether one was. A call
// of another scope keeps waiting.
func (p *pendingCalls) deliver(id []byte, scope string, msg []byte) bool {
	p.mu.Lock()
	pc, ok := p.m[string(id)]
	if ok = ok && pc.scope == scope; ok {
		delete(p.m, string(id))
	}
	p.mu.Unlock()
	if !ok {
		return false
	}
	pc.ch <- append([]byte(nil), msg...)
	return true
}

// DeliverResponse hands a client's JSON-RPC response msg (a whole message
// with "result" or "error") to the request with the raw id bytes id (its
// quotes included) that a Stream.Call on this server awaits in scope (see
// Endpoint.ResponseScope; "" when the endpoint has none), and reports
// whether one did. The endpoint does this itself for responses POSTed to
// it; a fleet whose balancer may send a response to another instance than
// the one holding the stream relays it here, with the scope that
// Config.UnmatchedResponse was given.
func (s *Server) DeliverResponse(id []byte, scope string, msg []byte) bool {
	return s.pending.deliver(id, scope, msg)
}

// errorObject reports whether v is a JSON-RPC error object (§5.1): an
// object whose code is an integer (no fraction or exponent, within
// int64) and whose message is a string, each given once. A client's
// response carrying anything else as its error is not one (row 10).
func errorObject(v []byte) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	code, n := decode.Lookup(v, "code")
	if n != 1 {
		return false
	}
	if _, err := strconv.ParseInt(string(code), 10, 64); err != nil {
		return false
	}
	m, n := decode.Lookup(v, "message")
	return n == 1 && len(m) > 0 && m[0] == '"'
}

// isClientResponse reports whether a POSTed message that the envelope
// refused is a JSON-RPC 2.0 response a client may send (to a request of
// the server's own): a string id, and one of result or a proper error.
func isClientResponse(m *decode.Message, body []byte) bool {
	if m.IDType != decode.IDString || m.Method != nil || len(body) == 0 {
		return false
	}
	_, nr := decode.Lookup(body, "result")
	ev, ne := decode.Lookup(body, "error")
	if nr+ne != 1 || ne == 1 && !errorObject(ev) {
		return false
	}
	// A JSON-RPC 2.0 response, as a request must be (row 10 otherwise).
	v, n := decode.Lookup(body, "jsonrpc")
	return n == 1 && (string(v) == `"2.0"` || decode.StringIs(v, "2.0"))
}

// clientResponse hands a client's response POSTed to ep (isClientResponse)
// to the request of the server's own that awaits it in the POST's scope,
// else to Config.UnmatchedResponse, and reports whether either took it
// (answered 202); a non-nil *Error is the endpoint's refusal of the POST.
func (s *Server) clientResponse(c *call, ep *endpoint, f *fields, m *decode.Message, body []byte) (bool, *Error) {
	var scope string
	if ep.ResponseScope != nil {
		r := &c.req
		r.reset(f, m, nil)
		sc, e := ep.ResponseScope(r)
		if e != nil {
			return false, e
		}
		scope = sc
	}
	if s.pending.deliver(m.ID, scope, body) {
		return true, nil
	}
	if uf := s.cfg.UnmatchedResponse; uf != nil {
		return uf(m.ID, scope, body), nil
	}
	return false, nil
}

// SetResponseHeader sets a header of the answer to r (Mcp-Session-Id,
// say). It does nothing on transports without headers, nor from a
// StreamHandler once its stream has sent an event (the head is being
// written then, by another goroutine).
func (r *Request) SetResponseHeader(name, value string) {
	if st := r.st; st != nil && st.live && st.sentAny {
		return
	}
	if r.st != nil && r.st.c != nil && r.st.c.rctx != nil {
		r.st.c.rctx.Response.Header.Set(name, value)
	}
}

// keepAliveEvery is how often an idle event stream of ServeEvents sends a
// comment, so that proxies do not close it.
const keepAliveEvery = 15 * time.Second

// ServeEvents answers ctx with 200 text/event-stream whose events are the
// messages received from events (each one JSON-RPC message), for streams
// that are not the answer to a call, such as an MCP session's GET stream.
// The stream ends when events is closed, when a write fails or times out
// (Config.WriteTimeout, refreshed per write), when the client closes the
// connection (looked for every 2 s between writes, on Unix; a client that
// shuts only its sending side counts as gone, as net/http's server counts
// it), or when the server shuts down; then done is called, once. An idle
// stream gets a keep-alive comment every 15 s. It holds one of
// Config.MaxStreams: past it, 503.
// An HTTP/1.0 request gets 406 (and done is called): a stream of unknown
// length is chunked, which HTTP/1.0 cannot carry.
func (s *Server) ServeEvents(ctx *fasthttp.RequestCtx, events <-chan []byte, done func()) {
	if !ctx.Request.Header.IsHTTP11() {
		// The stream is a chunked body, which HTTP/1.0 cannot carry (RFC
		// 9112 §6.1), as for Request.Stream (ErrStreamHTTP10): fasthttp
		// sent one anyway (found by review on 2026-12-06).
		ctx.Error("an event stream needs HTTP/1.1: an HTTP/1.0 request cannot get a chunked stream", fasthttp.StatusNotAcceptable)
		done()
		return
	}
	if s.streams.Add(1) > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		// Retry-After after Error, which resets the response (it was
		// lost so until 2026-12-06).
		ctx.Error("too many streams open", fasthttp.StatusServiceUnavailable)
		ctx.Response.Header.Set("Retry-After", "1")
		done()
		return
	}
	feed := &eventFeed{s: s, ctx: ctx, events: events, stop: s.shutdown, done: done}
	if cs := s.clientStreams; cs != nil {
		key := cs.key(ctx, nil)
		if !cs.take(key) {
			s.streams.Add(-1)
			s.metrics.streamsClientRefused.Inc()
			ctx.Error("too many streams open for this client", fasthttp.StatusServiceUnavailable)
			ctx.Response.Header.Set("Retry-After", "1")
			done()
			return
		}
		feed.keyed, feed.key = true, key
	}
	s.metrics.streamsStarted.Inc()
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(ctEventStream)
	ctx.Response.Header.SetBytesV("Cache-Control", noCache)
	ctx.Response.Header.SetBytesV("X-Accel-Buffering", noBuffering)
	ctx.Response.SetBodyStream(feed, -1)
}

// eventFeed is the body of ServeEvents.
type eventFeed struct {
	s      *Server
	ctx    *fasthttp.RequestCtx
	events <-chan []byte
	stop   <-chan struct{}
	done   func()
	buf    []byte
	ended  bool
	keyed  bool       // holds one of its client's Config.MaxClientStreams
	key    netip.Addr // that client
	// gone is closed when the client goes away: over net/http the
	// request's context says so; over fasthttp the server's peerWatch
	// closes left, which gone then is (nil for a connection it cannot
	// look into).
	gone <-chan struct{}
	left chan struct{}
	peer peerNode
}

// peerLeft ends the stream whose client went away (peerWatch).
func (f *eventFeed) peerLeft() { close(f.left) }

func (f *eventFeed) SupportsBodyWriteTo() bool { return true }

// WriteTo writes the events as they come, a keep-alive when none comes.
func (f *eventFeed) WriteTo(w io.Writer) (int64, error) {
	var n int64
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	if sock := watchedSocket(f.ctx.Conn()); f.gone == nil && sock != nil {
		f.left = make(chan struct{})
		f.gone = f.left
		w := &f.s.peers
		w.add(&f.peer, sock, f, f.stop)
		defer w.remove(&f.peer)
	}
	// A first comment flushes the head: the client knows it is connected.
	f.buf = append(f.buf[:0], ": stream open\n\n"...)
	for {
		f.ctx.SetWriteDeadline(time.Now().Add(f.s.cfg.WriteTimeout))
		k, err := w.Write(f.buf)
		n += int64(k)
		if err != nil {
			return n, err
		}
		f.s.metrics.streamEvents.Inc()
		for waiting := true; waiting; {
			select {
			case msg, ok := <-f.events:
				if !ok {
					return n, nil
				}
				f.buf = appendEvent(f.buf[:0], msg)
				waiting = false
			case <-tick.C:
				f.buf = append(f.buf[:0], ": keep-alive\n\n"...)
				waiting = false
			case <-f.gone:
				// Ended as a stream whose events are over: fasthttp then
				// meets the end of file and closes the connection
				// quietly (an error of ours it would log, one line per
				// departed client).
				return n, nil
			case <-f.stop:
				return n, nil
			}
		}
	}
}

// Read is never used by fasthttp for a BodyWriterTo; it ends the body.
func (f *eventFeed) Read([]byte) (int, error) { return 0, io.EOF }

// CloseWithError ends the stream, once.
func (f *eventFeed) CloseWithError(error) error {
	if !f.ended {
		f.ended = true
		f.s.streams.Add(-1)
		if f.keyed {
			f.s.clientStreams.give(f.key)
		}
		f.done()
	}
	return nil
}
