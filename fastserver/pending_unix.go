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
