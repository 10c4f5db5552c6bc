package fastserver

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rpcedge/rpcedge/decode"
)

// holdMethods streams answers that stay open: "hold" sends one event and
// waits until release is closed; "refused" answers the Stream's refusal
// (or "live").
func holdMethods(release <-chan struct{}) *Methods {
	ms := streamMethods(nil, nil)
	ms.HandleFunc("hold", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
				return dst, err
			}
			select {
			case <-release:
			case <-st.Context().Done():
			}
			return append(dst, `"held"`...), nil
		}))
	})
	return ms
}

// from is a loopback address to dial from: Linux routes all of 127/8 to
// the loopback interface, so each is another client to the server.
func from(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip)} }

// openHold opens a held stream from local and returns once its answer
// has begun (200, text/event-stream).
func openHold(t *testing.T, addr string, local net.Addr, hdr ...string) {
	t.Helper()
	c := dialFrom(t, addr, local)
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"hold"}`, append([]string{acceptSSE}, hdr...)...))
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("hold from %v: %v", local, err)
	}
	if hr.StatusCode != 200 || hr.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("hold from %v: %d %s", local, hr.StatusCode, hr.Header.Get("Content-Type"))
	}
}

// askRefused asks "refused" from local and returns its answer's result.
func askRefused(t *testing.T, addr string, local net.Addr, hdr ...string) string {
	t.Helper()
	r := dialFrom(t, addr, local).do(post(pathRPC, `{"jsonrpc":"2.0","id":7,"method":"refused"}`, append([]string{acceptSSE}, hdr...)...))
	return string(r.Body)
}

// waitStreams waits until the server holds n stream slots and its table
// n clients.
func waitStreams(t *testing.T, s *Server, slots int64, clients int) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for s.streams.Load() != slots || s.clientStreams.clients() != clients {
		if time.Now().After(deadline) {
			t.Fatalf("%d stream slots held by %d clients; want %d by %d", s.streams.Load(), s.clientStreams.clients(), slots, clients)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One client holds at most MaxClientStreams streams; others still get
// theirs; a stream that ends gives its client's slot back.
func TestClientStreamLimit(t *testing.T) {
	release := make(chan struct{})
	s, addr := serve(t, Config{MaxStreams: 10, MaxClientStreams: 2}, holdMethods(release).Endpoint(pathRPC, decode.IDsJSONRPC))
	a, b := from("127.0.0.2"), from("127.0.0.3")
	openHold(t, addr, a)
	openHold(t, addr, a)
	waitStreams(t, s, 2, 1)
	if got := askRefused(t, addr, a); !strings.Contains(got, ErrClientStreamLimit.Error()) {
		t.Errorf("a third stream from one client: %s", got)
	}
	if got := askRefused(t, addr, b); !strings.Contains(got, `"live"`) {
		t.Errorf("another client's stream: %s", got)
	}
	if n := s.metrics.streamsClientRefused.Get(); n != 1 {
		t.Errorf("rpcedge_streams_client_refused_total %d, want 1", n)
	}
	close(release)
	waitStreams(t, s, 0, 0)
	if got := askRefused(t, addr, a); !strings.Contains(got, `"live"`) {
		t.Errorf("after its streams ended: %s", got)
	}
	waitStreams(t, s, 0, 0)
}

// Behind a trusted proxy the client is the forwarded address.
func TestClientStreamLimitForwarded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	cfg := Config{MaxClientStreams: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	s, addr := serve(t, cfg, holdMethods(release).Endpoint(pathRPC, decode.IDsJSONRPC))
	proxy := from("127.0.0.2")
	openHold(t, addr, proxy, "X-Forwarded-For: 192.0.2.1")
	waitStreams(t, s, 1, 1)
	for _, c := range []struct {
		name string
		hdr  []string
		live bool
	}{
		{"the same client", []string{"X-Forwarded-For: 192.0.2.1"}, false},
		{"the same client after a line of its own", []string{"X-Forwarded-For: 203.0.113.9, 192.0.2.1"}, false},
		{"the same client, the header in two lines", []string{"X-Forwarded-For: 203.0.113.9", "X-Forwarded-For: 192.0.2.1"}, false},
		{"another client", []string{"X-Forwarded-For: 192.0.2.2"}, true},
		{"the proxy itself", nil, true},
	} {
		got := askRefused(t, addr, proxy, c.hdr...)
		if c.live != strings.Contains(got, `"live"`) || !c.live && !strings.Contains(got, ErrClientStreamLimit.Error()) {
			t.Errorf("%s: %s", c.name, got)
		}
	}
	// An untrusted peer naming that client is keyed by its own address.
	if got := askRefused(t, addr, from("127.0.0.3"), "X-Forwarded-For: 192.0.2.1"); !strings.Contains(got, `"live"`) {
		t.Errorf("an untrusted peer: %s", got)
	}
}

// ServeEvents' streams count against the client's bound too: past it
// 503 with Retry-After, and done is called.
func TestClientStreamLimitServeEvents(t *testing.T) {
	testServeEventsRefused(t, Config{MaxClientStreams: 1}, "too many streams open for this client")
}

// Past MaxStreams, ServeEvents answers 503 with Retry-After too (the
// header was set before ctx.Error, which resets the response, and lost).
func TestServeEventsLimitRetryAfter(t *testing.T) {
	testServeEventsRefused(t, Config{MaxStreams: 1}, "too many streams open")
}

// testServeEventsRefused opens a stream from one client, is refused a
// second from it with msg, and opens one from another client when cfg
// bounds streams per client.
func testServeEventsRefused(t *testing.T, cfg Config, msg string) {
	var ms Methods
	ms.HandleFunc("x", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	events := make(chan []byte)
	var done atomic.Int64
	ep.Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
		if !ctx.IsGet() {
			return false
		}
		s.ServeEvents(ctx, events, func() { done.Add(1) })
		return true
	}
	s, addr := serveNoCleanup(t, cfg, ep)
	get := "GET " + pathRPC + " HTTP/1.1\r\nHost: x\r\n\r\n"
	open := func(local net.Addr) *bufio.Reader {
		c := dialFrom(t, addr, local)
		c.send(get)
		c.c.SetReadDeadline(time.Now().Add(ioTimeout))
		hr, err := http.ReadResponse(c.br, nil)
		if err != nil || hr.StatusCode != 200 {
			t.Fatalf("GET from %v: %v %v", local, hr, err)
		}
		return bufio.NewReader(hr.Body)
	}
	a, b := from("127.0.0.2"), from("127.0.0.3")
	ra := open(a)
	if r := dialFrom(t, addr, a).do(get); r.Status != 503 || r.Header.Get("Retry-After") != "1" || !strings.Contains(string(r.Body), msg) {
		t.Errorf("a second stream from one client: %d %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if done.Load() != 1 {
		t.Errorf("done called %d times for the refused stream", done.Load())
	}
	want := 2
	if cfg.MaxClientStreams > 0 {
		open(b)
		waitStreams(t, s, 2, 2)
		want = 3
	}
	stopServer(t, s)
	if _, err := ra.ReadString(0); err == nil {
		t.Error("the stream did not end at shutdown")
	}
	if s.streams.Load() != 0 || s.clientStreams != nil && s.clientStreams.clients() != 0 {
		t.Errorf("%d slots held after shutdown", s.streams.Load())
	}
	if done.Load() != int64(want) {
		t.Errorf("done called %d times, want %d", done.Load(), want)
	}
}

func TestClientStreamLimitConfig(t *testing.T) {
	_, err := New(Config{MaxClientStreams: -1}, testEndpoints(nil)...)
	if err == nil || !strings.Contains(err.Error(), "MaxClientStreams") {
		t.Errorf("MaxClientStreams -1: %v", err)
	}
	s, err := New(Config{}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	if s.clientStreams != nil {
		t.Error("a bound per client without MaxClientStreams")
	}
}

// The table's counts cannot go below zero unnoticed.
func TestClientStreamsGiveTwice(t *testing.T) {
	cs := newClientStreams(1, newRateLimiter(1, 1, 1, nil, false))
	k := netip.MustParseAddr("192.0.2.1")
	if !cs.take(k) || cs.take(k) {
		t.Fatal("take")
	}
	cs.give(k)
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "twice") {
			t.Errorf("a second give: %v", v)
		}
	}()
	cs.give(k)
}
