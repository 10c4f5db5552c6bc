package fastserver

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// countLeft counts a watched stream's peerLeft calls.
type countLeft struct{ n atomic.Int64 }

func (c *countLeft) peerLeft() { c.n.Add(1) }

// TestPeerWatchLooksUnlocked: the watcher peeks at the connections with
// its mutex released, so a stream that ends while a look is under way is
// taken out at once (a look held the mutex through every peek until
// 2026-12-07: some 10 ms every 2 s at 10,000 streams, which every stream's
// start and end waited for); a stream taken out and watched again during
// the look is not ended by what the look saw of its earlier addition; a
// stream seen gone is told once and taken out of the watch.
func TestPeerWatchLooksUnlocked(t *testing.T) {
	entered := make(chan net.Conn)
	answer := make(chan bool)
	w := &peerWatch{gonePeer: func(c net.Conn) bool {
		entered <- c
		return <-answer
	}}
	stop := make(chan struct{})
	defer close(stop)
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	var a, b peerNode
	var leftA, leftB, leftB2 countLeft
	w.add(&a, c1, &leftA, stop)
	w.add(&b, c2, &leftB, stop)
	look := func() { w.wake <- struct{}{} } // a look, without the 2 s tick

	look()
	if c := <-entered; c != c2 { // the newest first
		t.Fatalf("the look peeked at %v first, want b's connection", c)
	}
	// b ends and is watched again (the next request on its connection)
	// while its peek is under way.
	removed := make(chan struct{})
	go func() {
		w.remove(&b)
		w.add(&b, c2, &leftB2, stop)
		close(removed)
	}()
	select {
	case <-removed:
	case <-time.After(5 * time.Second):
		answer <- false
		<-entered
		answer <- false
		t.Fatal("remove and add waited for the look's peek")
	}
	answer <- true // b's earlier addition: gone
	if c := <-entered; c != c1 {
		t.Fatalf("the look peeked at %v second, want a's connection", c)
	}
	answer <- true // a: gone
	waitFor(t, "a told", func() bool { return leftA.n.Load() == 1 })
	if leftB.n.Load() != 0 || leftB2.n.Load() != 0 {
		t.Fatalf("b told %d and %d times, want 0: the look saw an addition since removed", leftB.n.Load(), leftB2.n.Load())
	}

	// The next look peeks at b alone: a is out of the watch.
	look()
	if c := <-entered; c != c2 {
		t.Fatalf("the second look peeked at %v, want b's connection", c)
	}
	answer <- false
	look() // served after the second look's end
	if c := <-entered; c != c2 {
		t.Fatalf("the third look peeked at %v, want b's connection", c)
	}
	answer <- false
	if n := leftA.n.Load(); n != 1 {
		t.Errorf("a told %d times, want once", n)
	}
	w.remove(&b)
	look()
	waitFor(t, "the watcher to stop", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.running
	})
	w.remove(&a) // already out: nothing to do
}

// TestPeerWatchTransports: over fasthttp a streamed answer and a
// ServeEvents stream are watched while they are written; over net/http
// neither is (the request's context tells of a departed client, and the
// bridge's connection cannot be peeked at: until 2026-12-07 a streamed
// answer was put in the watch for nothing, and an event stream ran a
// ticker of its own).
func TestPeerWatchTransports(t *testing.T) {
	ms, _ := waitMethods()
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	events := make(chan []byte)
	ep.Other = func(s *Server, ctx *fasthttp.RequestCtx) bool {
		if !ctx.IsGet() {
			return false
		}
		s.ServeEvents(ctx, events, func() {})
		return true
	}
	s, addr := serve(t, Config{HandlerTimeout: 30 * time.Second, MaxClientStreams: 2}, ep)
	watched := func() int {
		s.peers.mu.Lock()
		defer s.peers.mu.Unlock()
		n := 0
		for p := s.peers.head; p != nil; p = p.next {
			n++
		}
		return n
	}
	want := 1
	if netHTTP {
		want = 0
	}
	c := dial(t, addr)
	startWait(t, c)
	if n := watched(); n != want {
		t.Errorf("a streamed answer: %d streams watched, want %d", n, want)
	}
	g := dial(t, addr)
	g.send("GET " + pathRPC + " HTTP/1.1\r\nHost: x\r\n\r\n")
	g.c.SetReadDeadline(time.Now().Add(ioTimeout))
	if line, err := g.br.ReadString('\n'); err != nil || line != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("GET: %q %v", line, err)
	}
	waitStreams(t, s, 2, 1)
	if n := watched(); n != 2*want {
		t.Errorf("a streamed answer and an event stream: %d streams watched, want %d", n, 2*want)
	}
	c.c.Close()
	g.c.Close()
	waitStreams(t, s, 0, 0)
	if n := watched(); n != 0 {
		t.Errorf("%d streams watched after both ended, want 0", n)
	}
}
