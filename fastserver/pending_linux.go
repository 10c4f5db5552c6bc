package fastserver

import "golang.org/x/sys/unix"

// peerClosed reports whether the peer of socket fd has closed its side or
// reset the connection, whatever bytes wait unread: poll's POLLRDHUP (the
// peer shut down writing), POLLHUP or POLLERR, looked at without waiting.
// (The socket's TCP state, TCP_INFO, tells the same for TCP but not for
// Multipath TCP, which Go's listeners accept on Linux: it describes the
// first subflow, still established after the client's close — found by
// review on 2026-12-07.)
func peerClosed(fd uintptr) bool {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds[:], 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
}
