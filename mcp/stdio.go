package mcp

import (
	"sync"
	"sync/atomic"
)

// NOTE: a stdio stream as a 2025-xx session.
//
// Under 2025-xx the connection is the session: over stdio, what a
// client's initialize declares (the version, its capabilities) holds for
// the requests after it, logging/setLevel sets the level of the log
// messages the stream carries, and resources/subscribe asks for
// notifications/resources/updated, which NotifyResourceUpdated writes on
// the stream as lines between the answers (fastserver.Endpoint.Lines).
// Each StreamEndpoint is one stream's: its session is begun (again) by
// each initialize that passes every check (serveStreamInitialize), and
// found by the stream's later requests in Request.Memo (checkStream).

// stdioQueue is how many resource updates wait to be written to a stdio
// stream whose client reads slowly; past it they are dropped
// (DroppedNotifications), as a session's beyond SessionOptions.Queue.
const stdioQueue = 64

// stdioSubscriptions bounds the resources a stdio stream is subscribed
// to, as SessionOptions.Subscriptions bounds a session's (its default).
const stdioSubscriptions = 256

// stdioStream is the stream a StreamEndpoint serves (one per Endpoint).
type stdioStream struct {
	cur atomic.Pointer[session] // begun by the stream's initialize
}

// stdioWriter writes the resource updates of one ServeLines of a
// stdioStream (there is one, unless an Endpoint is shared, which its doc
// forbids: each ServeLines then gets updates of the one session).
type stdioWriter struct {
	st      *stdioStream
	send    func([]byte) error // fastserver.Endpoint.Lines' send
	updates chan []byte        // resource updates waiting to be written
	quit    chan struct{}      // closed when ServeLines returns
	done    chan struct{}      // closed when write has ended
}

// stdioStreams are a server's stdio streams being served, for
// NotifyResourceUpdated.
type stdioStreams struct {
	mu      sync.Mutex
	m       map[*stdioWriter]struct{}
	dropped atomic.Uint64
}

// lines is the stream's fastserver.Endpoint.Lines: each ServeLines gets
// a writer, among the server's until ServeLines returns, whose goroutine
// writes the stream's resource updates.
func (st *stdioStream) lines(s *Server) func(send func([]byte) error) func() {
	return func(send func([]byte) error) func() {
		w := &stdioWriter{st: st, send: send, updates: make(chan []byte, stdioQueue),
			quit: make(chan struct{}), done: make(chan struct{})}
		s.stdio.mu.Lock()
		if s.stdio.m == nil {
			s.stdio.m = make(map[*stdioWriter]struct{})
		}
		s.stdio.m[w] = struct{}{}
		s.stdio.mu.Unlock()
		go w.write()
		return func() {
			s.stdio.mu.Lock()
			delete(s.stdio.m, w)
			s.stdio.mu.Unlock()
			close(w.quit)
			<-w.done
		}
	}
}

// write is the writer's goroutine: it writes the updates queued for it
// until ServeLines returns or the output fails.
func (w *stdioWriter) write() {
	defer close(w.done)
	for {
		select {
		case msg := <-w.updates:
			if w.send(msg) != nil {
				return // the output failed or is closing: nothing more is written
			}
		case <-w.quit:
			return
		}
	}
}

// notify queues msg, a resource update for uri, to every stdio stream
// whose session is subscribed to uri, without waiting (a full queue
// drops it), and returns to how many it was queued.
func (ss *stdioStreams) notify(uri string, msg []byte) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for w := range ss.m {
		sess := w.st.cur.Load()
		if sess == nil {
			continue
		}
		sess.mu.Lock()
		subscribed := sess.subs[uri]
		sess.mu.Unlock()
		if !subscribed {
			continue
		}
		select {
		case w.updates <- msg:
			n++
		default:
			ss.dropped.Add(1)
		}
	}
	return n
}
