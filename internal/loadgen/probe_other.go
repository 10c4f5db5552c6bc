//go:build !unix

package loadgen

import "net"

// idleProbe would read what waits on an idle connection; without a
// non-blocking read on the socket (see probe_unix.go) it finds nothing,
// and bytes a server sends between answers are read as the next answer.
type idleProbe struct{}

func newIdleProbe() *idleProbe                { return &idleProbe{} }
func (p *idleProbe) attach(net.Conn)          {}
func (p *idleProbe) check([]byte) (int, bool) { return 0, false }
