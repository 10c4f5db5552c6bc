package fastserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// streamMethods serves:
//
//	count  {"n":N}: sends N notifications {"method":"tick","params":{"i":k}},
//	       then the result {"sent":N}; with n 0 it sends nothing.
//	fail   sends one event, then fails with an *Error -32001.
//	boom   sends one event, then panics.
//	ask    sends a request "question" to the client and returns its result.
//	wait   sends one event, then waits for its context and returns.
//	refused returns the Stream's refusal (or "live").
func streamMethods(t testing.TB, handlerDone *atomic.Int64) *Methods {
	var ms Methods
	stream := func(f func(st *Stream, dst []byte) ([]byte, error)) func(r *Request, dst []byte) ([]byte, error) {
		return func(r *Request, dst []byte) ([]byte, error) {
			return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
				if handlerDone != nil {
					defer handlerDone.Add(1)
				}
				return f(st, dst)
			}))
		}
	}
	ms.HandleFunc("count", stream(func(st *Stream, dst []byte) ([]byte, error) {
		v, _ := decode.Lookup(st.Request().Msg.Params, "n")
		n, _ := strconv.Atoi(string(v))
		var msg []byte
		for i := range n {
			msg = fmt.Appendf(msg[:0], `{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}`, i)
			if err := st.Send(msg); err != nil {
				return dst, err
			}
		}
		return fmt.Appendf(dst, `{"sent":%d}`, n), nil
	}))
	ms.HandleFunc("fail", stream(func(st *Stream, dst []byte) ([]byte, error) {
		st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`))
		return dst, &Error{Code: -32001, Message: "it failed"}
	}))
	ms.HandleFunc("boom", stream(func(st *Stream, dst []byte) ([]byte, error) {
		st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`))
		panic("boom")
	}))
	ms.HandleFunc("ask", stream(func(st *Stream, dst []byte) ([]byte, error) {
		res, err := st.Call("question", []byte(`{"q":1}`))
		if err != nil {
			return dst, err
		}
		return append(dst, res...), nil
	}))
	ms.HandleFunc("wait", stream(func(st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
			return dst, err
		}
		<-st.Context().Done()
		return dst, st.Context().Err()
	}))
	ms.HandleFunc("refused", stream(func(st *Stream, dst []byte) ([]byte, error) {
		if err := st.Err(); err != nil {
			return strconv.AppendQuote(dst, err.Error()), nil
		}
		return append(dst, `"live"`...), nil
	}))
	return &ms
}

const acceptSSE = "Accept: application/json, text/event-stream"

// sseEvents splits an event-stream body into its events' data.
func sseEvents(t testing.TB, body []byte) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, d)
			} else if !strings.HasPrefix(line, ":") {
				t.Errorf("unexpected SSE line %q", line)
			}
		}
		if data != nil {
			out = append(out, strings.Join(data, "\n"))
		}
	}
	return out
}

func TestStreamEventsThenResult(t *testing.T) {
	var done atomic.Int64
	_, addr := serve(t, Config{}, streamMethods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	for _, n := range []int{1, 3, 50} {
		id := fmt.Sprintf(`"req-%d"`, n)
		r := c.do(post("/rpc", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"count","params":{"n":%d}}`, id, n), acceptSSE))
		if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("n=%d: status %d, Content-Type %q", n, r.Status, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("Cache-Control") != "no-cache" || r.Close {
			t.Errorf("n=%d: Cache-Control %q, close %v: want no-cache, keep-alive", n, r.Header.Get("Cache-Control"), r.Close)
		}
		evs := sseEvents(t, r.Body)
		if len(evs) != n+1 {
			t.Fatalf("n=%d: %d events, want %d: %q", n, len(evs), n+1, r.Body)
		}
		for i := range n {
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}`, i); evs[i] != want {
				t.Errorf("event %d = %s, want %s", i, evs[i], want)
			}
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"sent":%d}}`, id, n); evs[n] != want {
			t.Errorf("final event %s, want %s", evs[n], want)
		}
	}
	// The same connection then serves a plain answer, byte for byte.
	r := c.do(post("/rpc", `{"jsonrpc":"2.0","id":7,"method":"count","params":{"n":0}}`, acceptSSE))
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" || string(r.Body) != `{"jsonrpc":"2.0","id":7,"result":{"sent":0}}` {
		t.Errorf("no events: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if done.Load() != 4 {
		t.Errorf("%d handlers returned, want 4", done.Load())
	}
}

func TestStreamNotAccepted(t *testing.T) {
	_, addr := serve(t, Config{}, streamMethods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	for _, accept := range []string{"Accept: application/json", "Accept: text/event-stream;q=0", "Accept: */*, text/event-stream;q=0", "Accept: text/*;q=0, */*", "Accept: application/*, text/plain"} {
		r := roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"refused"}`, accept))
		if r.Status != 200 || string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":"`+ErrStreamNotAccepted.Error()+`"}` {
			t.Errorf("%s: %d %s", accept, r.Status, r.Body)
		}
		r = roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"count","params":{"n":3}}`, accept))
		if r.Status != 500 || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: count: %d %s, want the handler's failure as plain JSON", accept, r.Status, r.Body)
		}
	}
	// RFC 9110 §12.5.1: */* and text/* allow it, and so does no Accept
	// field at all ("Accept:" leaves the field out here).
	for _, accept := range []string{"Accept: text/event-stream", "Accept: TEXT/Event-Stream; q=0.5, application/json", "Accept: */*", "Accept: text/*", "Accept:", "Accept: */*;q=0, text/*"} {
		r := roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"refused"}`, accept))
		if string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":"live"}` {
			t.Errorf("%s: %s", accept, r.Body)
		}
	}
	// An Accept line with an empty value allows nothing (no Accept line
	// at all allows everything, above).
	empty := strings.Replace(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"refused"}`), "\r\n\r\n", "\r\nAccept:\r\n\r\n", 1)
	if r := roundTrip(t, addr, empty); string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":"`+ErrStreamNotAccepted.Error()+`"}` {
		t.Errorf("an empty Accept line: %s", r.Body)
	}
	// HTTP/1.0 cannot carry a chunked stream.
	raw := strings.Replace(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"refused"}`, acceptSSE), "HTTP/1.1", "HTTP/1.0", 1)
	if r := roundTrip(t, addr, raw); string(r.Body) != `{"jsonrpc":"2.0","id":1,"result":"`+ErrStreamHTTP10.Error()+`"}` {
		t.Errorf("HTTP/1.0: %s", r.Body)
	}
	if !errors.Is(ErrStreamHTTP10, ErrStreamNotAccepted) {
		t.Error("ErrStreamHTTP10 is not an ErrStreamNotAccepted")
	}
}

func TestStreamFailureAndPanicAreFinalEvents(t *testing.T) {
	s, addr := serve(t, Config{}, streamMethods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	r := roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":"f","method":"fail"}`, acceptSSE))
	evs := sseEvents(t, r.Body)
	if r.Status != 200 || len(evs) != 2 || evs[1] != `{"jsonrpc":"2.0","id":"f","error":{"code":-32001,"message":"it failed"}}` {
		t.Errorf("fail: %d %q", r.Status, evs)
	}
	r = roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":"b","method":"boom"}`, acceptSSE))
	evs = sseEvents(t, r.Body)
	if len(evs) != 2 || evs[1] != `{"jsonrpc":"2.0","id":"b","error":{"code":-32603,"message":"internal error"}}` {
		t.Errorf("boom: %q", evs)
	}
	if st := s.Stats(); st.Entered != st.Answered {
		t.Errorf("stats %+v", st)
	}
}

func TestStreamClientRequest(t *testing.T) {
	_, addr := serve(t, Config{}, streamMethods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"ask"}`, acceptSSE))
	// Read the head and the request event by hand: the stream is open.
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(hr.Body)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
	if blank, _ := br.ReadString('\n'); !ok || blank != "\n" {
		t.Fatalf("first event %q %q", line, blank)
	}
	id, n := decode.Lookup([]byte(data), "id")
	method, _ := decode.Lookup([]byte(data), "method")
	if n != 1 || string(method) != `"question"` || !strings.HasPrefix(string(id), `"rpcedge-`) {
		t.Fatalf("request event %s", data)
	}
	// An answer to another id is refused as row 10 refuses responses.
	r := roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":"rpcedge-nope","result":{}}`))
	if r.Status != 400 || !strings.Contains(string(r.Body), "-32600") {
		t.Errorf("unmatched response: %d %s", r.Status, r.Body)
	}
	// The client answers on another connection: 202, no body.
	r = roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"a":42}}`))
	if r.Status != 202 || len(r.Body) != 0 {
		t.Errorf("response POST: %d %s", r.Status, r.Body)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, rest)
	if len(evs) != 1 || evs[0] != `{"jsonrpc":"2.0","id":1,"result":{"a":42}}` {
		t.Errorf("after the response: %q", rest)
	}
	// A second answer to the same id matches nothing.
	r = roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"a":42}}`))
	if r.Status != 400 {
		t.Errorf("repeated response: %d %s", r.Status, r.Body)
	}
}

// A client that stops reading stalls its handler (backpressure) and a
// write that times out ends the stream and the handler; the server's
// memory does not grow with what the handler would have sent.
func TestStreamSlowReaderStallsHandler(t *testing.T) {
	var done atomic.Int64
	s, addr := serve(t, Config{WriteTimeout: 300 * time.Millisecond}, streamMethods(t, &done).Endpoint("/rpc", decode.IDsJSONRPC))
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	// A million events of ~60 bytes: far more than the socket buffers hold.
	if _, err := nc.Write([]byte(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"count","params":{"n":1000000}}`, acceptSSE))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for done.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if done.Load() != 1 {
		t.Fatal("the handler of a stalled stream did not end after the write timeout")
	}
	for time.Now().Before(deadline) {
		if st := s.Stats(); st.Entered == st.Answered {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := s.Stats(); st.Entered != st.Answered {
		t.Errorf("stats %+v after the cut stream", st)
	}
	if n := s.streams.Load(); n != 0 {
		t.Errorf("%d stream slots still held", n)
	}
}

func TestStreamLimit(t *testing.T) {
	_, addr := serve(t, Config{MaxStreams: 1}, streamMethods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"wait"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := http.ReadResponse(c.br, nil); err != nil {
		t.Fatal(err)
	}
	r := roundTrip(t, addr, post("/rpc", `{"jsonrpc":"2.0","id":2,"method":"refused"}`, acceptSSE))
	if !strings.Contains(string(r.Body), ErrStreamLimit.Error()) {
		t.Errorf("second stream: %s", r.Body)
	}
}

// At Shutdown a stream whose handler waits is ended at the grace period
// with its final event, and counted as answered.
func TestStreamShutdown(t *testing.T) {
	s, addr := serveNoCleanup(t, Config{ShutdownGrace: 300 * time.Millisecond}, streamMethods(t, nil).Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	c.send(post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"wait"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		s.Shutdown(context.Background())
		close(stopped)
	}()
	body, err := io.ReadAll(hr.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	evs := sseEvents(t, body)
	if len(evs) != 2 || evs[1] != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"server shutting down"}}` {
		t.Errorf("events %q", evs)
	}
	<-stopped
	if st := s.Stats(); st.Entered != st.Answered {
		t.Errorf("stats %+v", st)
	}
}

// ServeEvents streams what its channel carries, ends when the channel is
// closed, and ends at Shutdown, calling done once each time.
func TestServeEvents(t *testing.T) {
	var ms Methods
	ms.HandleFunc("x", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	ep := ms.Endpoint("/rpc", decode.IDsJSONRPC)
	events := make(chan []byte, 4)
	var done atomic.Int64
	ep.Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
		if !ctx.IsGet() {
			return false
		}
		s.ServeEvents(ctx, events, func() { done.Add(1) })
		return true
	}
	s, addr := serveNoCleanup(t, Config{}, ep)
	c := dial(t, addr)
	c.send("GET /rpc HTTP/1.1\r\nHost: x\r\n\r\n")
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hr.StatusCode != 200 || hr.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", hr.StatusCode, hr.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(hr.Body)
	if line, _ := br.ReadString('\n'); line != ": stream open\n" {
		t.Fatalf("first line %q", line)
	}
	br.ReadString('\n')
	events <- []byte(`{"jsonrpc":"2.0","method":"n"}`)
	if line, _ := br.ReadString('\n'); line != `data: {"jsonrpc":"2.0","method":"n"}`+"\n" {
		t.Errorf("event %q", line)
	}
	// Other methods still get 405.
	if r := roundTrip(t, addr, "DELETE /rpc HTTP/1.1\r\nHost: x\r\n\r\n"); r.Status != 405 {
		t.Errorf("DELETE: %d", r.Status)
	}
	// Shutdown ends the open stream.
	stopped := make(chan struct{})
	go func() { stopServer(t, s); close(stopped) }()
	if _, err := io.ReadAll(br); err != nil {
		t.Errorf("reading to the end: %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(8 * time.Second):
		t.Fatal("Shutdown did not end the event stream")
	}
	if done.Load() != 1 || s.streams.Load() != 0 {
		t.Errorf("done %d, slots %d", done.Load(), s.streams.Load())
	}
}

func TestAppendEvent(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`{"a":1}`, "data: {\"a\":1}\n\n"},
		{"{\n  \"a\": 1\r\n}", "data: {\ndata:   \"a\": 1\ndata: }\n\n"},
		{"{\"s\":\"x\\ny\"}", "data: {\"s\":\"x\\ny\"}\n\n"},
	} {
		if got := string(appendEvent(nil, []byte(tc.msg))); got != tc.want {
			t.Errorf("appendEvent(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestAcceptsEventStream reads Accept values as RFC 9110 §12.5.1 does:
// the most specific matching range decides, q=0 refuses, no field allows
// everything and an empty one nothing. (Found by review on 2026-12-05:
// */* and text/* did not count, though the contract says "allows".)
func TestAcceptsEventStream(t *testing.T) {
	for v, want := range map[string]bool{
		"text/event-stream":                         true,
		" Text/Event-Stream ;charset=utf-8":         true,
		"application/json, text/event-stream;q=0.1": true,
		"*/*":                              true,
		"text/*":                           true,
		"*/*;q=0, text/*":                  true,
		"text/*;q=0, text/event-stream":    true,
		"*/*;q=0.5, text/event-stream;q=1": true,
		"":                                 false,
		"application/json":                 false,
		"text/event-stream;q=0":            false,
		"text/event-stream; Q=0.000":       false,
		"*/*, text/event-stream;q=0":       false,
		"text/*;q=0, */*":                  false,
		"*/*;q=0":                          false,
		"text/event-stream, text/event-stream;q=0": false,
		"text/event-streams, text/plain, */json":   false,
		"application/*":                            false,
	} {
		if got := AcceptsEventStream([]byte(v)); got != want {
			t.Errorf("AcceptsEventStream(%q) = %v, want %v", v, got, want)
		}
	}
	if !AcceptsEventStream(nil) {
		t.Error("no Accept field: refused, want allowed")
	}
}
