//go:build linux

package loadgen

// NOTE: the epoll engine, wrk's design: each loop owns a share of the
// connections and runs on its own locked OS thread; raw non-blocking
// sockets, one epoll set per loop, level-triggered. Per request it makes
// one write and (usually) one read system call: the next request is
// written as soon as the answer is checked, with no epoll_ctl unless a
// write would block. Open-loop slots are timed by a timerfd (nanosecond
// resolution); timeouts and back-offs by a scan every few milliseconds.
// A closed loop that owns its thread may poll before it sleeps
// (Config.Spin): measured on a 2-vCPU VM against rpcedge (64
// connections, 176-byte texts), a loop that slept went to sleep on 22–26 %
// of answers, wrk's (busier per request) on 0.1 %; each such answer's
// write then woke it across CPUs inside the server's write system call
// (perf: sock_def_readable's wakeup, 12 % of the server's samples against
// 4 % under wrk), ~2 µs a request in all.

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const defaultEngine = "epoll"

func init() { registerEngine("epoll", func() engine { return epollEngine{} }) }

type epollEngine struct{}

func (epollEngine) run(r *runner) error {
	n := runtime.GOMAXPROCS(0)
	if n > r.cfg.Connections {
		n = r.cfg.Connections
	}
	loops := make([]*eloop, n)
	rawBlock := !r.cfg.SharedProcess || n < runtime.GOMAXPROCS(0)
	for i := range loops {
		l, err := newEloop(r, i, n)
		if l != nil {
			l.rawBlock = rawBlock
			if rawBlock && !r.cfg.SharedProcess && r.cfg.Rate == 0 {
				l.spin = int64(r.cfg.Spin)
			}
		}
		if err != nil {
			for _, l := range loops[:i] {
				l.close()
			}
			return err
		}
		loops[i] = l
	}
	for i := 0; i < r.cfg.Connections; i++ {
		l := loops[i%n]
		l.conns = append(l.conns, &econn{fd: -1, idx: int32(len(l.conns)), x: newExchange()})
	}
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func(l *eloop) {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			l.run()
			l.close()
			l.w.st.mu.Lock()
			l.w.st.waits = l.waits
			l.w.st.mu.Unlock()
		}(l)
	}
	wg.Wait()
	return nil
}

// Connection states.
const (
	stIdle       = iota // no request; fd may be open
	stConnecting        // connect in progress, request prepared
	stWriting           // request partly written
	stReading           // request written, answer pending
	stWaiting           // request prepared, waiting for its open-loop slot
	stBackoff           // after a failed connect
	stFinal             // closed loop, the last answer in: looking for bytes after it
	stDone              // retired
)

const (
	timerTag  = -1
	scanEvery = int64(5 * time.Millisecond)
)

type econn struct {
	fd            int
	idx           int32
	state         uint8
	wantOut       bool
	everConnected bool
	wpos          int
	deadline      int64 // ns since start: timeout of the current step, or back-off end
	x             *exchange
}

type eloop struct {
	r       *runner
	w       *worker
	epfd    int
	tfd     int
	conns   []*econn
	evs     []unix.EpollEvent
	waitq   []*econn // FIFO, ordered by intended time
	armedAt int64    // intended time the timer is armed for; -1 none
	active  int
	// rawBlock: epoll_wait may block holding the P (see
	// Config.SharedProcess).
	rawBlock bool
	sa       unix.Sockaddr
	domain   int
	// spin (ns): poll this long before blocking, while idle < spin; 0:
	// never (see Config.Spin). idle is a moving average of how long the
	// loop waited for events; waits counts them (Report.Waits).
	spin, idle int64
	waits      Waits
}

func newEloop(r *runner, i, n int) (*eloop, error) {
	l := &eloop{r: r, w: r.newWorker(i, n), epfd: -1, tfd: -1, armedAt: -1, evs: make([]unix.EpollEvent, 256)}
	ip := r.addr.IP
	if ip4 := ip.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: r.addr.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.domain = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: r.addr.Port}
		copy(sa.Addr[:], ip.To16())
		l.sa, l.domain = sa, unix.AF_INET6
	}
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, errors.New("loadgen: epoll_create1: " + err.Error())
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		l.close()
		return nil, errors.New("loadgen: timerfd_create: " + err.Error())
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: timerTag}
	if err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.tfd, &ev); err != nil {
		l.close()
		return nil, errors.New("loadgen: epoll_ctl: " + err.Error())
	}
	return l, nil
}

func (l *eloop) close() {
	for _, c := range l.conns {
		if c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	if l.tfd >= 0 {
		unix.Close(l.tfd)
		l.tfd = -1
	}
	if l.epfd >= 0 {
		unix.Close(l.epfd)
		l.epfd = -1
	}
}

func (l *eloop) run() {
	r := l.r
	l.active = len(l.conns)
	for _, c := range l.conns {
		l.next(c)
	}
	lastScan := r.now()
	for l.active > 0 {
		if r.aborted.Load() {
			return
		}
		// Slots are timed by the timerfd; the timeout only paces the scan
		// for timeouts and back-offs.
		wait := int(scanEvery / int64(time.Millisecond))
		n, err := l.wait(wait)
		if err != nil && err != unix.EINTR {
			// Not expected with a valid epoll fd; end the loop rather
			// than spin.
			return
		}
		for _, ev := range l.evs[:max(n, 0)] {
			if ev.Fd == timerTag {
				var buf [8]byte
				_, _ = unix.Read(l.tfd, buf[:])
				l.armedAt = -1
				l.fireWaiting()
				continue
			}
			l.handle(l.conns[ev.Fd], ev.Events)
		}
		if now := r.now(); now-lastScan >= scanEvery || n <= 0 {
			lastScan = now
			l.scan(now)
		}
	}
}

// wait waits up to msec milliseconds for events. With spinning on, and
// the loop's recent waits shorter than the spin, it first polls without
// blocking for up to the spin: the answer usually comes within it, and the
// server then delivers it to a thread that runs instead of waking one.
func (l *eloop) wait(msec int) (int, error) {
	if l.spin == 0 {
		return epollWait(l.epfd, l.evs, msec, l.rawBlock)
	}
	start := l.r.now()
	if l.idle < l.spin {
		l.waits.Spins++
		for {
			n, err := epollWait(l.epfd, l.evs, 0, l.rawBlock)
			now := l.r.now()
			if n != 0 || err != nil {
				l.waits.Caught++
				l.idle += (now - start - l.idle) / 8
				return n, err
			}
			if now-start >= l.spin {
				break
			}
		}
	}
	l.waits.Blocked++
	n, err := epollWait(l.epfd, l.evs, msec, l.rawBlock)
	l.idle += (l.r.now() - start - l.idle) / 8
	return n, err
}

// next gives c its next request, or retires it when the run is over.
func (l *eloop) next(c *econn) {
	now := l.r.now()
	intended, ok := l.r.claim(now)
	if !ok {
		if c.fd >= 0 && !l.r.open && c.x.haveLast && !l.r.aborted.Load() {
			c.state = stFinal
			c.deadline = l.r.finalLookUntil(now)
			return
		}
		l.retire(c)
		return
	}
	l.w.prepare(c.x, intended)
	if intended > now {
		c.state = stWaiting
		l.waitq = append(l.waitq, c)
		l.armTimer(now)
		return
	}
	l.send(c)
}

func (l *eloop) retire(c *econn) {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.state = stDone
	l.active--
}

// send writes c's prepared request, connecting first if need be.
func (l *eloop) send(c *econn) {
	if c.fd < 0 {
		l.connect(c)
		return
	}
	now := l.r.now()
	l.w.sent(c.x, now)
	c.wpos = 0
	c.state = stWriting
	c.deadline = l.r.stepDeadline(now)
	l.write(c)
}

func (l *eloop) connect(c *econn) {
	now := l.r.now()
	c.x.sentAt = now // a failure waited from here
	fd, err := unix.Socket(l.domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		l.connectFailed(c, err)
		return
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, l.sa)
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		l.connectFailed(c, err)
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: c.idx}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		l.connectFailed(c, err)
		return
	}
	c.fd = fd
	c.x.newConn()
	c.wantOut = true
	if c.everConnected {
		l.w.reconnected()
	}
	c.everConnected = true
	c.state = stConnecting
	c.deadline = l.r.stepDeadline(now)
}

func (l *eloop) connectFailed(c *econn, err error) {
	l.w.failed(c.x, err, false)
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.state = stBackoff
	c.deadline = l.r.now() + int64(connBackoff)
}

func (l *eloop) setOut(c *econn, on bool) {
	if c.wantOut == on {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.idx}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev)
	c.wantOut = on
}

func (l *eloop) write(c *econn) {
	wire := c.x.wire
	for c.wpos < len(wire) {
		n, err := sysWrite(c.fd, wire[c.wpos:])
		if err == unix.EAGAIN {
			l.setOut(c, true)
			return
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.fail(c, err)
			return
		}
		c.wpos += n
	}
	l.setOut(c, false)
	c.state = stReading
}

func (l *eloop) handle(c *econn, events uint32) {
	switch c.state {
	case stConnecting:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		if soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || soerr != 0 {
			if err == nil {
				err = unix.Errno(soerr)
			}
			l.connectFailed(c, err)
			return
		}
		l.setOut(c, false)
		l.send(c)
	case stWriting:
		if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			l.write(c)
		}
		if c.state == stWriting && events&unix.EPOLLIN != 0 {
			// An answer before the whole request is out (an early
			// refusal): read it.
			l.read(c)
		}
	case stReading:
		l.read(c)
	default:
		// An idle connection became readable (an open loop's, waiting
		// for its slot): the server closed it, or sent bytes nobody
		// asked for, which are wrong after the answer before them.
		// Either way it is no longer usable.
		if c.fd < 0 {
			return
		}
		buf := c.x.rbuf[:cap(c.x.rbuf)]
		n, err := sysRead(c.fd, buf)
		if (err == unix.EAGAIN || err == unix.EINTR) && events&(unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			return // nothing after all
		}
		if err == nil && n > 0 {
			l.w.unasked(c.x, buf[:n])
		}
		unix.Close(c.fd)
		c.fd = -1
		if c.state == stFinal {
			l.retire(c)
		}
	}
}

func (l *eloop) read(c *econn) {
	x := c.x
	for {
		sp, err := x.readSpace()
		if err != nil {
			l.fail(c, err)
			return
		}
		n, err := sysRead(c.fd, sp)
		if err == unix.EAGAIN {
			return
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.fail(c, err)
			return
		}
		x.rbuf = x.rbuf[:len(x.rbuf)+n]
		x.read(l.r.now)
		eof := n == 0
		done, perr := x.resp.parse(x.rbuf, eof)
		if perr != nil {
			l.fail(c, perr)
			return
		}
		if done {
			l.w.answered(x, l.r.now())
			if x.closesAfter() || x.resp.end != len(x.rbuf) {
				unix.Close(c.fd)
				c.fd = -1
			}
			l.next(c)
			return
		}
		if eof {
			l.fail(c, errEOF)
			return
		}
		if n < len(sp) {
			// The socket is drained; epoll says when more comes.
			return
		}
	}
}

// fail records a transport failure of c's request and moves on.
func (l *eloop) fail(c *econn, err error) {
	l.w.failed(c.x, err, true)
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.state = stIdle
	l.next(c)
}

// fireWaiting sends every waiting request whose slot has come and re-arms
// the timer for the next one.
func (l *eloop) fireWaiting() {
	now := l.r.now()
	k := 0
	for k < len(l.waitq) && l.waitq[k].x.intended <= now {
		c := l.waitq[k]
		k++
		if c.state == stWaiting {
			l.send(c)
		}
	}
	if k > 0 {
		m := copy(l.waitq, l.waitq[k:])
		clear(l.waitq[m:])
		l.waitq = l.waitq[:m]
	}
	l.armTimer(l.r.now())
}

func (l *eloop) armTimer(now int64) {
	if len(l.waitq) == 0 {
		return
	}
	at := l.waitq[0].x.intended
	if at == l.armedAt {
		return
	}
	d := at - now
	if d < 1000 {
		d = 1000
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
	if err := unix.TimerfdSettime(l.tfd, 0, &spec, nil); err == nil {
		l.armedAt = at
	}
}

// scan handles timeouts, back-offs, and slots the timer has not fired for.
func (l *eloop) scan(now int64) {
	for _, c := range l.conns {
		switch c.state {
		case stConnecting:
			if now > c.deadline {
				l.connectFailed(c, l.r.timeoutErr(now))
			}
		case stWriting, stReading:
			if now > c.deadline {
				l.fail(c, l.r.timeoutErr(now))
			}
		case stFinal:
			if now >= c.deadline {
				l.retire(c)
			}
		case stBackoff:
			if now >= c.deadline {
				c.state = stIdle
				l.next(c)
			}
		}
	}
	if len(l.waitq) > 0 && l.waitq[0].x.intended <= now {
		l.fireWaiting()
	}
}
