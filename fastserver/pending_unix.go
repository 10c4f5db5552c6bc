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
// nothing waits.
func peek(c net.Conn) (n int, ok bool, err error) {
	sc, isSocket := c.(syscall.Conn)
	if !isSocket {
		return 0, false, nil
	}
	rc, rerr := sc.SyscallConn()
	if rerr != nil {
		return 0, false, nil
	}
	var buf [1]byte
	cerr := rc.Control(func(fd uintptr) {
		n, _, err = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n, cerr == nil, err
}

// pendingBytes reports whether bytes have arrived on c that nobody has
// read yet: a request the client sent whole while the goroutine serving
// the connection has not run since. A connection it cannot look into has
// none.
func pendingBytes(c net.Conn) bool {
	n, ok, _ := peek(c)
	return ok && n > 0
}

// peerGone reports whether the peer of c (a connection ctx.Conn returns:
// the socket under the server's TLS and counting layers is looked into)
// has closed its side or reset the connection, with no byte waiting: a
// read would return at once with end of file or an error. It consumes
// nothing, as pendingBytes. A connection it cannot look into is not gone;
// a TLS client that sent a close_notify before closing has a byte waiting
// and is not seen gone either (its stream ends at its next write).
func peerGone(c net.Conn) bool {
	n, ok, err := peek(socketOf(c))
	switch {
	case !ok:
		return false
	case err == nil:
		return n == 0 // end of file: the peer shut its side
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
