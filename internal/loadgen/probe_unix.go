//go:build unix

package loadgen

import (
	"net"
	"syscall"
)

// idleProbe reads, without blocking, what waits on a connection that sat
// idle (the netconn engine's, in an open loop, before the next request):
// bytes the server sent with no request in flight, or its close. It is
// owned by one goroutine; its read method is bound once, so that a probe
// allocates nothing.
type idleProbe struct {
	rc  syscall.RawConn
	buf []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

func newIdleProbe() *idleProbe {
	p := &idleProbe{}
	p.fn = p.read
	return p
}

// attach makes c the connection to probe.
func (p *idleProbe) attach(c net.Conn) {
	p.rc = nil
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			p.rc = rc
		}
	}
}

// read is called with the socket, which the runtime keeps non-blocking:
// it reads what is there and never waits.
func (p *idleProbe) read(fd uintptr) bool {
	p.n, p.err = syscall.Read(int(fd), p.buf)
	return true
}

// check reads into buf what waits on the connection: n bytes, or eof
// when the server closed it; neither when nothing waits (or the read
// fails, which the request's own write or read will meet).
func (p *idleProbe) check(buf []byte) (n int, eof bool) {
	if p.rc == nil {
		return 0, false
	}
	p.buf = buf
	err := p.rc.Read(p.fn)
	p.buf = nil
	if err != nil || p.err != nil {
		return 0, false
	}
	return p.n, p.n == 0
}
