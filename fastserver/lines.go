package fastserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

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
// ServeLines returns nil when r ends, ctx's error when ctx is done, and
// otherwise the first read or write error. Calls are served one at a
// time. When ctx is done while a call is being served, its answer is
// written first; while ServeLines waits for input, it returns at once
// (contract §6: SIGTERM stops -stdio even while it waits for input). So
// that a read blocked on r cannot hold it, r is read on a goroutine of
// its own, one Read at a time; a Read still blocked when ServeLines
// returns ends with r (its bytes, if any come, are dropped: nothing more
// is read once ctx is done).
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
	src := newCtxReader(ctx, r)
	defer src.close()
	f, err := decode.NewFramer(src, decode.Options{MaxBytes: s.cfg.MaxBodyBytes, MaxDepth: s.cfg.MaxDepth, IDs: ep.IDs})
	if err != nil {
		return err
	}
	defer s.running.stop()
	return s.serveFramed(ctx, e, f, bufio.NewWriter(w), s.newCall(ep.IDs))
}

// serveFramed is ServeLines' loop: the messages f frames, served by c one
// at a time, their answers written to bw. After each answer c drops an
// answer buffer grown over keepAnswerBuffer (call.trimAnswer), as a
// pooled call does: the stream's one call would otherwise keep its
// largest answer for as long as the stream lasts.
func (s *Server) serveFramed(ctx context.Context, e *endpoint, f *decode.Framer, bw *bufio.Writer, c *call) error {
	var h fields // no headers on a stream
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := f.Next(&c.msg)
		if err == io.EOF {
			return bw.Flush()
		}
		var label string
		switch de := err.(type) {
		case nil:
			status, _ := s.dispatchLine(c, e, &h, &label)
			if status == fasthttp.StatusAccepted {
				continue
			}
		case *decode.Error:
			c.error(de.HTTPStatus(), c.msg.AnswerID(), de.Code, de.Reason, nil)
		default:
			bw.Flush()
			return err
		}
		oneLine(c.out)
		c.out = append(c.out, '\n')
		if _, err := bw.Write(c.out); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		c.trimAnswer()
	}
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
