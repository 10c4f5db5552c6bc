package fastserver

// Second hostile review: streamed answers, the net/http transport and
// ServeLines. Each test asserts the correct behaviour; a failing one is a
// finding (see the review report).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// review2Methods: streamMethods plus
//
//	spin  sends an event every 5 ms until a Send fails (it checks only
//	      Send's error, as the count handler does), then returns it.
func review2Methods(t testing.TB, done *atomic.Int64) *Methods {
	ms := streamMethods(t, done)
	ms.HandleFunc("spin", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if done != nil {
				defer done.Add(1)
			}
			stop := time.Now().Add(4 * time.Second) // the test's own bound
			for time.Now().Before(stop) {
				if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
					return dst, err
				}
				time.Sleep(5 * time.Millisecond)
			}
			return append(dst, `"ran out"`...), nil
		}))
	})
	return ms
}

// A keep-alive connection that carried a stream serves its next request
// however long it stayed idle in between (within IdleTimeout): the
// stream's per-write deadlines must not outlive the stream.
func TestReview2StreamStaleWriteDeadline(t *testing.T) {
	_, addr := serve(t, Config{WriteTimeout: 300 * time.Millisecond, IdleTimeout: 5 * time.Second}, review2Methods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	r := c.do(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"count","params":{"n":2}}`, acceptSSE))
	if r.Status != 200 || len(sseEvents(t, r.Body)) != 3 || r.Close {
		t.Fatalf("stream: %d %q close=%v", r.Status, r.Body, r.Close)
	}
	time.Sleep(700 * time.Millisecond) // idle, well within IdleTimeout
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":2,"method":"count","params":{"n":0}}`))
	r2, err := c.tryRead()
	if err != nil {
		t.Fatalf("the keep-alive request after a stream got no answer: %v", err)
	}
	if r2.Status != 200 || string(r2.Body) != `{"jsonrpc":"2.0","id":2,"result":{"sent":0}}` {
		t.Errorf("after the stream: %d %s", r2.Status, r2.Body)
	}
}

// The handler deadline covers the whole call, streaming included (doc):
// a handler that keeps sending and only checks Send's error is still
// stopped at its deadline, its final event -32603.
func TestReview2StreamDeadlineStopsSender(t *testing.T) {
	var done atomic.Int64
	_, addr := serve(t, Config{HandlerTimeout: 300 * time.Millisecond}, review2Methods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	start := time.Now()
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"spin"}`, acceptSSE))
	r := c.read()
	took := time.Since(start)
	evs := sseEvents(t, r.Body)
	if len(evs) == 0 {
		t.Fatalf("no events: %d %q", r.Status, r.Body)
	}
	last := evs[len(evs)-1]
	if took > 2*time.Second || !strings.Contains(last, `"code":-32603`) {
		t.Errorf("a sending handler ran %v past a 300 ms deadline; final event %s", took, last)
	}
}

// Shutdown's grace period ends a stream whose handler only checks Send's
// error: "Shutdown lets streams finish within the grace period and then
// cancels their handlers, whose final event is the -32603 server
// shutting down error".
func TestReview2StreamShutdownStopsSender(t *testing.T) {
	var done atomic.Int64
	s, addr := serveNoCleanup(t, Config{ShutdownGrace: 300 * time.Millisecond}, review2Methods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	defer stopServer(t, s)
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"spin"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		stopped <- s.Shutdown(ctx)
	}()
	body, _ := io.ReadAll(hr.Body)
	err = <-stopped
	evs := sseEvents(t, body)
	last := ""
	if len(evs) > 0 {
		last = evs[len(evs)-1]
	}
	if err != nil || time.Since(start) > 2*time.Second || !strings.Contains(last, "server shutting down") {
		t.Errorf("Shutdown %v after %v; final event %s", err, time.Since(start), last)
	}
}

// An HTTP/1.0 client of ServeEvents' stream must not get a chunked
// body: RFC 9112 §6.1, "A server MUST NOT send a response containing
// Transfer-Encoding unless the corresponding request indicates HTTP/1.1
// (or later minor revisions)". Request.Stream refuses HTTP/1.0
// (ErrStreamHTTP10); ServeEvents must not frame for it what it cannot
// read. (The answer may be a refusal, or a body delimited by the close.)
func TestReview2ServeEventsHTTP10(t *testing.T) {
	var ms Methods
	ms.HandleFunc("x", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	ep := ms.Endpoint("/rpc", decode.IDsJSONRPC)
	events := make(chan []byte, 4)
	events <- []byte(`{"jsonrpc":"2.0","method":"n"}`)
	close(events)
	ep.Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
		if !ctx.IsGet() {
			return false
		}
		s.ServeEvents(ctx, events, func() {})
		return true
	}
	_, addr := serve(t, Config{}, ep)
	c := dial(t, addr)
	c.send("GET /rpc HTTP/1.0\r\nHost: x\r\n\r\n")
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	raw, _ := io.ReadAll(c.br)
	head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	if strings.Contains(strings.ToLower(head), "transfer-encoding: chunked") {
		t.Errorf("HTTP/1.0 client got a chunked answer:\n%s\n\n%q", head, body)
	}
}

// ServeLines recovers a panic of the endpoint's own hooks as HTTP does
// ("No panic ends the process"): Route panicking for one line is
// answered -32603 with the line's id, and the next line is served.
func TestReview2ServeLinesHookPanic(t *testing.T) {
	ms := testMethods(nil)
	ep := ms.Endpoint("/x", decode.IDsJSONRPC)
	route := ep.Route
	ep.Route = func(r *Request) Route {
		if string(r.Msg.Method) == "kaboom" {
			panic("route bug")
		}
		return route(r)
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"kaboom"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"echo"}` + "\n"
	var out strings.Builder
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("ServeLines panicked: %v", v)
			}
		}()
		err = ServeLines(context.Background(), ep, Config{Logger: quietLogger}, strings.NewReader(in), &out)
	}()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"code":-32603`) || !strings.Contains(lines[1], `"id":2,"result"`) {
		t.Errorf("output %q", out.String())
	}
}

// Many short streams at once over keep-alive connections: every stream
// gets exactly its own events and final response, and every request is
// counted once. Under net/http the Stream is closed twice per request
// (writeResponse's CloseWithError, then Response.Reset's in the bridge's
// deferred cleanup, after the pooled call went back to its pool), so the
// second close may finish another request's stream that took the call.
// The window is narrow: RPCEDGE_TRANSPORT=nethttp go test -race shows it
// (a data race between Stream.finish of one connection's deferred reset
// and Stream.reset of the next request on another).
func TestReview2ManyShortStreams(t *testing.T) {
	s, addr := serve(t, Config{}, review2Methods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	const conns, each = 16, 150
	errs := make(chan error, conns)
	for g := range conns {
		go func() {
			c := dial(t, addr)
			for i := range each {
				id := fmt.Sprintf(`"g%d-%d"`, g, i)
				c.send(post("/rpc", `{"jsonrpc":"2.0","id":`+id+`,"method":"count","params":{"n":1}}`, acceptSSE))
				r, err := c.tryRead()
				if err != nil {
					errs <- fmt.Errorf("%s: %v", id, err)
					return
				}
				want := `data: {"jsonrpc":"2.0","method":"tick","params":{"i":0}}` + "\n\n" +
					`data: {"jsonrpc":"2.0","id":` + id + `,"result":{"sent":1}}` + "\n\n"
				if r.Status != 200 || string(r.Body) != want {
					errs <- fmt.Errorf("%s: %d %q", id, r.Status, r.Body)
					return
				}
			}
			errs <- nil
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	waitFor(t, "every stream counted once", func() bool { st := s.Stats(); return st.Entered == st.Answered && s.streams.Load() == 0 })
	if st := s.Stats(); st.Entered != conns*each {
		t.Errorf("stats %+v, want %d entered", st, conns*each)
	}
}

// Over HTTP/2 (net/http, TLS) a stream is served event by event, and a
// client that resets its stream mid-answer stops the handler and gives
// its stream slot back.
func TestReview2H2StreamReset(t *testing.T) {
	var done atomic.Int64
	s, c, base := serveNet(t, Config{}, true, review2Methods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"spin"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s %q", resp.Proto, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != `data: {"jsonrpc":"2.0","method":"tick"}`+"\n" {
		t.Fatalf("first line %q", line)
	}
	cancel() // RST_STREAM
	resp.Body.Close()
	waitFor(t, "the reset stream's handler to stop and its slot to come back", func() bool {
		st := s.Stats()
		return done.Load() == 1 && s.streams.Load() == 0 && st.Entered == st.Answered
	})
}

// A quiet stream (the handler waits for its context between events)
// whose HTTP/2 client resets it: net/http knows at once (the request's
// context ends), so the handler's context should end too, rather than
// at its deadline or its next write ("also cancelled when the stream's
// connection fails"): until then it holds a MaxStreams slot.
func TestReview2H2QuietStreamReset(t *testing.T) {
	var done atomic.Int64
	s, c, base := serveNet(t, Config{HandlerTimeout: 3500 * time.Millisecond}, true, review2Methods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"wait"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); line != `data: {"jsonrpc":"2.0","method":"tick"}`+"\n" {
		t.Fatalf("first line %q", line)
	}
	cancel() // RST_STREAM
	resp.Body.Close()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) && (done.Load() == 0 || s.streams.Load() != 0) {
		time.Sleep(10 * time.Millisecond)
	}
	if done.Load() == 0 || s.streams.Load() != 0 {
		t.Errorf("1.5 s after the client reset its stream: handler returned %v, %d slots held", done.Load() == 1, s.streams.Load())
	}
}
