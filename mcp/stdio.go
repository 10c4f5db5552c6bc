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

// stdioStream is one newline-delimited stream served by a StreamEndpoint.
type stdioStream struct {
	cur     atomic.Pointer[session] // begun by the stream's initialize
	send    func([]byte) error      // fastserver.Endpoint.Lines' send
	updates chan []byte             // resource updates waiting to be written
	quit    chan struct{}           // closed when ServeLines returns
	done    chan struct{}           // closed when the writer has ended
}

// stdioStreams are a server's stdio streams being served, for
// NotifyResourceUpdated.
type stdioStreams struct {
	mu      sync.Mutex
	m       map[*stdioStream]struct{}
	dropped atomic.Uint64
}

// lines is the stream's fastserver.Endpoint.Lines: the stream joins the
// server's streams and a writer goroutine writes its resource updates
// until ServeLines returns.
func (st *stdioStream) lines(s *Server) func(send func([]byte) error) func() {
	return func(send func([]byte) error) func() {
		st.send = send
		st.updates = make(chan []byte, stdioQueue)
		st.quit = make(chan struct{})
		st.done = make(chan struct{})
		s.stdio.mu.Lock()
		if s.stdio.m == nil {
			s.stdio.m = make(map[*stdioStream]struct{})
		}
		s.stdio.m[st] = struct{}{}
		s.stdio.mu.Unlock()
		go st.write()
		return func() {
			s.stdio.mu.Lock()
			delete(s.stdio.m, st)
			s.stdio.mu.Unlock()
			close(st.quit)
			<-st.done
		}
	}
}

// write is the stream's writer goroutine: it writes the updates queued
// for it until ServeLines returns or the output fails.
func (st *stdioStream) write() {
	defer close(st.done)
	for {
		select {
		case msg := <-st.updates:
			if st.send(msg) != nil {
				return // the output failed or is closing: nothing more is written
			}
		case <-st.quit:
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
	for st := range ss.m {
		sess := st.cur.Load()
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
		case st.updates <- msg:
			n++
		default:
			ss.dropped.Add(1)
		}
	}
	return n
}
