package fastserver

import (
	"fmt"
	"net"
	"runtime/debug"
	"sync/atomic"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// NOTE: a panic is one failed request.
//
// fasthttp recovers no panic: one in any function it calls (the handler,
// the Expect and error handlers, a hijack handler) ends the process, and
// every connection and request in flight with it. So each entry point
// that fasthttp calls recovers: the panic is logged once with its stack,
// counted in rpcedge_panics_total{where}, and the request is answered
// 500 / -32603 with "id": null when nothing was written yet (else its
// connection is closed). The per-request state is settled: the body
// budget is given back (runRPC's deferred release runs while the panic
// unwinds), the deadline is unlinked from the watchdog, and the pooled
// call is dropped rather than returned half-used. Handler panics are
// recovered closer, in callHandler, so that they answer with the
// request's id.

// stage is where a request is in the pipeline.
type stage uint8

const (
	stageRoute    stage = iota // routing, GET routes, preflight, 404/405
	stageHeaders               // framing and rows 1 to 6
	stageBody                  // reading the body (inside the decoder's read)
	stageDecode                // decoding: rows 7 to 10
	stageDispatch              // rows 11 to 17: Check, Route, params
	stageHandler               // the handler
	stageAnswer                // writing the answer
	stageCompress              // compressing the answer
	stageMetrics               // counting the request
	stageEarly                 // an early answer on the hijacked connection
	stageExpect                // Expect: 100-continue
	stageError                 // fasthttp's error handler
	numStages
)

var stageNames = [numStages]string{
	stageRoute:    "route",
	stageHeaders:  "headers",
	stageBody:     "body",
	stageDecode:   "decode",
	stageDispatch: "dispatch",
	stageHandler:  "handler",
	stageAnswer:   "answer",
	stageCompress: "compress",
	stageMetrics:  "metrics",
	stageEarly:    "early",
	stageExpect:   "expect",
	stageError:    "error",
}

func (st stage) String() string { return stageNames[st] }

// testHookStage is set by tests only: it is called as a request enters
// each stage, so that a test can make any stage panic. It is never set in
// production; an atomic load is its whole cost.
var testHookStage atomic.Pointer[func(stage)]

// at runs the test hook for st, if any.
func at(st stage) {
	if h := testHookStage.Load(); h != nil {
		(*h)(st)
	}
}

// enter records that c is now in stage st.
func (c *call) enter(st stage) {
	c.stage = st
	at(st)
}

// where is the stage a panic of c happened in.
func (c *call) where() stage {
	if c.stage == stageDecode && c.body.inRead {
		return stageBody
	}
	return c.stage
}

// panicked logs and counts a recovered panic.
func (s *Server) panicked(where stage, v any, attrs ...any) {
	s.metrics.panics[where].Inc()
	args := append([]any{"where", where.String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack())}, attrs...)
	s.log.Error("panic serving a request", args...)
}

// recoverRPC settles a request whose pipeline panicked: it answers
// 500 / -32603 if nothing was written yet (an early answer already
// decided is left to be written), releases what the request held and
// counts it answered. c is not returned to its pool.
func (s *Server) recoverRPC(ctx *fasthttp.RequestCtx, ep *endpoint, c *call, v any) {
	where := c.where()
	s.panicked(where, v, "endpoint", ep.path)
	s.running.unlink(&c.dl)
	if !c.early {
		s.safely(ctx, func() {
			body := decode.AppendError(nil, nullJSON, decode.CodeInternalError, "internal error", nil)
			if c.pending && !c.body.eof {
				// The body is not read to its end: answer early, so that
				// closing does not reset the connection under the answer.
				s.earlyAnswer(ctx, fasthttp.StatusInternalServerError, ctJSON, body)
				return
			}
			ctx.Response.Reset()
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
			ctx.Response.Header.SetContentTypeBytes(ctJSON)
			ctx.SetBody(body)
			ctx.SetConnectionClose()
		})
	}
	if where != stageMetrics {
		s.safely(ctx, func() {
			s.metrics.observe(ep, "", fasthttp.StatusInternalServerError, decode.CodeInternalError, 0, c.body.n, nil)
		})
	}
	s.answered.Add(1)
}

// recoverPlain answers a panic outside the JSON-RPC pipeline (a GET
// route, a preflight) with a plain 500, and closes the connection.
func (s *Server) recoverPlain(ctx *fasthttp.RequestCtx, where stage, v any) {
	s.panicked(where, v, "path", string(ctx.Path()))
	s.safely(ctx, func() {
		ctx.Response.Reset()
		ctx.Error("internal server error", fasthttp.StatusInternalServerError)
		ctx.SetConnectionClose()
	})
}

// safely runs f; if f panics too, the connection is closed without an
// answer.
func (s *Server) safely(ctx *fasthttp.RequestCtx, f func()) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic while answering a panic: closing the connection", "panic", fmt.Sprint(v))
			ctx.SetConnectionClose()
			ctx.Response.Reset()
			if c := ctx.Conn(); c != nil {
				c.Close()
			}
		}
	}()
	f()
}

// guardHijack wraps a hijack handler so that a panic in it costs its own
// connection (fasthttp closes it when the handler returns).
func (s *Server) guardHijack(h func(net.Conn)) fasthttp.HijackHandler {
	return func(c net.Conn) {
		defer func() {
			if v := recover(); v != nil {
				s.panicked(stageEarly, v)
			}
		}()
		at(stageEarly)
		h(c)
	}
}
