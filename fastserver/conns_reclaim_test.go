package fastserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// At the connection cap, a keep-alive connection idle for reclaimAfter or
// longer is closed to admit a new one, the one idle longest first; a
// connection idle for less, or busy, is not, and past the cap without
// one the answer is still the plain 503. Without it, clients that each
// keep an idle connection (one request a minute, under the idle timeout)
// held every slot and every new client was refused (found by review on
// 2026-12-06).
func TestReclaimIdleAtCap(t *testing.T) {
	fasthttpOnly(t, "net/http keeps its own connections; Serve's listener reclaims")
	s, addr := serve(t, Config{MaxConns: 3, IdleTimeout: time.Minute})
	refused := func(what string) {
		t.Helper()
		c := dial(t, addr)
		c.send(post(pathRPC, valid))
		r, err := c.tryRead()
		if err != nil || r.Status != 503 {
			t.Fatalf("%s: %v %v, want 503", what, r, err)
		}
	}

	// Three connections, idle from three different ticks: held[0] longest.
	held := make([]*conn, 3)
	var first time.Time
	for i := range held {
		if i > 0 {
			time.Sleep(250 * time.Millisecond) // apart by more than two ticks
		}
		held[i] = dial(t, addr)
		askEcho(t, held[i], 10+i)
		if i == 0 {
			first = time.Now()
		}
	}
	// None has been idle for reclaimAfter yet: a new connection past the
	// cap is refused (unless this machine took so long that held[0] has).
	if time.Since(first) < time.Duration(reclaimAfter)*time.Millisecond*8/10 {
		refused("past the cap, nothing idle for a second")
	} else {
		t.Logf("skipped the refusal before reclaimAfter: the three requests took %v", time.Since(first))
	}

	time.Sleep(time.Duration(reclaimAfter)*time.Millisecond + 300*time.Millisecond)
	c := dial(t, addr)
	askEcho(t, c, 20)
	held[0].expectGone()
	untouched(t, held[1])
	untouched(t, held[2])
	// The reclaimed slot is the new connection's: the next one finds
	// held[1] idle longest, and the new connection (just answered,
	// idle for less than a second) keeps its own.
	c2 := dial(t, addr)
	askEcho(t, c2, 21)
	held[1].expectGone()
	untouched(t, c)
	untouched(t, held[2])
	askEcho(t, c, 22)
	askEcho(t, held[2], 23)

	// A connection busy reading a request is never reclaimed: with all
	// three in the middle of one, past the cap is refused.
	time.Sleep(time.Duration(reclaimAfter)*time.Millisecond + 300*time.Millisecond)
	raw := post(pathRPC, valid)
	for _, b := range []*conn{c, c2, held[2]} {
		b.send(raw[:len(raw)-5])
	}
	time.Sleep(200 * time.Millisecond)
	refused("past the cap, every connection reading")
	for _, b := range []*conn{c, c2, held[2]} {
		b.send(raw[len(raw)-5:])
		if r := b.read(); r.Status != 200 {
			t.Errorf("the request finished after the refusal: %s", r.StatusLine)
		}
	}

	m := metricsOf(s)
	if !strings.Contains(m, "rpcedge_connections_reclaimed_total 2\n") {
		t.Errorf("want rpcedge_connections_reclaimed_total 2 in\n%s", grepLines(m, "reclaimed"))
	}
}

// ServeConn's connections, not counted against MaxConns, are in the list
// reclaimIdle walks, and are never reclaimed: closing one would admit a
// Serve connection past the cap without freeing a slot (found by review
// of the first version: six Serve connections open at MaxConns 1, five
// ServeConn clients cut off).
func TestReclaimLeavesServeConn(t *testing.T) {
	fasthttpOnly(t, "Serve's listener reclaims")
	s, addr := serve(t, Config{MaxConns: 1, IdleTimeout: time.Minute})
	// The caller's own listener, served with ServeConn.
	own := listen(t)
	go func() {
		for {
			c, err := own.Accept()
			if err != nil {
				return
			}
			go s.ServeConn(c)
		}
	}()
	const k = 5
	side := make([]*conn, k)
	for i := range side {
		side[i] = dial(t, own.Addr().String())
		askEcho(t, side[i], i)
	}
	time.Sleep(time.Duration(reclaimAfter)*time.Millisecond + 300*time.Millisecond)

	var served []*conn
	for i := 0; i < k+1; i++ {
		c := dial(t, addr)
		r := c.do(post(pathRPC, valid))
		if r.Status != 200 {
			t.Logf("Serve connection %d: %s (refused)", i, r.StatusLine)
			break
		}
		served = append(served, c)
	}
	t.Logf("Serve connections admitted and open: %d, s.open=%d, MaxConns=1", len(served), s.open.Load())
	if n := s.open.Load(); n > 1 {
		t.Errorf("open connections %d > MaxConns 1", n)
	}
	gone := 0
	for _, c := range side {
		c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.br.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				gone++
			}
		}
	}
	if gone > 0 {
		t.Errorf("%d of %d ServeConn connections closed to admit Serve's past the cap", gone, k)
	}
}

// When the connection chosen sends a byte just as it is reclaimed (the
// phase's compare-and-swap fails), the search goes on to the next idle
// one: the first version refused every connection past the cap for the
// rest of the tick although others were idle and reclaimable.
func TestReclaimAfterLostRace(t *testing.T) {
	// The coarse clock is the package's, shared with every server the
	// tests run: brought up to the time, never past it.
	for monoNow()/int64(time.Millisecond) < 3*reclaimAfter {
		time.Sleep(100 * time.Millisecond)
	}
	advanceClock(monoNow() / int64(time.Millisecond))
	now := connClock.Load()
	var open atomic.Int64
	mk := func(stamp int64) *capConn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		c := &capConn{Conn: a, open: &open} // counted, as Serve's are
		c.phase.Store(uint64(stamp)<<connPhaseBits | connIdle)
		return c
	}
	lost, refusedWithIdle := 0, 0
	for i := 0; i < 500 && refusedWithIdle == 0; i++ {
		var l connList
		a := mk(now - 3*reclaimAfter) // idle longest: the victim
		b := mk(now - 2*reclaimAfter) // idle too: reclaimable
		l.add(a)
		l.add(b)
		a.phase.Store(uint64(now-3*reclaimAfter)<<connPhaseBits | connIdle)
		b.phase.Store(uint64(now-2*reclaimAfter)<<connPhaseBits | connIdle)
		start := make(chan struct{})
		done := make(chan struct{})
		stop := make(chan struct{})
		go func() { // a's client: requests and idle spells, flipping fast
			<-start
			idle := uint64(now-3*reclaimAfter)<<connPhaseBits | connIdle
			for j := 0; ; j++ {
				select {
				case <-stop:
					close(done)
					return
				default:
				}
				if j%2 == 0 {
					a.phase.CompareAndSwap(idle, uint64(now)<<connPhaseBits|connReading)
				} else {
					a.phase.CompareAndSwap(uint64(now)<<connPhaseBits|connReading, idle)
				}
			}
		}()
		close(start)
		time.Sleep(10 * time.Microsecond)
		ok := l.reclaimIdle(3, 2)
		close(stop)
		<-done
		if ok {
			continue
		}
		lost++
		// b is still idle for 2 s: the next connection past the cap
		// should take it.
		a.phase.Store(uint64(now)<<connPhaseBits | connReading) // a stays busy now
		if !l.reclaimIdle(3, 2) && b.phase.Load()&(1<<connPhaseBits-1) == connIdle {
			refusedWithIdle++
		}
	}
	t.Logf("lost races %d", lost)
	if refusedWithIdle > 0 {
		t.Errorf("after a lost race, a connection past the cap was refused while another was idle for 2 s")
	}
}

// askEcho sends an echo call with id on c and checks its answer.
func askEcho(t *testing.T, c *conn, id int) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"s":"r%d"}}`, id, id)
	if r := c.do(post(pathRPC, body)); r.Status != 200 || !strings.Contains(string(r.Body), fmt.Sprintf(`"r%d"`, id)) {
		t.Fatalf("request %d: %s %s", id, r.StatusLine, r.Body)
	}
}

// untouched checks that the server has neither written to c nor closed
// it.
func untouched(t *testing.T, c *conn) {
	t.Helper()
	c.c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.br.Read(make([]byte, 64))
	if ne, ok := err.(net.Error); n > 0 || !ok || !ne.Timeout() {
		t.Errorf("a connection that should be left alone: %d bytes, %v", n, err)
	}
}

// metricsOf returns the server's exposition, read without a connection.
func metricsOf(s *Server) string {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("GET")
	s.MetricsHandler()(&ctx)
	return string(ctx.Response.Body())
}

// grepLines returns the lines of s that hold sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Shutdown closes a connection that has sent no byte of a request
// newConnGrace after its acceptance, the TLS handshake included: a client
// that opened a TLS connection and never finished the handshake held
// Shutdown for ReadTimeout (here 30 s), past the grace period, and
// cmd/rpcedge exited 1 (found by review on 2026-12-06). fasthttp's own
// rule (close a connection silent for 5 s) starts after the handshake.
func TestShutdownClosesUnfinishedHandshakes(t *testing.T) {
	fasthttpOnly(t, "net/http closes new connections after 5 s itself")
	t.Parallel()
	certFile, keyFile := writeCert(t, t.TempDir(), 7)
	kp, err := LoadKeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	grace := 8 * time.Second
	s, addr := serveNoCleanup(t, Config{TLS: kp.TLSConfig(), ReadTimeout: 30 * time.Second, ShutdownGrace: grace})

	var raws []net.Conn
	dialRaw := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		raws = append(raws, c)
		return c
	}
	dialRaw()                                             // not a byte
	dialRaw().Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00}) // a ClientHello's record header, then nothing
	// A finished handshake, then nothing: fasthttp's own rule.
	tc, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	// A served connection, idle: closed at once.
	served, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	if r := tlsDo(t, served, post(pathRPC, valid)); r.StatusCode != 200 {
		t.Fatalf("over TLS: %s", r.Status)
	}

	start := time.Now()
	err = s.Shutdown(context.Background())
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Shutdown: %v after %v, want nil within the grace period (%v)", err, took, grace)
	}
	if took > time.Duration(newConnGrace)*time.Millisecond+2*time.Second {
		t.Errorf("Shutdown took %v, want about newConnGrace (%d ms)", took, newConnGrace)
	}
	if took < time.Duration(newConnGrace)*time.Millisecond-time.Second {
		t.Errorf("Shutdown took %v: connections accepted just before it were not given newConnGrace (%d ms)", took, newConnGrace)
	}
	for i, c := range raws {
		c.SetReadDeadline(time.Now().Add(ioTimeout))
		if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("raw connection %d: %v, want it closed", i, err)
		}
	}
	v, _ := serveDone.LoadAndDelete(s)
	if err := <-v.(chan error); err != nil {
		t.Errorf("Serve returned %v", err)
	}
}

// At the cap, a connection that has said nothing since it was accepted,
// for newConnGrace or longer, is reclaimed like an idle one (nginx reuses
// both): clients that connect and send nothing held a slot each for
// ReadTimeout, and refused new clients meanwhile. One that has begun its
// request is not.
func TestReclaimSilentAtCap(t *testing.T) {
	fasthttpOnly(t, "net/http keeps its own connections; Serve's listener reclaims")
	t.Parallel()
	_, addr := serve(t, Config{MaxConns: 3, ReadTimeout: time.Minute})
	silent := dial(t, addr)
	time.Sleep(250 * time.Millisecond)
	begun := dial(t, addr)
	raw := post(pathRPC, valid)
	begun.send(raw[:7]) // "POST /m": its request has begun
	time.Sleep(250 * time.Millisecond)
	silent2 := dial(t, addr)
	time.Sleep(time.Duration(newConnGrace)*time.Millisecond + 300*time.Millisecond)

	c := dial(t, addr)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"echo","params":{"s":"x"}}`, time.Now().UnixNano()%1000)
	if r := c.do(post(pathRPC, body)); r.Status != 200 {
		t.Fatalf("past the cap with a silent connection: %s", r.StatusLine)
	}
	// fasthttp answers a connection cut before its first request as at
	// ReadTimeout: 408, then the close.
	closedSilent := func(c *conn) {
		t.Helper()
		c.c.SetReadDeadline(time.Now().Add(ioTimeout))
		b, err := io.ReadAll(c.br)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) || len(b) > 0 && !bytes.HasPrefix(b, []byte("HTTP/1.1 408 ")) {
			t.Errorf("a silent connection reclaimed: %q, %v; want a 408 or nothing, then the close", b, err)
		}
	}
	closedSilent(silent)
	untouched(t, silent2)
	untouched(t, begun)
	// The next one takes silent2, never the one whose request has begun.
	c2 := dial(t, addr)
	if r := c2.do(post(pathRPC, valid)); r.Status != 200 {
		t.Fatalf("past the cap with a second silent connection: %s", r.StatusLine)
	}
	closedSilent(silent2)
	begun.send(raw[7:])
	if r := begun.read(); r.Status != 200 {
		t.Errorf("the begun request: %s", r.StatusLine)
	}
}

// lateConn is a connection whose serving goroutine runs late, as under
// load: each read first waits for bytes, then for late, before it reads.
type lateConn struct {
	*net.TCPConn
	late time.Duration
}

func (c *lateConn) Read(p []byte) (int, error) {
	if rc, err := c.TCPConn.SyscallConn(); err == nil {
		rc.Read(func(fd uintptr) bool {
			// Bytes there (or the end): late, then read. None: wait for
			// them (the poller's wait returns on their arrival; waiting
			// with bytes already there could wait for ever).
			var b [1]byte
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK) {
				return false
			}
			time.Sleep(c.late)
			return true
		})
	}
	return c.TCPConn.Read(p)
}

// lateListener makes its first connection a lateConn.
type lateListener struct {
	net.Listener
	n atomic.Int32
}

func (l *lateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil && l.n.Add(1) == 1 {
		return &lateConn{TCPConn: c.(*net.TCPConn), late: 50 * time.Millisecond}, nil
	}
	return c, err
}

// A request sent whole, which the goroutine serving its connection has
// not read yet, keeps the connection from being reclaimed, whether it is
// the connection's first (it was answered 408) or follows an idle spell
// (it was lost, the connection closed unanswered): the phase still said
// silent or idle; bytes waiting in the socket say busy (found by review
// of the first version; the window is the goroutine's wake-up, widest
// under load, when the server is at its cap).
func TestReclaimSparesUnreadRequest(t *testing.T) {
	fasthttpOnly(t, "Serve's listener reclaims")
	for _, tc := range []struct {
		name  string
		first bool          // the connection's first request, else one after an idle spell
		quiet time.Duration // how long before the request comes
	}{
		{"first request", true, time.Duration(newConnGrace)*time.Millisecond + 300*time.Millisecond},
		{"after an idle spell", false, time.Duration(reclaimAfter)*time.Millisecond + 300*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(Config{MaxConns: 1, ReadTimeout: time.Minute, IdleTimeout: time.Minute, Logger: quietLogger}, testEndpoints(nil)...)
			if err != nil {
				t.Fatal(err)
			}
			ln := &lateListener{Listener: listen(t)}
			done := make(chan error, 1)
			go func() { done <- s.Serve(ln) }()
			serveDone.Store(s, done)
			t.Cleanup(func() { stopServer(t, s) })
			addr := ln.Addr().String()

			v := dial(t, addr)
			if !tc.first {
				if r := v.do(post(pathRPC, valid)); r.Status != 200 {
					t.Fatalf("the first request: %s", r.StatusLine)
				}
			}
			time.Sleep(tc.quiet)
			id := fmt.Sprintf(`"u%d"`, time.Now().UnixNano()%100000)
			v.send(post(pathRPC, `{"jsonrpc":"2.0","id":`+id+`,"method":"echo","params":{"s":"late"}}`))
			time.Sleep(5 * time.Millisecond) // in the socket, not read yet
			c := dial(t, addr)
			c.send(post(pathRPC, valid))
			if r, err := c.tryRead(); err != nil || r.Status != 503 {
				t.Errorf("the connection past the cap: %v %v, want 503 (the other is busy)", r, err)
			}
			r, err := v.tryRead()
			if err != nil || r.Status != 200 || !strings.Contains(string(r.Body), id) {
				t.Fatalf("the request sent whole: %v %v, want its answer", r, err)
			}
		})
	}
}
