package fastserver

import (
	"net"
	"strconv"
	"sync/atomic"
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

// capListener bounds the connections open at once.
type capListener struct {
	net.Listener
	open  *atomic.Int64
	max   int64
	tls   bool      // the connections speak TLS: one past the cap is closed without a word
	conns *connList // where each accepted connection is watched for its timeouts (conntime.go); nil: not watched (net/http keeps its own)
}

// over503 is the answer past the cap.
var over503 = func() []byte {
	const body = "server busy: too many open connections"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nServer: rpcedge\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n" + body)
}()

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
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

// capConn is an accepted connection, counted until it is closed and
// watched for its timeouts (conntime.go) until then.
type capConn struct {
	net.Conn
	open     *atomic.Int64 // nil: not counted (ServeConn's)
	closed   atomic.Bool
	hijacked atomic.Bool // fasthttp handed it to an early answer
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
}

func (c *capConn) Close() error {
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

// CloseWrite half-closes the connection when the underlying one can (an
// early answer needs it: the client then sees the answer, not a reset).
func (c *capConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
