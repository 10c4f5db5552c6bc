package mcp

// Tests of a session's GET stream taken over by a new GET (sessions.go,
// "Taking a stream over"), with raw loopback connections: clients that
// never read, half-close, race, or lose to DELETE. Each checks that the
// newest stream gets the notifications in order, that an older one ends
// (its connection reaches EOF) in bounded time, that no stream writer is
// left behind, and that every notification queued is delivered or was
// counted as dropped. Every loop is bounded in count and time.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// takeoverServer serves s on loopback until stop (or the test's end); it
// returns the address and stop, which shuts the server down and then
// waits for the goroutines to come back to what they were before it
// started (a bounded wait): no stream, connection or timer of the
// server's may outlive it.
func takeoverServer(t *testing.T, s *Server, cfg fastserver.Config) (addr string, stop func()) {
	t.Helper()
	base := goroutines()
	srv, url := serveLoopback(t, s, cfg)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v (a stream still open?)", err)
			}
			waitFor(t, 5*time.Second, "goroutines back to "+strconv.Itoa(base), func() bool { return goroutines() <= base })
		})
	}
	t.Cleanup(stop)
	return strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path), stop
}

// waitFor polls cond until it holds, for at most d; else the test fails
// (with the goroutines' stacks, to see what is stuck).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); {
		if time.Now().After(end) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("after %v, still not: %s (%d goroutines)\n%s", d, what, runtime.NumGoroutine(), buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutines counts the goroutines (runtime.NumGoroutine) but fasthttp's
// that outlive a server by design: the date updater, started once for
// the process, and a worker pool's cleaner, which sleeps out its period
// (10 s) after the pool stops.
func goroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "fasthttp.updateServerDate") && !strings.Contains(g, "fasthttp.(*workerPool).Start.func") {
			n++
		}
	}
	return n
}

// writers counts the goroutines writing a GET stream (fastserver's
// eventFeed): one per stream open.
func writers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "eventFeed).WriteTo")
}

// writerBlocked reports whether a stream's writer waits for its socket
// to take more (a client that does not read).
func writerBlocked() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "eventFeed).WriteTo") && strings.Contains(g, "[IO wait") {
			return true
		}
	}
	return false
}

// rawDo sends one request on a connection of its own and returns the
// answer's status and body.
func rawDo(t *testing.T, addr, method, session, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s: 2025-11-25\r\n", method, Path, HeaderProtocolVersion)
	if session != "" {
		fmt.Fprintf(&b, "%s: %s\r\n", HeaderSession, session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(rb)
}

// seqURI is the URI of the n-th numbered notification, padded with
// seqPad.
func seqURI(n int) string { return "seq:" + strconv.Itoa(n) + seqPad }

// seqPad pads the numbered notifications' URIs: large ones fill a
// socket's buffers sooner. Tests do not run in parallel here.
var seqPad string

// newSeqSession initializes a session (hdr: more request headers) and
// subscribes it to seqURI(0) to seqURI(n-1) in place: subscribe would
// want resources behind them, and its bounds are not what is tested.
func newSeqSession(t *testing.T, s *Server, addr string, n int, hdr ...string) string {
	t.Helper()
	status, h, body := rawDo(t, addr, "POST", "", initialize, hdr...)
	id := h.Get(HeaderSession)
	if status != 200 || id == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	s.sessions.mu.Lock()
	ss := s.sessions.m[id]
	s.sessions.mu.Unlock()
	ss.mu.Lock()
	for i := range n {
		ss.subs[seqURI(i)] = true
	}
	ss.mu.Unlock()
	return id
}

// notifySeq sends the numbered notifications from to to-1 and returns
// those that were queued (the others were dropped, counted).
func notifySeq(s *Server, from, to int) (queued []int) {
	for i := from; i < to; i++ {
		if s.NotifyResourceUpdated(seqURI(i)) == 1 {
			queued = append(queued, i)
		}
	}
	return queued
}

// rawStream is a GET stream on a raw connection, read (when it is) by a
// goroutine of its own that records the numbered notifications.
type rawStream struct {
	c      net.Conn
	status int
	mu     sync.Mutex
	seqs   []int
	other  []string      // events that are not numbered notifications
	bodyOK bool          // the body ended with its last chunk: the stream was ended, not cut
	done   chan struct{} // closed when the connection reached EOF (or failed)
}

// dialStream opens a GET stream of session (openStream), or fails the
// test.
func dialStream(t *testing.T, addr, session string, hdr ...string) *rawStream {
	t.Helper()
	r, err := openStream(t, addr, session, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openStream opens a GET stream of session, with more request headers
// hdr. Safe on any goroutine.
func openStream(t *testing.T, addr, session string, hdr ...string) (*rawStream, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n%s: 2025-11-25\r\n%s: %s\r\n", Path, HeaderProtocolVersion, HeaderSession, session)
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	b.WriteString("\r\n")
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, b.String()); err != nil {
		return nil, err
	}
	return &rawStream{c: c, done: make(chan struct{})}, nil
}

// read reads the answer's head (start), or fails the test; it returns
// the status.
func (r *rawStream) read(t *testing.T) int {
	t.Helper()
	st, err := r.start()
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	return st
}

// start reads the answer's head, then (in a goroutine) its events until
// the body ends and the connection reaches EOF, for at most 20 s. It
// returns the status. Safe on any goroutine.
func (r *rawStream) start() (int, error) {
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(r.c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	r.status = resp.StatusCode
	go func() {
		defer close(r.done)
		defer resp.Body.Close()
		lr := bufio.NewReader(resp.Body)
		var ev []string
		for {
			line, err := lr.ReadString('\n')
			if err != nil {
				r.mu.Lock()
				r.bodyOK = err == io.EOF && line == ""
				r.mu.Unlock()
				// The body is over: then the connection must be (Connection:
				// close, or a cut).
				io.Copy(io.Discard, br)
				return
			}
			line = strings.TrimSuffix(line, "\n")
			if line != "" {
				ev = append(ev, line)
				continue
			}
			// An event is complete only with its blank line.
			for _, l := range ev {
				data, ok := strings.CutPrefix(l, "data: ")
				if !ok {
					continue
				}
				_, rest, ok := strings.Cut(data, `"uri":"seq:`)
				rest, _, _ = strings.Cut(rest, `#`)
				n, err := strconv.Atoi(strings.TrimSuffix(rest, `"}}`))
				r.mu.Lock()
				if ok && err == nil {
					r.seqs = append(r.seqs, n)
				} else {
					r.other = append(r.other, data)
				}
				r.mu.Unlock()
			}
			ev = ev[:0]
		}
	}()
	return r.status, nil
}

// got returns the numbered notifications read so far.
func (r *rawStream) got() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.seqs...)
}

// ended reports whether the connection reached EOF (or failed).
func (r *rawStream) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// waitEnded waits, for at most d, for the stream's connection to end.
func (r *rawStream) waitEnded(t *testing.T, d time.Duration, what string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(d):
		t.Fatalf("%s: the stream is still open after %v", what, d)
	}
}

// increasing reports whether seqs only increase.
func increasing(seqs []int) bool {
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			return false
		}
	}
	return true
}

// checkAccounted checks that every queued notification was received on
// exactly one stream, each stream's in order, except at most one for
// each stream whose connection was cut rather than ended (the one its
// writer was writing when it was cut).
func checkAccounted(t *testing.T, queued []int, streams ...*rawStream) {
	t.Helper()
	seen := map[int]int{}
	cut := 0
	for i, r := range streams {
		got := r.got()
		if !increasing(got) {
			t.Errorf("stream %d: out of order: %v", i, got)
		}
		for _, n := range got {
			seen[n]++
		}
		r.mu.Lock()
		if !r.bodyOK {
			cut++
		}
		r.mu.Unlock()
	}
	var lost []int
	for _, n := range queued {
		switch seen[n] {
		case 0:
			lost = append(lost, n)
		case 1:
		default:
			t.Errorf("notification %d received %d times", n, seen[n])
		}
		delete(seen, n)
	}
	if len(seen) != 0 {
		t.Errorf("received notifications that were not queued: %v", seen)
	}
	if len(lost) > cut {
		t.Errorf("lost %d queued notifications %v (%d streams cut)", len(lost), lost, cut)
	}
}

// A client whose connection is dead but open (it never reads): its
// server's writer blocks once the socket's buffers are full, and the queue
// fills. A new GET gets 200 and the queue, in order; the old writer ends
// within the grace, not after WriteTimeout (a minute here).
func TestTakeoverNeverReads(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{Queue: 16}))
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := takeoverServer(t, s, fastserver.Config{WriteTimeout: time.Minute})
	seqPad = "#" + strings.Repeat("p", 8<<10)
	t.Cleanup(func() { seqPad = "" })
	const max = 3000 // 24 MiB of notifications: far more than the buffers take
	id := newSeqSession(t, s, addr, max)
	old := dialStream(t, addr, id)
	waitFor(t, 5*time.Second, "the first stream open", func() bool { return writers() == 1 })

	// Until the writer blocks: the queue is full, and stays full.
	var queued []int
	n := 0
	for end, blocked := time.Now().Add(20*time.Second), false; !blocked; n++ {
		if n == max-100 || time.Now().After(end) {
			t.Fatalf("%d notifications sent in %v: the writer never blocked", n, 20*time.Second)
		}
		q := notifySeq(s, n, n+1)
		queued = append(queued, q...)
		if len(q) == 0 {
			// Dropped: the queue is full. The writer is blocked when it
			// waits for the socket (IO wait) with the queue still full.
			time.Sleep(20 * time.Millisecond)
			blocked = writerBlocked() && queueLen(s, id) == 16
		}
	}
	dropped := s.DroppedNotifications()
	inQueue := queued[len(queued)-16:] // the queue, full: never taken by the old writer

	start := time.Now()
	cur := dialStream(t, addr, id)
	if status := cur.read(t); status != 200 {
		t.Fatalf("GET while a stream is open: %d, want 200", status)
	}
	waitFor(t, 5*time.Second, "the old writer gone", func() bool { return writers() == 1 })
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the old writer took %v to end", d)
	}
	// The new stream's writer drains the 16 moved to its queue before 10
	// more come: the takeover waits for the old writer now (its slots),
	// so no half second of the old stream's grace lets it drain first.
	waitFor(t, 5*time.Second, "the new stream got the queued notifications", func() bool { return len(cur.got()) >= len(inQueue) })
	queued = append(queued, notifySeq(s, n, n+10)...)
	last := n + 9
	waitFor(t, 10*time.Second, "the new stream got the last notification", func() bool {
		got := cur.got()
		return len(got) > 0 && got[len(got)-1] == last
	})
	got := cur.got()
	if len(got) < len(inQueue)+10 || !increasing(got) {
		t.Errorf("new stream: %v, want the %d queued (%v) and the 10 after", got, len(inQueue), inQueue)
	}
	for _, q := range inQueue {
		if !containsInt(got, q) {
			t.Errorf("queued notification %d missing from the new stream", q)
		}
	}
	// The old connection, read now, has what the kernel took and then
	// EOF.
	if st := old.read(t); st != 200 {
		t.Errorf("old GET: %d", st)
	}
	old.waitEnded(t, 10*time.Second, "old stream")
	old.mu.Lock()
	oldCut, oldGot := !old.bodyOK, len(old.seqs)
	old.mu.Unlock()
	if !oldCut {
		t.Error("the blocked stream ended with its last chunk: it was not blocked, or not cut")
	}
	t.Logf("%d sent, %d queued; the old stream had %d when it was cut, the new %d", n+10, len(queued), oldGot, len(cur.got()))
	if s.DroppedNotifications() != dropped {
		t.Errorf("dropped %d after the takeover, %d before", s.DroppedNotifications(), dropped)
	}
	if status, _, _ := rawDo(t, addr, "DELETE", id, ""); status != 204 {
		t.Errorf("DELETE: %d", status)
	}
	cur.waitEnded(t, 5*time.Second, "stream after DELETE")
	checkAccounted(t, queued, old, cur)
	waitFor(t, 5*time.Second, "no writer", func() bool { return writers() == 0 })
	stop()
}

// queueLen returns how many notifications wait in session id's queue.
func queueLen(s *Server, id string) int {
	s.sessions.mu.Lock()
	ss := s.sessions.m[id]
	s.sessions.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.events)
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A client that half-closed its connection after its GET still reads:
// taken over, its stream ends cleanly (the last chunk, then EOF). The
// end of the stream taken over does not free the session of its new
// stream: an open stream keeps it from expiring.
func TestTakeoverHalfClosed(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{Idle: 500 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := takeoverServer(t, s, fastserver.Config{})
	id := newSeqSession(t, s, addr, 100)
	old := dialStream(t, addr, id)
	if err := old.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if st := old.read(t); st != 200 {
		t.Fatalf("GET: %d", st)
	}
	queued := notifySeq(s, 0, 5)
	waitFor(t, 5*time.Second, "the first stream's notifications", func() bool { return len(old.got()) == 5 })

	cur := dialStream(t, addr, id)
	if status := cur.read(t); status != 200 {
		t.Fatalf("second GET: %d, want 200", status)
	}
	old.waitEnded(t, 5*time.Second, "half-closed stream taken over")
	time.Sleep(time.Second) // twice Idle
	queued = append(queued, notifySeq(s, 5, 10)...)
	if len(queued) != 10 {
		t.Fatalf("queued %v: the session expired with its stream open", queued)
	}
	waitFor(t, 5*time.Second, "the new stream's notifications", func() bool { return len(cur.got()) == 5 })
	if got := cur.got(); got[0] != 5 || !increasing(got) {
		t.Errorf("new stream: %v", got)
	}
	waitFor(t, 5*time.Second, "one writer", func() bool { return writers() == 1 })
	rawDo(t, addr, "DELETE", id, "")
	cur.waitEnded(t, 5*time.Second, "stream after DELETE")
	checkAccounted(t, queued, old, cur)
	for i, r := range []*rawStream{old, cur} {
		if !r.bodyOK {
			t.Errorf("stream %d cut, want ended with its last chunk", i)
		}
	}
	stop()
}

// Many GETs race for one session: each gets 200, all streams but one end
// at once, and that one alone gets the notifications, in order.
func TestTakeoverRacingGETs(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := takeoverServer(t, s, fastserver.Config{})
	id := newSeqSession(t, s, addr, 100)
	const workers, each = 6, 4
	var (
		mu      sync.Mutex
		streams []*rawStream
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r, err := openStream(t, addr, id)
				if err != nil {
					t.Error(err)
					return
				}
				if st, err := r.start(); st != 200 {
					t.Errorf("racing GET: %d %v, want 200", st, err)
					return
				}
				mu.Lock()
				streams = append(streams, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	open := func() (n int, last *rawStream) {
		for _, r := range streams {
			if !r.ended() {
				n++
				last = r
			}
		}
		return n, last
	}
	waitFor(t, 10*time.Second, "one stream left open", func() bool { n, _ := open(); return n == 1 })
	waitFor(t, 5*time.Second, "one writer", func() bool { return writers() == 1 })
	_, owner := open()
	queued := notifySeq(s, 0, 50)
	waitFor(t, 5*time.Second, "the owner got the notifications", func() bool { return len(owner.got()) == 50 })
	if got := owner.got(); !increasing(got) {
		t.Errorf("owner's notifications out of order: %v", got)
	}
	rawDo(t, addr, "DELETE", id, "")
	owner.waitEnded(t, 5*time.Second, "stream after DELETE")
	checkAccounted(t, queued, streams...)
	waitFor(t, 5*time.Second, "no writer", func() bool { return writers() == 0 })
	stop()
}

// Takeovers while notifications are sent: every one queued reaches
// exactly one of the streams, each stream's in order, the newest last.
func TestTakeoverDuringNotify(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{Queue: 32}))
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := takeoverServer(t, s, fastserver.Config{})
	const total, takeovers, maxExtra = 3000, 8, 100
	id := newSeqSession(t, s, addr, total+maxExtra)
	first := dialStream(t, addr, id)
	if st := first.read(t); st != 200 {
		t.Fatalf("GET: %d", st)
	}
	streams := []*rawStream{first}
	var queued []int
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; i < total; i += 10 {
			queued = append(queued, notifySeq(s, i, i+10)...)
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for range takeovers {
		time.Sleep(5 * time.Millisecond)
		r := dialStream(t, addr, id)
		if st := r.read(t); st != 200 {
			t.Fatalf("GET during notifications: %d, want 200", st)
		}
		streams = append(streams, r)
	}
	select {
	case <-sent:
	case <-time.After(20 * time.Second):
		t.Fatal("notifications not sent in 20 s")
	}
	for i, r := range streams[:len(streams)-1] {
		r.waitEnded(t, 5*time.Second, "stream "+strconv.Itoa(i)+" taken over")
	}
	// One more, once every takeover is done: the sender above may finish
	// before the last one (it did under the race detector, a third of the
	// runs, and its last notification went to an older stream, rightly).
	extra := 0
	for {
		q := notifySeq(s, total+extra, total+extra+1)
		extra++
		if len(q) == 1 {
			queued = append(queued, q...)
			break
		}
		if extra == maxExtra {
			t.Fatalf("%d notifications after the takeovers all dropped", extra)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cur := streams[len(streams)-1]
	last := queued[len(queued)-1]
	waitFor(t, 10*time.Second, "the newest stream got the last notification", func() bool {
		got := cur.got()
		return len(got) > 0 && got[len(got)-1] == last
	})
	rawDo(t, addr, "DELETE", id, "")
	cur.waitEnded(t, 5*time.Second, "stream after DELETE")
	checkAccounted(t, queued, streams...)
	if d := s.DroppedNotifications(); int(d)+len(queued) != total+extra {
		t.Errorf("%d queued + %d dropped != %d sent", len(queued), d, total+extra)
	}
	waitFor(t, 5*time.Second, "no writer", func() bool { return writers() == 0 })
	stop()
}

// A takeover racing DELETE, and one racing the session's expiry: the GET
// gets a stream that then ends, or 404; either way nothing is left open.
func TestTakeoverRacingEnd(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{Idle: 30 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := takeoverServer(t, s, fastserver.Config{})
	for round := range 12 {
		id := newSeqSession(t, s, addr, 10)
		old := dialStream(t, addr, id)
		if st := old.read(t); st != 200 {
			t.Fatalf("round %d: GET: %d", round, st)
		}
		var (
			wg  sync.WaitGroup
			cur *rawStream
			st  int
			err error
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cur, err = openStream(t, addr, id); err == nil {
				st, err = cur.start()
			}
		}()
		del, _, _ := rawDo(t, addr, "DELETE", id, "")
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: GET: %v", round, err)
		}
		if del != 204 || (st != 200 && st != 404) {
			t.Fatalf("round %d: DELETE %d, GET %d %v", round, del, st, err)
		}
		old.waitEnded(t, 5*time.Second, "stream of a deleted session")
		if st == 200 {
			cur.waitEnded(t, 5*time.Second, "stream of a deleted session, taken over")
		}
		waitFor(t, 5*time.Second, "no writer", func() bool { return writers() == 0 })
	}
	// Expiry: a GET just as the session expires (Idle 30 ms, swept by
	// NotifyResourceUpdated) gets 404, or a stream that keeps the session
	// alive and gets its notifications.
	for round := range 12 {
		id := newSeqSession(t, s, addr, 10)
		time.Sleep(time.Duration(20+round*2) * time.Millisecond)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				s.NotifyResourceUpdated("nothing")
				time.Sleep(time.Millisecond)
			}
		}()
		r := dialStream(t, addr, id)
		st := r.read(t)
		wg.Wait()
		switch st {
		case 404:
		case 200:
			time.Sleep(50 * time.Millisecond) // past Idle: the open stream keeps it
			if n := s.NotifyResourceUpdated(seqURI(1)); n != 1 {
				t.Errorf("round %d: a session with its stream open expired", round)
			}
			waitFor(t, 5*time.Second, "the notification", func() bool { return len(r.got()) == 1 })
			rawDo(t, addr, "DELETE", id, "")
			r.waitEnded(t, 5*time.Second, "stream after DELETE")
		default:
			t.Fatalf("round %d: GET at expiry: %d", round, st)
		}
	}
	waitFor(t, 5*time.Second, "no writer", func() bool { return writers() == 0 })
	stop()
}

// With WithAuth a GET without the token (401) or with another client's
// (404: not its session) takes nothing over; one with the owner's token
// does.
func TestTakeoverAuth(t *testing.T) {
	s, url, as := authSessionServer(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	token := "Bearer " + as.Token(as.Claims(authResourceID, ""))
	other := as.Claims(authResourceID, "")
	other["sub"], other["client_id"] = "client-2", "client-2"
	otherToken := "Bearer " + as.Token(other)

	id := newSeqSession(t, s, addr, 10, "Authorization", token)
	owner := dialStream(t, addr, id, "Authorization", token)
	if st := owner.read(t); st != 200 {
		t.Fatalf("GET: %d", st)
	}
	for _, c := range []struct {
		hdr  []string
		want int
	}{
		{nil, 401},
		{[]string{"Authorization", "Bearer nope"}, 401},
		{[]string{"Authorization", otherToken}, 404},
	} {
		r := dialStream(t, addr, id, c.hdr...)
		if st := r.read(t); st != c.want {
			t.Errorf("GET with %q: %d, want %d", c.hdr, st, c.want)
		}
		r.c.Close()
	}
	queued := notifySeq(s, 0, 3)
	waitFor(t, 5*time.Second, "the owner's stream, untouched, got the notifications", func() bool { return len(owner.got()) == 3 })
	if owner.ended() {
		t.Error("a refused GET ended the owner's stream")
	}
	again := dialStream(t, addr, id, "Authorization", token)
	if st := again.read(t); st != 200 {
		t.Fatalf("the owner's second GET: %d, want 200", st)
	}
	owner.waitEnded(t, 5*time.Second, "the stream taken over by its owner")
	queued = append(queued, notifySeq(s, 3, 6)...)
	waitFor(t, 5*time.Second, "the new stream's notifications", func() bool { return len(again.got()) == 3 })
	rawDo(t, addr, "DELETE", id, "", "Authorization", token)
	again.waitEnded(t, 5*time.Second, "stream after DELETE")
	checkAccounted(t, queued, owner, again)
}
