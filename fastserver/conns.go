package fastserver

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// NOTE: the connection cap counts every open connection.
//
// fasthttp's Concurrency counts the connections its workers serve. A
// connection taken for an early answer (rows 1 to 7 with a body still
// arriving) leaves the workers for a goroutine of its own, which writes
// the answer and then drains the client's remaining bytes for up to
// DrainTimeout: an attacker that provokes early answers on many
// connections would hold them outside the cap. So Serve wraps the
// listener: every accepted connection counts until it is closed, however
// it is served, and one accepted past MaxConns gets a plain 503 and is
// closed at once, as fasthttp answers past its own limit.
//
// Unless a connection sits idle: then the one idle longest is
// closed to make room (reclaimIdle), as a server may close an idle
// persistent connection at any time (RFC 9112 §9.6) and as nginx reuses
// its keep-alive connections when it runs out. Without it, clients that
// each keep a connection open and send one request a minute (the idle
// timeout is a minute) hold every slot, and a new client is refused
// while the server does nothing. A connection is reclaimed only idle,
// between requests (connIdle: its answer written, no byte of the next
// one read) for reclaimAfter, or before its first (accepted, no byte of a
// request yet: a client that connects and says nothing holds a slot for
// ReadTimeout) for newConnGrace; never while it reads a request, is
// handled or writes, nor with a request waiting unread in its socket
// (pendingBytes: its goroutine has not run since it came); at most
// maxReclaiming reclaimed connections are still closing at once, and
// fasthttp's own limit leaves room for them.

// capListener bounds the connections open at once.
type capListener struct {
	net.Listener
	open  *atomic.Int64
	max   int64
	tls   bool      // the connections speak TLS: one past the cap is closed without a word
	conns *connList // where each accepted connection is watched for its timeouts (conntime.go); nil: not watched (net/http keeps its own)

	closeOnce sync.Once
	closeErr  error
}

// Close closes the listener once: Shutdown's HTTP server and Serve's own
// close on Shutdown (closeOnShutdown) may both close it, and the second
// must not report the first's "use of closed network connection".
func (l *capListener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.Listener.Close() })
	return l.closeErr
}

// over503 is the answer past the cap.
var over503 = func() []byte {
	const body = "server busy: too many open connections"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nServer: " + serverName + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body)
}()

func (l *capListener) Accept() (net.Conn, error) {
	var pause time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !acceptRetry(err) {
				return nil, err
			}
			// Out of file descriptors or socket memory: fasthttp takes
			// any error but a timeout as the listener's end and stops
			// serving for good, so a client that opens connections until
			// the process runs out of descriptors (fewer than MaxConns)
			// would stop the server. Wait for connections to close and
			// try again, as net/http does; a closed listener still ends
			// the loop.
			pause = min(max(2*pause, 5*time.Millisecond), 500*time.Millisecond)
			time.Sleep(pause)
			continue
		}
		pause = 0
		if n := l.open.Add(1); n > l.max && !l.conns.reclaimIdle(n, l.max) {
			l.open.Add(-1)
			if !l.tls {
				c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				c.Write(over503)
			}
			c.Close()
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetKeepAlive(true)
		}
		cc := &capConn{Conn: c, open: l.open, list: l.conns}
		if l.conns != nil {
			l.conns.add(cc)
		}
		return cc, nil
	}
}

// acceptRetry reports whether an Accept error passes once connections
// close: descriptors or kernel memory run out (EMFILE, ENFILE, ENOBUFS,
// ENOMEM), or a timeout.
func acceptRetry(err error) bool {
	if errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) {
		return true
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// socketOf returns the connection under c's TLS layer and the server's
// counting wrapper (capConn): the socket, for peeking into it.
func socketOf(c net.Conn) net.Conn {
	for {
		switch t := c.(type) {
		case *tls.Conn:
			c = t.NetConn()
		case *capConn:
			c = t.Conn
		default:
			return c
		}
	}
}

// capConn is an accepted connection, counted until it is closed and
// watched for its timeouts (conntime.go) until then.
type capConn struct {
	net.Conn
	open   *atomic.Int64 // nil: not counted (ServeConn's)
	closed atomic.Bool
	// served says a byte of a request has arrived (fasthttp's
	// StateActive): until then, once Shutdown has begun, the connection
	// is closed newConnGrace after its acceptance (conntime.go).
	served atomic.Bool
	// reclaimed says the connection was closed idle to admit another
	// past MaxConns (reclaimIdle); under list's mutex.
	reclaimed bool
	hijacked  atomic.Bool // fasthttp handed it to an early answer
	// cutReading is set when the watchdog cut the connection in its
	// reading phase, until it goes idle (conntime.go).
	cutReading atomic.Bool

	phase atomic.Uint64 // phase | coarse start << connPhaseBits
	list  *connList
	// under list's mutex: the links, and the phase word the watchdog saw
	// last and when (conntime.go)
	prev, next *capConn
	seenWord   uint64
	seenAt     int64

	// drainFor (a time.Duration) and drainBytes, when drainFor > 0, make
	// Close half-close the connection and drain what the client still
	// sends first (drainAtClose). drainBytes is written before drainFor
	// is stored, and read after it is swapped: Close may run on another
	// goroutine (Shutdown closing idle connections).
	drainFor   atomic.Int64
	drainBytes int64

	// The answer's first write, held to go out with the next (holdNext):
	// touched only by the goroutine serving the connection.
	hold  holdState
	held  *[]byte // the held bytes, a writeBuffer-sized buffer from heldBufs
	write net.Buffers
	vec   [2][]byte
}

// NOTE: one write per answer.
//
// fasthttp (v1.79) sends an answer larger than its write buffer with one
// writev only when it serves a bare *net.TCPConn or *net.UnixConn
// (http.go, vectorWriter); behind a wrapper such as capConn its buffered
// writer makes two writes: the buffer, full, then the rest. On a TCP
// connection that is two segments, two wake-ups of the client, and the
// kernel's work for each: measured on the floor's handler with and
// without a wrapper that changes nothing (bench/servers floor-wrap), 16
// KiB answers cost 18.9 against 23.0 µs of server CPU a request. So
// serveTimed arms a connection whose answer will not fit the buffer
// (holdNext): capConn copies the first write (the full buffer, exactly
// writeBuffer bytes; any other write disarms it) aside and sends it with
// the next in one writev. The next write always comes: an answer of at
// least the buffer's size leaves bytes after the first write, and
// fasthttp's writer sends them at once or keeps them until its next
// Flush, which sends the held bytes with them; the held bytes never wait
// longer than fasthttp's own buffer would have. While bytes are held (a
// pipelined answer's rest waits in fasthttp's buffer) the next answer
// does not arm the connection, and an answer fasthttp replaces (a
// handler's timeout answer) or leaves unsent (hijacked) never arms it.
// Only plain TCP and Unix connections are armed (their writev is one
// system call); over TLS or ServeConn's other connections the answer is
// written as before.

// writeBuffer is fasthttp's write buffer size (Server.WriteBufferSize).
const writeBuffer = 16 << 10

// holdState is where a connection is in holding an answer's first write.
type holdState uint8

const (
	holdNone  holdState = iota
	holdArmed           // the next write is held
	holdFull            // a write is held: the next sends both
)

// heldBufs are the buffers held first writes are copied into.
var heldBufs = sync.Pool{New: func() any { b := make([]byte, writeBuffer); return &b }}

// holdNext arms c: its next write is an answer's first, of at least the
// write buffer (see the NOTE above).
func (c *capConn) holdNext() {
	if c.hold != holdNone {
		// A pipelined answer's first write is still held, waiting for
		// the flush that sends the rest of it: that flush sends it, and
		// this answer is written as it comes.
		return
	}
	switch c.Conn.(type) {
	case *net.TCPConn, *net.UnixConn:
		c.hold = holdArmed
	}
}

func (c *capConn) Write(p []byte) (int, error) {
	switch c.hold {
	case holdArmed:
		if len(p) != writeBuffer {
			// Not the full buffer a large answer's first flush always
			// is: some other answer (fasthttp's timeout answer, say).
			c.hold = holdNone
			return c.Conn.Write(p)
		}
		c.held = heldBufs.Get().(*[]byte)
		*c.held = append((*c.held)[:0], p...)
		c.hold = holdFull
		return len(p), nil
	case holdFull:
		held := *c.held
		c.vec[0], c.vec[1] = held, p
		c.write = c.vec[:]
		n, err := c.write.WriteTo(c.Conn)
		c.write, c.vec[0], c.vec[1] = nil, nil, nil
		c.dropHeld()
		if n < int64(len(held)) {
			return 0, err
		}
		return int(n) - len(held), err
	}
	return c.Conn.Write(p)
}

// dropHeld gives back the held write's buffer and disarms c.
func (c *capConn) dropHeld() {
	if c.held != nil {
		heldBufs.Put(c.held)
		c.held = nil
	}
	c.hold = holdNone
}

func (c *capConn) Close() error {
	if c.held != nil {
		// Closed between an answer's two writes (a write failed): what
		// fasthttp's buffer keeps of it is lost too.
		c.dropHeld()
	}
	if c.drainFor.Load() > 0 {
		// An answer fasthttp wrote before closing, with the request
		// maybe still arriving: closing on unread bytes would send a
		// reset, which can overtake the answer. Half-close, drain for a
		// bounded time and size, as an early answer does (closeAfter).
		d := time.Duration(c.drainFor.Swap(0))
		c.setPhase(connFree)
		drain(c.Conn, c.Conn, d, c.drainBytes)
	}
	if c.closed.CompareAndSwap(false, true) {
		if c.open != nil {
			c.open.Add(-1)
		}
		if c.list != nil {
			c.list.remove(c)
		}
	}
	return c.Conn.Close()
}

// drain half-closes raw when it can (c may be a TLS connection over it)
// and reads what the client still sends on c, for at most d and n bytes,
// so that a close after an answer is a clean one, not a reset.
func drain(c, raw net.Conn, d time.Duration, n int64) {
	if cw, ok := raw.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(d))
	io.CopyN(io.Discard, c, n)
}

// CloseWrite half-closes the connection when the underlying one can (an
// early answer needs it: the client then sees the answer, not a reset).
func (c *capConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
