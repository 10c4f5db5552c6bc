package fastserver

import "golang.org/x/sys/unix"

// The TCP states (include/net/tcp_states.h) in which the peer has sent
// its FIN or a reset while this side is still open.
const (
	tcpClose     = 7
	tcpCloseWait = 8
	tcpLastAck   = 9
	tcpClosing   = 11
)

// peerClosed reports whether the peer of socket fd has closed its side or
// reset the connection, whatever bytes wait unread: the first byte of
// TCP_INFO is the connection's state.
func peerClosed(fd uintptr) bool {
	st, err := unix.GetsockoptByte(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return false
	}
	switch st {
	case tcpCloseWait, tcpClose, tcpLastAck, tcpClosing:
		return true
	}
	return false
}
