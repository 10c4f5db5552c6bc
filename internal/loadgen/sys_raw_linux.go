//go:build linux && !loadgen_safe

package loadgen

// NOTE: the epoll engine's system calls without the Go scheduler's
// bookkeeping (entersyscall/exitsyscall). Its sockets are non-blocking,
// so read and write never block. epoll_wait blocks as a raw call too when
// the engine may hold its P while it waits (see Config.SharedProcess):
// the runtime then sees a running goroutine rather than one in a system
// call, and sysmon does not wake every 20 µs to hand the P off and back;
// a signal (the runtime's preemption signal included) ends the wait early
// with EINTR. Otherwise only a wait that must block goes through the
// scheduler. Build with -tags loadgen_safe
// for the twin in sys_safe_linux.go that goes through golang.org/x/sys/unix.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// RawSyscalls reports whether the epoll engine makes raw system calls
// (the default build) or goes through golang.org/x/sys/unix
// (-tags loadgen_safe).
const RawSyscalls = true

func errnoErr(e unix.Errno) error {
	switch e {
	case 0:
		return nil
	case unix.EAGAIN:
		return unix.EAGAIN
	case unix.EINTR:
		return unix.EINTR
	}
	return e
}

func sysRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

func sysWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// epollWait waits for events. With block set it blocks as a raw call,
// holding its P; otherwise it polls without blocking first, as a raw
// call, and only when nothing is ready blocks through the scheduler,
// which hands the P to other goroutines meanwhile.
func epollWait(epfd int, evs []unix.EpollEvent, msec int, block bool) (int, error) {
	if block {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(msec), 0, 0)
		if e != 0 {
			return 0, errnoErr(e)
		}
		return int(n), nil
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	if n > 0 || msec == 0 {
		return int(n), nil
	}
	return unix.EpollWait(epfd, evs, msec)
}
