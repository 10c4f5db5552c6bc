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
// has closed its side or reset the connection: a read would return at
// once with end of file or an error, or bytes wait but the peer closed
// behind them (on Linux, by poll's POLLRDHUP: a TLS client's
// close_notify, or a request pipelined behind a stream, followed by its
// close). It consumes nothing, as pendingBytes. A connection it cannot
// look into is not gone; off Linux a connection with bytes waiting is not
// gone either (its stream ends at its next write).
func peerGone(c net.Conn) bool {
	sc, isSocket := socketOf(c).(syscall.Conn)
	if !isSocket {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	cerr := rc.Control(func(fd uintptr) {
		var buf [1]byte
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			gone = true // end of file: the peer shut its side
		case err == nil:
			gone = peerClosed(fd) // bytes wait; the peer may have closed behind them
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
		default:
			gone = true // reset, or another error a read would return
		}
	})
	return cerr == nil && gone
}

// canPeek reports whether peek can look into c: a socket.
func canPeek(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}
