package fastserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// ServeLines serves ep over a newline-delimited stream, MCP's stdio
// transport (contract §6): it reads one message per line from r and
// writes one answer per line to w, in order. Notifications get no answer;
// a line longer than cfg.MaxBodyBytes is answered -32600 and skipped
// without losing the stream's place; a line that is not valid JSON is
// answered -32700 and the next line is read normally. There are no
// headers: ep.Check sees none. Logs go to cfg.Logger only, never to w.
//
// Calls are served one at a time, in order, while the lines after them
// are read ahead: up to 16 messages wait behind the one being served
// (so up to 18 × cfg.MaxBodyBytes of lines are held at once), and reading
// pauses while that many wait. A notification is offered to ep.Cancel as
// soon as it is read, so that one that cancels a request read before it
// (MCP's notifications/cancelled) takes effect while that request waits or
// runs: it is never served, or its handler's context ends, and it gets no
// answer.
//
// A handler whose answer may stream (Request.Stream) gets a Stream whose
// events are lines written to w as they are sent, before the call's
// answer: MCP's notifications (progress, log messages) and the server's
// own requests (Stream.Call), whose responses the client writes as lines
// of its own; they are read with the rest and handed to the call that
// waits for them, never answered. A response no call awaits (late, or
// never asked for) is refused -32600, as over HTTP, with a null id: its
// id may be one of the client's own requests'. A client that writes
// more than 16 messages ahead of such a response leaves it unread until
// the call's ClientResponseTimeout. See Stream.Lines for what a stream of
// messages does not do.
//
// ServeLines returns nil when r ends (once every line read is answered),
// ctx's error when ctx is done, and otherwise the first read or write
// error (a read error after the lines before it are answered). When ctx
// is done while a call is being served, its answer is written first and
// the lines read ahead are dropped; while ServeLines waits for input, it
// returns at once (contract §6: SIGTERM stops -stdio even while it waits
// for input). So that a read blocked on r cannot hold it, r is read on a
// goroutine of its own, one Read at a time; a Read still blocked when
// ServeLines returns ends with r (its bytes, if any come, are dropped:
// nothing more is read once ServeLines returns).
func ServeLines(ctx context.Context, ep *Endpoint, cfg Config, r io.Reader, w io.Writer) error {
	if ep == nil || ep.Route == nil {
		return errors.New("fastserver: ServeLines needs an endpoint with a Route")
	}
	if ep.Err != nil {
		return ep.Err
	}
	s, err := New(cfg, ep)
	if err != nil {
		return err
	}
	e := s.endpoints[ep.Path]
	rctx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	src := newCtxReader(rctx, r)
	defer src.close()
	f, err := decode.NewFramer(src, decode.Options{MaxBytes: s.cfg.MaxBodyBytes, MaxDepth: s.cfg.MaxDepth, IDs: ep.IDs})
	if err != nil {
		return err
	}
	defer s.running.stop()
	out := &lineOut{bw: bufio.NewWriter(w), stop: ctx.Done()}
	l := s.newLines(e, f, out)
	out.readEnd = l.done
	stopHook := s.startLinesHook(ep, out)
	err = l.serve(ctx)
	stopReading()
	l.stop()
	out.close()
	if stopHook != nil {
		stopHook()
	}
	return err
}

// startLinesHook calls ep.Lines with a send writing to out, guarded: a
// panic in it is logged and the stream served without it. It returns
// what Lines returned, guarded the same way, or nil.
func (s *Server) startLinesHook(ep *Endpoint, out *lineOut) (stop func()) {
	if ep.Lines == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			s.panicked(stageDispatch, v, "hook", "Endpoint.Lines")
			stop = nil
		}
	}()
	hook := ep.Lines(out.writeEvent)
	if hook == nil {
		return nil
	}
	return func() {
		defer func() {
			if v := recover(); v != nil {
				s.panicked(stageDispatch, v, "hook", "the stop function Endpoint.Lines returned")
			}
		}()
		hook()
	}
}

// linesAhead is how many messages ServeLines reads ahead of the one it
// serves: enough for a client's burst of calls and the cancellation
// behind them, bounded so that a client that writes faster than it is
// answered holds a bounded number of lines in memory.
const linesAhead = 16

// lines serves one stream of messages: a reading goroutine decodes each
// line into a call of its own and queues it, the serving goroutine
// (serve) answers the queued calls in order. A call carries its message
// (decoded by its own Decoder, so it stays valid while later lines are
// read), and goes back to free once answered.
type lines struct {
	s     *Server
	e     *endpoint
	f     *decode.Framer
	out   *lineOut
	free  chan *call    // calls not in use
	queue chan *call    // read and not yet served; closed when reading ends
	quit  chan struct{} // closed when serve has returned
	done  chan struct{} // closed when the reading goroutine has ended
	rerr  error         // why reading ended, set before queue is closed
	made  int           // calls made, by the reading goroutine

	// live lists the requests read and not yet answered, for Cancel.
	mu   sync.Mutex
	live []*call
}

// maxLineCalls bounds the calls a stream makes: one being read into,
// linesAhead queued, one being served.
const maxLineCalls = linesAhead + 2

// newLines starts reading f on a goroutine of its own.
func (s *Server) newLines(e *endpoint, f *decode.Framer, out *lineOut) *lines {
	l := &lines{s: s, e: e, f: f, out: out,
		free:  make(chan *call, maxLineCalls),
		queue: make(chan *call, linesAhead),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go l.read()
	return l
}

// stop ends the reading goroutine (its reader's context is done by now,
// or r has ended) and waits for it.
func (l *lines) stop() {
	close(l.quit)
	<-l.done
}

// take returns a call to read the next line into: a free one, else a new
// one while fewer than maxLineCalls exist, else the next to come free;
// nil when serve has returned.
func (l *lines) take() *call {
	select {
	case c := <-l.free:
		return c
	default:
	}
	if l.made < maxLineCalls {
		l.made++
		c := l.s.newCall(l.e.IDs)
		c.lineOut = l.out
		return c
	}
	select {
	case c := <-l.free:
		return c
	case <-l.quit:
		return nil
	}
}

// read is the reading goroutine: it decodes line after line into calls
// and queues them, until the stream ends, a read fails or serve returns.
func (l *lines) read() {
	defer close(l.done)
	defer close(l.queue)
	for {
		c := l.take()
		if c == nil {
			return
		}
		c.cancelled.Store(false)
		c.strayResponse = false
		err := l.f.NextInto(&c.dec, &c.msg)
		switch err.(type) {
		case nil:
			switch c.msg.Kind {
			case decode.KindRequest:
				l.mu.Lock()
				l.live = append(l.live, c)
				l.mu.Unlock()
			case decode.KindNotification:
				if l.e.Cancel != nil {
					l.cancel(&c.msg)
				}
			}
		case *decode.Error:
			if l.response(c) {
				// A client's response to a request of the server's own,
				// taken (copied) by the call that awaits it: not
				// answered. Its buffer is trimmed as serve trims an
				// answered call's.
				c.dec.Trim(keepBodyBuffer)
				c.msg = decode.Message{}
				l.free <- c
				continue
			}
			// A refused line: answered in its turn.
		default:
			l.rerr = err
			l.free <- c
			return
		}
		select {
		case l.queue <- c:
		case <-l.quit:
			return
		}
	}
}

// response hands c's line to the request of the server's own that
// awaits it (Stream.Call), when the line is a client's response
// (isClientResponse) to one, and reports whether it did. A stream has
// one client: its responses need no scope.
func (l *lines) response(c *call) bool {
	m := &c.msg
	if m.Error.Err != decode.ErrEnvelope || !isClientResponse(m, c.dec.Body()) {
		return false
	}
	if l.s.pending.deliver(m.ID, "", c.dec.Body()) {
		return true
	}
	// Refused in its turn, with a null id: its id is one of the server's
	// own requests', or a guess, and may be one of the client's requests'
	// too, whose answer the client would take it for (found by review on
	// 2026-12-07).
	c.strayResponse = true
	return false
}

// cancel cancels the live requests the notification note names
// (Endpoint.Cancel).
func (l *lines) cancel(note *decode.Message) {
	id := l.cancelTarget(note)
	if id == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.live {
		if decode.IDsEqual(c.msg.ID, id) {
			c.cancel()
			l.s.log.Debug("request cancelled by the client", "method", string(c.msg.Method), "line", l.f.Line())
		}
	}
}

// cancelTarget is Endpoint.Cancel, guarded: a panic in it costs the
// cancellation, never the stream.
func (l *lines) cancelTarget(note *decode.Message) (id []byte) {
	defer func() {
		if v := recover(); v != nil {
			l.s.panicked(stageDispatch, v, "method", string(note.Method))
			id = nil
		}
	}()
	return l.e.Cancel(note)
}

// serve is ServeLines' loop: the queued calls served one at a time,
// their answers written to bw in order. After each answer the call drops
// an answer buffer grown over keepAnswerBuffer and a body buffer over
// keepBodyBuffer (call.trimAnswer, Decoder.Trim), as a pooled call does:
// a stream's calls would otherwise keep their largest line and answer
// for as long as the stream lasts.
func (l *lines) serve(ctx context.Context) error {
	var h fields // no headers on a stream
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var c *call
		var ok bool
		select {
		case c, ok = <-l.queue:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			if l.rerr == io.EOF {
				return nil
			}
			return l.rerr
		}
		var err error
		if l.answer(c, &h) {
			oneLine(c.out)
			c.out = append(c.out, '\n')
			err = l.out.write(c.out)
		}
		c.trimAnswer()
		c.dec.Trim(keepBodyBuffer)
		// The message's slices point into the buffer Trim may have
		// dropped: cleared, so that they do not keep it (found by review
		// on 2026-12-07: 18 calls kept 72 MiB of 4 MiB lines).
		c.msg = decode.Message{}
		l.free <- c
		if err != nil {
			return err
		}
	}
}

// answer serves c, unless the client cancelled it, and reports whether
// its answer is to be written (a notification's and a cancelled
// request's are not).
func (l *lines) answer(c *call, h *fields) bool {
	m := &c.msg
	write := true
	switch {
	case c.cancelled.Load():
		write = false
	case m.Kind == decode.KindInvalid:
		de := &m.Error
		id := m.AnswerID()
		if c.strayResponse {
			id = nullJSON
		}
		c.error(de.HTTPStatus(), id, de.Code, de.Reason, nil)
	default:
		var label string
		status, _ := l.s.dispatchLine(c, l.e, h, &label)
		write = status != fasthttp.StatusAccepted
	}
	if m.Kind != decode.KindRequest {
		return write
	}
	l.mu.Lock()
	if i := slices.Index(l.live, c); i >= 0 {
		l.live = slices.Delete(l.live, i, i+1)
	}
	l.mu.Unlock()
	// Read once the call has left live: a cancel that found it there has
	// set the flag by now, and none can after.
	return write && !c.cancelled.Load()
}

// dispatchLine is dispatch for ServeLines, guarded: a panic in an
// endpoint's hook (Check, Route) costs its message an internal error
// (-32603), never the stream and its process (over HTTP, serveRPC's guard
// does this; on a stream only the handler was guarded: found by review
// on 2026-12-06). The handler's own panics are answered by invoke.
func (s *Server) dispatchLine(c *call, e *endpoint, h *fields, label *string) (status, code int) {
	defer func() {
		if v := recover(); v != nil {
			s.panicked(stageDispatch, v, "method", string(c.msg.Method))
			status, code = c.error(fasthttp.StatusInternalServerError, c.msg.AnswerID(), decode.CodeInternalError, "internal error", nil)
		}
	}()
	return s.dispatch(c, e, h, label)
}

// lineOut is a stream of messages' output: the answers, and the events
// of the calls' streams, each one line written whole and flushed.
type lineOut struct {
	stop    <-chan struct{} // closed when ServeLines' context is done
	readEnd <-chan struct{} // closed when nothing more is read
	mu      sync.Mutex
	bw      *bufio.Writer
	err     error  // the first write error: every later write fails with it
	buf     []byte // an event being framed
	closed  bool   // ServeLines is returning: nothing more is written
}

// close makes every later write fail with ErrStreamClosed, once a write
// under way has ended.
func (o *lineOut) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// write writes line (one message and its '\n') and flushes it.
func (o *lineOut) write(line []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.put(line)
}

// writeEvent writes msg, a stream's event, as one line (oneLine): framed
// in the output's own buffer, under its lock, so that events sent from
// several goroutines never mix. A buffer grown past keepEventBuffer by a
// large event is dropped after it.
func (o *lineOut) writeEvent(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(append(o.buf[:0], msg...), '\n')
	oneLine(o.buf[:len(o.buf)-1])
	err := o.put(o.buf)
	if cap(o.buf) > keepEventBuffer {
		o.buf = nil
	}
	return err
}

// put, under mu, writes line and flushes it: ErrStreamClosed once
// ServeLines is returning, and the first write error for good.
func (o *lineOut) put(line []byte) error {
	if o.closed {
		return ErrStreamClosed
	}
	if o.err == nil {
		if _, o.err = o.bw.Write(line); o.err == nil {
			o.err = o.bw.Flush()
		}
	}
	return o.err
}

// oneLine turns the CR and LF bytes of an answer into spaces, so that it
// leaves as one line (MCP's stdio transport: no embedded newlines; some
// line readers end a line at a lone CR too). A handler's result or an
// error's data may be valid JSON with line breaks between its tokens
// (json.MarshalIndent's, a client's own echoed back); in valid JSON they
// can be nowhere else, since a string holds them only escaped, so the
// value is unchanged.
func oneLine(b []byte) {
	for _, c := range [...]byte{'\n', '\r'} {
		for rest := b; ; {
			i := bytes.IndexByte(rest, c)
			if i < 0 {
				break
			}
			rest[i] = ' '
			rest = rest[i+1:]
		}
	}
}

// ctxReader reads r on a goroutine of its own, so that a Read blocked on
// r ends when ctx is done. One Read at a time; once ctx is done, or r
// returned an error, every Read returns that error (a Read ctx ended may
// still fill its p later: the caller stops reading).
type ctxReader struct {
	ctx     context.Context
	req     chan []byte
	res     chan readResult
	pending bool  // a Read is under way on the goroutine
	err     error // sticky: r's error (the goroutine has ended) or ctx's
}

type readResult struct {
	n   int
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	c := &ctxReader{ctx: ctx, req: make(chan []byte), res: make(chan readResult, 1)}
	go func() {
		for p := range c.req {
			n, err := r.Read(p)
			c.res <- readResult{n, err} // buffered: never blocks past close
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.err = c.ctx.Err(); c.err != nil {
		return 0, c.err
	}
	if !c.pending {
		c.req <- p
		c.pending = true
	}
	select {
	case res := <-c.res:
		c.pending = false
		c.err = res.err
		return res.n, res.err
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
}

// close lets the goroutine end once its Read under way returns.
func (c *ctxReader) close() { close(c.req) }
