//go:build unix

package fastserver

import (
	"net"
	"syscall"
)

// pendingBytes reports whether bytes have arrived on c that nobody has
// read yet: a request the client sent whole while the goroutine serving
// the connection has not run since. It peeks without waiting and without
// the connection's read lock (RawConn.Control, not Read: the serving
// goroutine may be parked in a Read, which holds that lock). A connection
// it cannot look into has none.
func pendingBytes(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	n := 0
	rc.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}

// peerGone reports whether the peer of c (a connection ctx.Conn returns:
// the socket under the server's TLS and counting layers is looked into)
// has closed its side or reset the connection, with no byte waiting: a
// read would return at once with end of file or an error. It peeks
// without waiting and consumes nothing, as pendingBytes does. A
// connection it cannot look into is not gone; a TLS client that sent a
// close_notify before closing has a byte waiting and is not seen gone
// either (its stream ends at its next write).
func peerGone(c net.Conn) bool {
	sc, ok := socketOf(c).(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	gone := false
	rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			gone = n == 0 // end of file: the peer shut its side
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		default:
			gone = true // reset, or another error a read would return
		}
	})
	return gone
}
