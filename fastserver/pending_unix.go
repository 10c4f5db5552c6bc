//go:build unix

package fastserver

import (
	"net"
	"syscall"
)

// peek looks at the socket under c for a byte, without waiting, without
// consuming it and without the connection's read lock (RawConn.Control,
// not Read: the goroutine serving the connection may be parked in a Read,
// which holds that lock): ok is false for a connection it cannot look
// into; n is 1 when a byte waits, 0 at end of file; err is EAGAIN when
// nothing waits. When a byte waits and behind is set, closed says whether
// the peer closed or reset the connection behind it (peerClosed).
func peek(c net.Conn, behind bool) (n int, ok bool, err error, closed bool) {
	sc, isSocket := c.(syscall.Conn)
	if !isSocket {
		return 0, false, nil, false
	}
	rc, rerr := sc.SyscallConn()
	if rerr != nil {
		return 0, false, nil, false
	}
	cerr := rc.Control(func(fd uintptr) {
		var buf [1]byte
		n, _, err = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if behind && err == nil && n > 0 {
			closed = peerClosed(fd)
		}
	})
	return n, cerr == nil, err, closed
}

// pendingBytes reports whether bytes have arrived on c that nobody has
// read yet: a request the client sent whole while the goroutine serving
// the connection has not run since. A connection it cannot look into has
// none.
func pendingBytes(c net.Conn) bool {
	n, ok, _, _ := peek(c, false)
	return ok && n > 0
}

// peerGone reports whether the peer of c (a connection ctx.Conn returns:
// the socket under the server's TLS and counting layers is looked into)
// has closed its side or reset the connection: a read would return at
// once with end of file or an error, or bytes wait but the peer closed
// behind them (on Linux, by poll's POLLRDHUP: a TLS client's
// close_notify, or a request pipelined behind a stream, followed by its
// close). It consumes nothing, as pendingBytes. A connection it cannot
// look into is not gone; off Linux a connection with bytes waiting is not
// gone either (its stream ends at its next write).
func peerGone(c net.Conn) bool {
	n, ok, err, closed := peek(socketOf(c), true)
	switch {
	case !ok:
		return false
	case err == nil:
		return n == 0 || closed // end of file, or a close behind the bytes
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		return false
	}
	return true // reset, or another error a read would return
}

// canPeek reports whether peek can look into c: a socket.
func canPeek(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}
