package fastserver

// Review 6 (second, hostile review) of d1daec6 (one peer watch, peeking
// with its lock released) and 636c818 (the TCP state behind waiting
// bytes). The findings failed on those commits and guard the fixes made
// the same day (2026-12-07: the socket taken when a stream is added,
// POLLRDHUP for the close); the tests marked GUARD checked a claim and
// found it holding, and stay for their coverage.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// r6holdMethods serves "hold": a streamed answer that sends one event,
// then waits for release (or its context) and returns a result.
func r6holdMethods(release <-chan struct{}) *Methods {
	var ms Methods
	ms.HandleFunc("hold", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
				return dst, err
			}
			select {
			case <-release:
			case <-st.Context().Done():
				return dst, st.Context().Err()
			}
			return append(dst, `"done"`...), nil
		}))
	})
	return &ms
}

// r6look has s's watcher look now rather than at its next tick (as
// TestPeerWatchLooksUnlocked does); a watcher must be running.
func r6look(t *testing.T, s *Server) {
	t.Helper()
	s.peers.mu.Lock()
	wake := s.peers.wake
	s.peers.mu.Unlock()
	select {
	case wake <- struct{}{}:
	case <-time.After(ioTimeout):
		t.Fatal("the watcher took no wake")
	}
}

// TestReview6PeekOfRecycledServeConn — FINDING (d1daec6).
//
// peerWatch's doc: it "peeks at the connections with the mutex released
// … and acts only on the additions it looked at"; peerWatch.remove: "Once
// it returns, n's peerLeft will not be called". What the look holds with
// its lock released is the net.Conn ctx.Conn returned — for ServeConn, a
// *capConn taken from the servedConns pool — and peerGone unwraps it
// (socketOf reads capConn.Conn) only when it peeks. A stream that ends
// during the look no longer waits for it (the point of the change), so
// its connection can end and ServeConn can put the wrapper back
// (server.go: cc.Conn = nil; servedConns.Put(cc)) — or hand it to the
// next connection — while the look has yet to peek at it: the peek reads
// capConn.Conn concurrently with that write (a data race: a torn
// interface read of a recycled wrapper), and looks at no socket or at
// another client's. Before d1daec6 remove waited for the look, so the
// wrapper could not be recycled under it.
//
// The watcher's gonePeer is wrapped to stand for a slow look (10,000
// streams take some 10 ms): it notes the socket under the connection when
// the look reaches it, then, once ServeConn has returned, peeks. Fails
// under -race (the race report) and without it (the look peeks at a
// socket that is no longer the stream's).
//
// Fix: take the socket (socketOf(conn)) when the stream is added, under
// the mutex, and keep it in the node and the look (a *net.TCPConn is not
// recycled; once closed its Control fails, so a late peek is harmless).
func TestReview6PeekOfRecycledServeConn(t *testing.T) {
	fasthttpOnly(t, "ServeConn and the peer watch are fasthttp's")
	release := make(chan struct{})
	s, err := New(Config{HandlerTimeout: 30 * time.Second, Logger: quietLogger}, r6holdMethods(release).Endpoint(pathRPC, decode.IDsJSONRPC))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	type seen struct{ before, after net.Conn }
	entered := make(chan struct{}, 1)
	looked := make(chan seen, 1)
	var first atomic.Bool
	s.peers.mu.Lock()
	s.peers.gonePeer = func(c net.Conn) bool {
		if !first.CompareAndSwap(false, true) {
			return peerGone(c)
		}
		before := socketOf(c)
		entered <- struct{}{}
		// A slow look: ServeConn returns meanwhile (no synchronisation
		// with it, as in the server: only time passes).
		time.Sleep(2500 * time.Millisecond)
		gone := peerGone(c) // the watcher's own peek, as it runs
		looked <- seen{before, socketOf(c)}
		return gone
	}
	s.peers.mu.Unlock()

	ln := listen(t)
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		served <- s.ServeConn(c)
	}()
	c := dial(t, ln.Addr().String())
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"hold"}`, acceptSSE))
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil || hr.StatusCode != 200 {
		t.Fatalf("hold: %v %v", hr, err)
	}
	r6look(t, s)
	select {
	case <-entered:
	case <-time.After(ioTimeout):
		t.Fatal("the look did not reach the stream")
	}
	// The stream ends while the look is under way, the client reads the
	// rest of the answer and leaves, and ServeConn returns.
	close(release)
	if _, err := io.ReadAll(hr.Body); err != nil {
		t.Fatalf("the rest of the answer: %v", err)
	}
	c.c.Close()
	select {
	case <-served:
	case <-time.After(time.Second):
		t.Fatal("ServeConn did not return within 1 s of the client leaving")
	}
	var got seen
	select {
	case got = <-looked:
	case <-time.After(ioTimeout):
		t.Fatal("the look did not finish")
	}
	if got.after != got.before {
		t.Errorf("the look peeked at %v under the stream's connection, which was %v when the look reached it: "+
			"ServeConn recycled the *capConn the look held with its lock released (server.go: cc.Conn = nil; servedConns.Put)", got.after, got.before)
	}
}

// r6node is a fake watched stream for the stress guard: each addition
// has a token; peerLeft must come at most once a token, and never after
// the remove of its addition returned.
type r6node struct {
	n       peerNode
	token   atomic.Int64 // the current addition's, 0 when not watched
	removed atomic.Int64 // the last addition whose remove returned
	left    atomic.Int64 // the last addition told
	errs    *r6errs
}

type r6errs struct {
	mu   sync.Mutex
	list []string
}

func (e *r6errs) add(format string, a ...any) {
	e.mu.Lock()
	if len(e.list) < 10 {
		e.list = append(e.list, fmt.Sprintf(format, a...))
	}
	e.mu.Unlock()
}

func (r *r6node) peerLeft() {
	tok := r.token.Load()
	switch {
	case tok == 0:
		r.errs.add("peerLeft of a node not watched")
	case r.removed.Load() == tok:
		r.errs.add("peerLeft of addition %d after its remove returned", tok)
	case r.left.Load() == tok:
		r.errs.add("peerLeft twice for addition %d", tok)
	}
	r.left.Store(tok)
}

// r6watchers counts the goroutines running w's look.
func r6watchers(w *peerWatch) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), fmt.Sprintf("(*peerWatch).run(%p", w))
}

// TestReview6PeerWatchStress — GUARD (d1daec6): streams added and
// removed from many goroutines while looks run back to back (each
// connection seen gone now and then) — every addition is told at most
// once, never after its remove returned, no node is left linked, one
// watcher at most runs, and it stops once the list is empty. Run with
// -race: the list is under the mutex, the peeks are not.
func TestReview6PeerWatchStress(t *testing.T) {
	w := &peerWatch{gonePeer: func(net.Conn) bool { return rand.IntN(3) == 0 }}
	stop := make(chan struct{})
	defer close(stop)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	errs := &r6errs{}
	const workers, rounds = 8, 400
	var tokens atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() { // looks, back to back
		for {
			w.mu.Lock()
			wake := w.wake
			w.mu.Unlock()
			if wake != nil {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
			select {
			case <-done:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	maxWatchers := 0
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes := [2]*r6node{{errs: errs}, {errs: errs}}
			for i := range rounds {
				r := nodes[i%2]
				tok := tokens.Add(1)
				r.token.Store(tok)
				conn := a
				if g%2 == 1 {
					conn = b
				}
				w.add(&r.n, conn, r, stop)
				if i%7 == 0 {
					time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				}
				w.remove(&r.n)
				r.removed.Store(tok)
				r.token.Store(0)
			}
		}()
	}
	for range 20 {
		if n := r6watchers(w); n > maxWatchers {
			maxWatchers = n
		}
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	close(done)
	errs.mu.Lock()
	for _, e := range errs.list {
		t.Error(e)
	}
	errs.mu.Unlock()
	if maxWatchers > 1 {
		t.Errorf("%d watchers ran at once, want at most 1", maxWatchers)
	}
	w.mu.Lock()
	head := w.head
	w.mu.Unlock()
	if head != nil {
		t.Fatalf("a node is still linked after every remove returned")
	}
	// The watcher stops at its next look (a wake: no 2 s tick needed).
	waitFor(t, "the watcher to stop", func() bool {
		w.mu.Lock()
		wake, running := w.wake, w.running
		w.mu.Unlock()
		if running {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		return !running
	})
	waitFor(t, "the watcher goroutine to end", func() bool { return r6watchers(w) == 0 })
}

// TestReview6PipelinedClientStays — GUARD (636c818): a client that
// pipelines a request behind a streamed answer and stays connected (its
// socket ESTABLISHED with bytes waiting) is not taken for gone: its
// handler is not cancelled in two looks, and once released the answer
// ends and the pipelined request is answered. Only a peer that closed
// behind the bytes counts as gone (CLOSE_WAIT and the like).
func TestReview6PipelinedClientStays(t *testing.T) {
	ms, causes := waitMethods()
	ms.HandleFunc("x", func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	_, addr := serve(t, Config{HandlerTimeout: goneEvery*2 + time.Second}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	startWait(t, c)
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":2,"method":"x"}`))
	select {
	case cause := <-causes:
		t.Fatalf("a client still connected, with a request pipelined, was taken for gone: %v", cause)
	case <-time.After(goneEvery*2 + time.Second/2):
	}
	// The handler deadline ends the stream; the pipelined call is then
	// answered on the same connection.
	select {
	case cause := <-causes:
		if !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("the stream's context ended with %v, want its deadline", cause)
		}
	case <-time.After(ioTimeout):
		t.Fatal("the stream did not reach its deadline")
	}
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	rest, _ := readUntil(c.br, `"id":2`)
	if !strings.Contains(rest, `"id":2`) {
		t.Errorf("the pipelined request was not answered: %q", rest)
	}
}

// readUntil reads from br until want has been read or reading fails.
func readUntil(br *bufio.Reader, want string) (string, error) {
	var b strings.Builder
	for !strings.Contains(b.String(), want) {
		c, err := br.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// TestReview6ShutdownEventStreamWatcherStops — GUARD (d1daec6): during
// Shutdown's drain an event stream ends (the server's stop), and the
// watcher stops as soon as the last stream is out, not at its next tick.
func TestReview6ShutdownEventStreamWatcherStops(t *testing.T) {
	fasthttpOnly(t, "nothing is watched over net/http")
	ms, _ := waitMethods()
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
	s, addr := serveNoCleanup(t, Config{ShutdownGrace: 10 * time.Second, MaxClientStreams: 2}, ep)
	g := dial(t, addr)
	g.send("GET " + pathRPC + " HTTP/1.1\r\nHost: x\r\n\r\n")
	g.c.SetReadDeadline(time.Now().Add(ioTimeout))
	if line, err := g.br.ReadString('\n'); err != nil || line != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("GET: %q %v", line, err)
	}
	waitStreams(t, s, 1, 1)
	start := time.Now()
	stopServer(t, s)
	waitFor(t, "the watcher to stop", func() bool {
		s.peers.mu.Lock()
		defer s.peers.mu.Unlock()
		return !s.peers.running
	})
	if took := time.Since(start); took > goneEvery {
		t.Errorf("the watcher stopped %v after Shutdown began, want at once once the stream was out", took)
	}
	if done.Load() != 1 {
		t.Errorf("done called %d times, want once", done.Load())
	}
}

// TestReview6MPTCPClientGoneBehindBytes — FINDING (636c818).
//
// README: "A client that leaves bytes unread behind it — a TLS
// close_notify, a request pipelined behind the stream — is noticed the
// same way on Linux, from the socket's TCP state"; peerGone's doc: "bytes
// wait but the peer closed behind them (on Linux, from the socket's TCP
// state …)". Go's listeners take Multipath TCP by default on Linux
// (net: defaultMPTCPEnabledListen), so a client that asks for MPTCP gets
// an MPTCP socket, whose TCP_INFO is its first subflow's: ESTABLISHED
// after the client closed (measured: state 1, where a plain TCP socket
// says 8, CLOSE_WAIT). peerClosed (pending_linux.go:18) then says the
// client is there, and its handler runs on to its deadline, as before
// 636c818.
//
// Fix: ask the socket whether its receiving side was shut rather than
// its TCP state — poll(2) with POLLRDHUP and a zero timeout reports
// POLLRDHUP|POLLHUP|POLLERR for TCP and MPTCP sockets alike, bytes
// waiting or not (or read MPTCP's own state for an MPTCP socket).
func TestReview6MPTCPClientGoneBehindBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the TCP state behind waiting bytes is read on Linux only")
	}
	fasthttpOnly(t, "net/http does not see a client leave behind a pipelined request (README)")
	ms, causes := waitMethods()
	_, addr := serve(t, Config{HandlerTimeout: goneEvery + 5*time.Second}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	d := net.Dialer{Timeout: ioTimeout}
	d.SetMultipathTCP(true)
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if mp, err := nc.(*net.TCPConn).MultipathTCP(); err != nil || !mp {
		t.Skipf("no Multipath TCP here (%v %v)", mp, err)
	}
	c := newConn(t, nc)
	startWait(t, c)
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":2,"method":"wait"}`, acceptSSE))
	nc.Close()
	start := time.Now()
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrStreamClosed) {
			t.Errorf("the handler's context ended with %v, want ErrStreamClosed (its client left)", cause)
		}
		if took := time.Since(start); took > goneEvery+time.Second {
			t.Errorf("the handler learned after %v, want within %v", took, goneEvery)
		}
	case <-time.After(goneEvery + 3*time.Second):
		t.Errorf("an MPTCP client that closed behind a pipelined request: the handler still waits %v after it left", goneEvery+3*time.Second)
	}
}
