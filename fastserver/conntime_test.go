package fastserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The connection timeouts (conntime.go) cut a connection no earlier than
// configured and soon after, whichever way the client stalls: the first
// request's headers, a keep-alive request's headers, a body, between
// requests. Each start is taken on the client before the server can have
// begun the phase, so a cut measured sooner than the timeout is a cut
// made too early.
func TestConnTimeoutBounds(t *testing.T) {
	const d = 400 * time.Millisecond
	_, addr := serve(t, Config{ReadTimeout: d, IdleTimeout: d, WriteTimeout: d, DrainTimeout: 100 * time.Millisecond})
	closedAfter := func(c *conn, start time.Time, what string) {
		t.Helper()
		c.c.SetReadDeadline(time.Now().Add(ioTimeout))
		_, err := io.Copy(io.Discard, c.br) // an answer (408, 400) may come first
		took := time.Since(start)
		switch {
		case isTimeout(err):
			t.Errorf("%s: not closed within %v", what, ioTimeout)
		case took < d:
			t.Errorf("%s: closed after %v, before the %v timeout", what, took, d)
		case took > d+1500*time.Millisecond:
			t.Errorf("%s: closed after %v, want soon after %v", what, took, d)
		default:
			t.Logf("%s: closed after %v", what, took.Round(time.Millisecond))
		}
	}
	for i := range 2 { // a connection's wrapper may be reused
		start := time.Now()
		c := dial(t, addr)
		c.send("POST " + pathRPC + " HTTP/1.1\r\nHost: a\r\nContent-Le")
		closedAfter(c, start, "the first request's headers stalled")

		c = dial(t, addr)
		id := strconv.Itoa(100 + i)
		want{200, 0, id, `{"k":` + id + `}`, ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":`+id+`,"method":"echo","params":{"k":`+id+`}}`)))
		start = time.Now()
		c.send("POST " + pathRPC + " HTTP/1.1\r\nHo")
		closedAfter(c, start, "a keep-alive request's headers stalled")

		start = time.Now()
		c = dial(t, addr)
		c.send(post(pathRPC, `{"jsonrpc":"2.0","id":`, "Content-Length: 100"))
		closedAfter(c, start, "a body stalled")

		c = dial(t, addr)
		start = time.Now()
		want{200, 0, `"i"`, `null`, ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":"i","method":"echo"}`)))
		closedAfter(c, start, "idle after an answer")
	}
	if netHTTP {
		return // net/http's own timeouts: not counted
	}
	m := roundTrip(t, addr, request("GET", "/metrics", ""))
	for phase, n := range map[string]int{"read": 6, "idle": 2, "write": 0} {
		line := `rpcedge_connection_timeouts_total{phase="` + phase + `"} ` + strconv.Itoa(n) + "\n"
		if !strings.Contains(string(m.Body), line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// No connection timeout runs while the handler does: a handler slower
// than every connection timeout (the handler deadline is longer) is
// answered, and its connection serves on, pipelined requests included.
func TestConnTimeoutSparesHandler(t *testing.T) {
	if netHTTP {
		t.Skip("net/http's WriteTimeout runs from the end of the request's headers, the handler's time included")
	}
	const d = 150 * time.Millisecond // sleepyFor (400 ms) is longer
	_, addr := serve(t, Config{ReadTimeout: d, IdleTimeout: d, WriteTimeout: d, HandlerTimeout: 5 * time.Second})
	c := dial(t, addr)
	want{200, 0, `"s1"`, `"slept"`, ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":"s1","method":"sleep"}`)))
	c.expectOpen()
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":"s2","method":"sleep"}`) + post(pathRPC, `{"jsonrpc":"2.0","id":"e","method":"echo","params":{"k":2}}`))
	want{200, 0, `"s2"`, `"slept"`, ""}.check(t, c.read())
	want{200, 0, `"e"`, `{"k":2}`, ""}.check(t, c.read())
	c.expectOpen()
}

// A client that stops reading a large answer is cut off once the write
// has been stalled for WriteTimeout: the server does not hold the
// connection (and its answer) open for it.
func TestConnTimeoutWrite(t *testing.T) {
	const d = 300 * time.Millisecond
	s, addr := serve(t, Config{ReadTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, WriteTimeout: d})
	nc := dialSmallWindow(t, addr)
	c := newConn(t, nc)
	const n = 32 << 20 // more than the kernel buffers hold
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":"w","method":"big","params":{"n":`+strconv.Itoa(n)+`}}`))
	time.Sleep(d + 1500*time.Millisecond) // stalled, then cut
	nc.SetReadDeadline(time.Now().Add(ioTimeout))
	got, err := io.Copy(io.Discard, nc)
	if got >= n {
		t.Fatalf("the whole %d-byte answer arrived (%d bytes): the stalled write was not cut", n, got)
	}
	if isTimeout(err) {
		t.Fatalf("after %d bytes the connection stayed open", got)
	}
	t.Logf("cut after %d of %d bytes (%v)", got, n, err)
	waitFor(t, "the connection closed on the server", func() bool { return s.open.Load() == 0 })
	if !netHTTP {
		if v := s.metrics.connTimeouts[connWriting].Get(); v != 1 {
			t.Errorf("write timeouts counted: %d, want 1", v)
		}
	}
}

// ServeConn's connections have the same timeouts: an idle one is closed.
func TestConnTimeoutServeConn(t *testing.T) {
	s, err := New(Config{IdleTimeout: 200 * time.Millisecond, Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan error, 1)
	go func() { done <- s.ServeConn(server) }()
	go io.WriteString(client, post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"k":1}}`))
	hr, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hr.Body)
	if hr.StatusCode != 200 || !strings.Contains(string(body), `"result":{"k":1}`) {
		t.Fatalf("answer %d %s", hr.StatusCode, body)
	}
	start := time.Now()
	select {
	case <-done:
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Errorf("closed after %v idle, before the 200ms timeout", took)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ServeConn's idle connection was never closed")
	}
}

// The sweep times a phase from when it first saw it: a phase whose
// coarse start is far in the past (a clock left behind) is not cut early,
// and a connection that moved to another phase is not cut at all.
func TestConnSweepNeverEarly(t *testing.T) {
	var l connList
	lim := connTimeouts{read: 100, write: 100, idle: 100}
	a, b := &fakeDeadlines{}, &fakeDeadlines{}
	open := new(atomic.Int64)
	ca, cb := &capConn{Conn: a, list: &l, open: open}, &capConn{Conn: b, list: &l, open: open}
	l.add(ca)
	l.add(cb)
	ca.phase.Store(0<<connPhaseBits | connReading) // began "at 0", long before now
	cb.phase.Store(0<<connPhaseBits | connHandling)
	now := int64(1_000_000)
	l.sweep(now, &lim) // first sight
	l.sweep(now+100, &lim)
	if a.read != 0 {
		t.Fatalf("cut after 100 ms seen, at the 100 ms limit")
	}
	l.sweep(now+101, &lim)
	if a.read != 1 || a.write != 0 {
		t.Fatalf("reading overstayed: read deadlines %d, write %d; want 1, 0", a.read, a.write)
	}
	l.sweep(now+500, &lim)
	if a.read != 1 {
		t.Errorf("cut twice")
	}
	if b.read+b.write != 0 {
		t.Errorf("a handling connection was cut")
	}
	cb.setPhase(connWriting)
	l.sweep(now+600, &lim)
	cb.setPhase(connIdle) // moved on before the limit
	l.sweep(now+650, &lim)
	l.sweep(now+750, &lim)
	if b.read+b.write != 0 {
		t.Errorf("a connection that changed phase was cut")
	}
	l.sweep(now+751, &lim)
	if b.read != 1 || b.write != 0 {
		t.Errorf("idle overstayed: read deadlines %d, write %d; want 1, 0", b.read, b.write)
	}
	// A phase stamped with the sweep's own time may recur within the
	// tick: it is first counted on the next sweep.
	cb.phase.Store(uint64(now+800)<<connPhaseBits | connReading)
	l.sweep(now+800, &lim) // not counted yet
	l.sweep(now+900, &lim) // first counted
	l.sweep(now+1000, &lim)
	if b.read != 1 {
		t.Errorf("a phase stamped with its sweep's time was counted from that sweep")
	}
	l.sweep(now+1001, &lim)
	if b.read != 2 {
		t.Errorf("reading overstayed, counted from the sweep after its stamp: read deadlines %d, want 2", b.read)
	}
	ca.Close()
	cb.Close()
	if l.head != nil {
		t.Errorf("closed connections still listed")
	}
	var nilList capConn // not watched (net/http's): closing it is fine
	nilList.Conn, nilList.open = &fakeDeadlines{}, new(atomic.Int64)
	nilList.Close()
}

// fakeDeadlines counts the deadlines set on it: expired ones by kind
// (SetDeadline counts as both), write deadlines in the future, and
// whether SetDeadline cleared them.
type fakeDeadlines struct {
	net.Conn
	read, write, writeSet int
	cleared               bool
}

func (f *fakeDeadlines) SetReadDeadline(time.Time) error { f.read++; return nil }
func (f *fakeDeadlines) SetWriteDeadline(time.Time) error {
	f.writeSet++
	return nil
}
func (f *fakeDeadlines) SetDeadline(t time.Time) error {
	if t.IsZero() {
		f.cleared = true
		return nil
	}
	f.read++
	f.write++
	return nil
}
func (f *fakeDeadlines) Close() error { return nil }

// The connection-state hook ignores connections Serve did not accept.
func TestConnStateForeign(t *testing.T) {
	connState(&fakeDeadlines{}, fasthttp.StateActive)
	var ctx fasthttp.RequestCtx
	markConn(&ctx, connWriting)
	if watchedConn(nil) != nil || watchedConn(&fakeDeadlines{}) != nil {
		t.Fatal("a connection Serve did not accept is watched")
	}
}

// dialSmallWindow dials addr with a 4 KiB receive buffer, so that the
// server's writes stall soon once the client stops reading.
func dialSmallWindow(t *testing.T, addr string) net.Conn {
	t.Helper()
	dl := net.Dialer{Timeout: ioTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	nc, err := dl.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// Pipelined answers that fasthttp holds in its buffer are flushed while
// it reads the next request's headers, in the reading phase: a client
// that sends requests and never reads the answers stalls that flush, and
// the cut of the read must bound the write too.
func TestConnTimeoutPipelinedFlush(t *testing.T) {
	if netHTTP {
		t.Skip("fasthttp's connection loop")
	}
	s, addr := serve(t, Config{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, IdleTimeout: 5 * time.Second})
	nc := dialSmallWindow(t, addr)
	// Nine answers of ~1.1 KB stay within fasthttp's 16 KiB write buffer;
	// the half request after them makes fasthttp flush them while it
	// waits for the rest (the pause lets it get there each round).
	one := post(pathRPC, `{"jsonrpc":"2.0","id":"p","method":"big","params":{"n":1000}}`)
	round := strings.Repeat(one, 9) + one[:len(one)/2]
	rest := one[len(one)/2:]
	deadline := time.Now().Add(5 * time.Second)
	sent := 0
	for i := 0; i < 3000 && time.Now().Before(deadline); i++ {
		nc.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		msg := round
		if i > 0 {
			msg = rest + round
		}
		if _, err := io.WriteString(nc, msg); err != nil {
			break // the server stopped reading: its flush is stalled
		}
		sent++
		time.Sleep(time.Millisecond)
	}
	t.Logf("%d rounds of 9½ requests sent before the server stalled", sent)
	waitFor(t, "the stalled connection closed by the server", func() bool { return s.open.Load() == 0 })
	// Most often the stall is in the reading phase; a server slower than
	// the client (under -race) may fill its write buffer first and stall
	// writing an answer instead: one cut either way.
	r, w := s.metrics.connTimeouts[connReading].Get(), s.metrics.connTimeouts[connWriting].Get()
	if r+w != 1 {
		t.Errorf("timeouts counted: read %d, write %d; want one cut", r, w)
	}
	t.Logf("cut in the %s phase", map[bool]string{true: "reading", false: "writing"}[r == 1])
}

// A connection's first request is timed from its acceptance, as fasthttp
// times it: a first byte sent late does not restart ReadTimeout.
func TestConnTimeoutFirstRequestFromAccept(t *testing.T) {
	const d = 600 * time.Millisecond
	_, addr := serve(t, Config{ReadTimeout: d, IdleTimeout: 5 * time.Second})
	start := time.Now()
	c := dial(t, addr)
	time.Sleep(d - 100*time.Millisecond)
	go func() { // trickle the headers
		for _, b := range []byte("POST " + pathRPC + " HTTP/1.1\r\nHost: a\r\nX-Slow: 1") {
			c.c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	io.Copy(io.Discard, c.br)
	took := time.Since(start)
	if took < d || took > d+400*time.Millisecond {
		t.Errorf("cut after %v from the dial, want soon after %v (ReadTimeout from the acceptance, not from the first byte)", took, d)
	}
}

// A request read before a cut in its reading phase (its handler, or a
// wait before its body, took longer than ReadTimeout without reading) is
// answered, and its connection serves on: going idle clears the expired
// deadlines, as fasthttp's next idle deadline replaced its own.
func TestConnCutThenIdle(t *testing.T) {
	var l connList
	lim := connTimeouts{read: 100, write: 100, idle: 1000}
	f := &fakeDeadlines{}
	c := &capConn{Conn: f, list: &l, open: new(atomic.Int64)}
	l.add(c)
	c.phase.Store(0<<connPhaseBits | connReading)
	l.sweep(1000, &lim)
	l.sweep(1101, &lim)
	if f.read != 1 || f.writeSet != 1 || !c.cutReading.Load() {
		t.Fatalf("cut while reading: read deadlines %d, write deadlines %d, cut %v; want 1, 1 (WriteTimeout from now), true", f.read, f.writeSet, c.cutReading.Load())
	}
	connState(c, fasthttp.StateIdle)
	if !f.cleared || c.cutReading.Load() {
		t.Errorf("answered after the cut and idle: deadlines cleared %v, cut still marked %v", f.cleared, c.cutReading.Load())
	}
	if c.phase.Load()&(1<<connPhaseBits-1) != connIdle {
		t.Errorf("phase %d, want idle", c.phase.Load()&(1<<connPhaseBits-1))
	}
	// A first request's reading phase is not restarted by its first byte.
	c.phase.Store(7<<connPhaseBits | connReading)
	connState(c, fasthttp.StateActive)
	if c.phase.Load() != 7<<connPhaseBits|connReading {
		t.Errorf("the first byte restarted the first request's reading phase")
	}
	c.Close()
	if ceilMillis(time.Microsecond) != 1 || ceilMillis(0) != 0 || ceilMillis(time.Second) != 1000 {
		t.Errorf("ceilMillis: a sub-millisecond timeout must stay a timeout")
	}
}

// A GET handler slower than ReadTimeout (its request is read: only the
// handler runs) is answered and its connection serves on.
func TestConnTimeoutSlowGET(t *testing.T) {
	if netHTTP {
		t.Skip("net/http's WriteTimeout runs from the end of the request's headers, the handler's time included")
	}
	s, err := New(Config{Logger: quietLogger, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HandleGET("/slow", func(ctx *fasthttp.RequestCtx) {
		time.Sleep(500 * time.Millisecond)
		ctx.SetBodyString("slow")
	}); err != nil {
		t.Fatal(err)
	}
	addr := serveBuilt(t, s)
	c := dial(t, addr)
	for i := range 2 {
		if r := c.do(request("GET", "/slow", "")); r.Status != 200 || string(r.Body) != "slow" {
			t.Fatalf("GET %d: %s %q", i, r.StatusLine, r.Body)
		}
	}
	c.expectOpen()
	if v := s.metrics.connTimeouts[connReading].Get(); v != 0 {
		t.Errorf("read timeouts counted: %d, want 0", v)
	}
}
