//go:build linux && loadgen_safe

package loadgen

import "golang.org/x/sys/unix"

// RawSyscalls reports whether the epoll engine makes raw system calls
// (the default build) or goes through golang.org/x/sys/unix
// (-tags loadgen_safe, this build).
const RawSyscalls = false

func sysRead(fd int, p []byte) (int, error)  { return unix.Read(fd, p) }
func sysWrite(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

func epollWait(epfd int, evs []unix.EpollEvent, msec int, _ bool) (int, error) {
	return unix.EpollWait(epfd, evs, msec)
}
