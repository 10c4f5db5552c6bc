package fastserver

import (
	"net"
	"sync"
	"time"
)

// goneEvery is how often the server looks whether the clients of its
// open streams — streamed answers and ServeEvents streams — closed their
// connections (peerGone), so that a client gone between writes is noticed
// within that time rather than at the next write.
const goneEvery = 2 * time.Second

// peerLeaver is what a watched stream does when its client is seen gone.
// It is called once, under the watch's mutex, with the stream already out
// of the watch; it must not block.
type peerLeaver interface{ peerLeft() }

// peerNode is a stream's place in its server's peerWatch, kept in the
// stream so that watching one allocates nothing. Its fields are under the
// watch's mutex.
type peerNode struct {
	conn       net.Conn // the socket looked at; nil when not watched
	prev, next *peerNode
	gen        uint64 // counts the node's additions: a look's result is for one of them
	who        peerLeaver
}

// peerWatch ends the streams of a server whose clients closed their
// connections (peerGone): one goroutine looks at every watched stream's
// connection every goneEvery, and tells a stream whose client is gone
// (peerLeaver) — a streamed answer is closed, its Sends fail and its
// handler's context is cancelled with ErrStreamClosed, as when a write
// fails (MCP 2026-07-28 takes a closed response stream for the request's
// cancellation); a ServeEvents stream ends and gives back its slots.
// Without it a client that left a quiet stream would be noticed only at
// the next write: a handler's deadline, a 15 s keep-alive.
//
// The goroutine runs while a stream is watched, and for at most goneEvery
// after the last; once the server shuts down it goes on watching through
// the grace period (when freeing a departed client's stream matters most)
// and stops as soon as the last stream is out. It peeks at the
// connections with the mutex released, so that streams start and end
// while it looks (a peek is a system call: some 10 ms for 10,000
// streams), and acts only on the additions it looked at.
type peerWatch struct {
	mu       sync.Mutex
	head     *peerNode
	running  bool
	draining bool          // the server is shutting down
	wake     chan struct{} // to the goroutine: the last stream is out, draining

	// The goroutine's own: one look's connections, and those seen gone.
	look []peerLook
	gone []peerLook
	// gonePeer is peerGone; tests replace it before the first add.
	gonePeer func(net.Conn) bool
}

// peerLook is one watched stream as a look found it.
type peerLook struct {
	n    *peerNode
	gen  uint64
	conn net.Conn
}

// watchedSocket returns the socket under conn (socketOf) through which a
// stream written on conn is watched, or nil when there is none to peek
// at (net/http's bridge, whose request context tells of a departed
// client, or an in-memory connection). It is taken on the connection's
// goroutine, when the stream starts: a look peeks with the watch's mutex
// released, and by then conn's wrapper may be back in its pool
// (ServeConn's capConn) while the socket is never reused (found by
// review on 2026-12-07: a look read the wrapper as it was recycled).
func watchedSocket(conn net.Conn) net.Conn {
	if conn == nil {
		return nil
	}
	if sock := socketOf(conn); canPeek(sock) {
		return sock
	}
	return nil
}

// add watches n, a stream written on socket conn (watchedSocket), for
// who; stop is closed when the server shuts down.
func (w *peerWatch) add(n *peerNode, conn net.Conn, who peerLeaver, stop <-chan struct{}) {
	w.mu.Lock()
	n.gen++
	n.conn, n.who, n.prev, n.next = conn, who, nil, w.head
	if w.head != nil {
		w.head.prev = n
	}
	w.head = n
	if !w.running {
		w.running, w.draining = true, false
		if w.wake == nil {
			w.wake = make(chan struct{}, 1)
		}
		if w.gonePeer == nil {
			w.gonePeer = peerGone
		}
		go w.run(stop)
	}
	w.mu.Unlock()
}

// remove stops watching n. Once it returns, n's peerLeft will not be
// called for its last addition.
func (w *peerWatch) remove(n *peerNode) {
	w.mu.Lock()
	w.unlink(n)
	w.mu.Unlock()
}

// unlink takes n out of the list, if it is in; under w.mu.
func (w *peerWatch) unlink(n *peerNode) {
	if n.conn == nil {
		return // not watched, or already taken out by a look
	}
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		w.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	}
	n.conn, n.who, n.prev, n.next = nil, nil, nil, nil
	if w.head == nil && w.draining {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// run looks at every watched stream's connection every goneEvery until
// none is watched at a look, or, once stop is closed, none is left.
func (w *peerWatch) run(stop <-chan struct{}) {
	t := time.NewTicker(goneEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			stop = nil // closed: selected once
			w.mu.Lock()
			w.draining = true
			w.mu.Unlock()
		case <-w.wake:
		case <-t.C:
		}
		w.mu.Lock()
		if w.head == nil {
			w.running = false
			select {
			case <-w.wake: // a wake for this goroutine, not the next one
			default:
			}
			w.mu.Unlock()
			return
		}
		look := w.look[:0]
		for n := w.head; n != nil; n = n.next {
			look = append(look, peerLook{n, n.gen, n.conn})
		}
		gonePeer := w.gonePeer
		w.mu.Unlock()

		gone := w.gone[:0]
		for _, l := range look {
			if gonePeer(l.conn) {
				gone = append(gone, l)
			}
		}
		if len(gone) > 0 {
			w.mu.Lock()
			for _, l := range gone {
				// Still the addition looked at: not removed since (and
				// perhaps added again for another request).
				if l.n.gen == l.gen && l.n.conn == l.conn {
					who := l.n.who
					w.unlink(l.n)
					who.peerLeft() // under w.mu: its stream cannot be released meanwhile
				}
			}
			w.mu.Unlock()
		}
		// Drop the references until the next look.
		clear(look)
		clear(gone)
		w.look, w.gone = look[:0], gone[:0]
	}
}
