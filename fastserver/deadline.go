package fastserver

import (
	"context"
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// NOTE: handler deadlines.
//
// A timer per request costs more than the rest of a small request (Reset
// and Stop take the runtime's timer locks). Instead, every running handler
// (and every body being read, for Shutdown) is linked into the server's
// list with its deadline, and one watchdog goroutine ticks (every
// HandlerTimeout/20, at least 5 ms, at most 100 ms) and cancels the
// contexts whose deadline has passed, and arming one costs a lock and a
// few stores. Not even a clock read: a handler's deadline is left open
// when it starts, and the first tick that finds it open fixes it, under
// the context's lock (which start also takes) and from the clock read
// inside that lock, to that time plus HandlerTimeout; Deadline, asked
// first, fixes it the same way. Either reading comes after the handler's
// start, so the deadline is never early, and late by at most the tick it
// waited for; the tick after the deadline ends the context. A handler is
// therefore stopped no sooner than HandlerTimeout after it started and
// within two ticks after that (when the watchdog gets a CPU: a starved
// watchdog makes it later, never earlier). A handler that returns before
// any tick found it ran for less than a tick, so its open deadline has
// not passed (stop). That holds when HandlerTimeout is at least two
// ticks, which it is unless it is under 10 ms (ticks are 5 ms at the
// least); a shorter one is armed with a clock read instead (watchdog.exact).

// deadlineCtx is the context a handler runs under: a reusable
// context.Context, so that giving handlers a deadline allocates nothing
// per request. Its Done channel is closed when the deadline passes or the
// server's grace period ends; a new one is made for the next request only
// then.
type deadlineCtx struct {
	mu       sync.Mutex
	deadline atomic.Int64 // monoNow nanoseconds, or deadlineOpen; the watchdog reads it unlocked
	timeout  int64        // HandlerTimeout in nanoseconds, for an open deadline; set once
	done     chan struct{}
	err      error
	active   bool

	// conn is the request's connection while the context is linked, so
	// that Shutdown can unblock a stalled upload and the watchdog can cut
	// off one slower than the minimum data rate; nil otherwise. It is
	// written only while the context is not linked.
	conn net.Conn
	// bodyStart is when the request began (monoNow nanoseconds) while its
	// body is read, else 0; bodyBytes the wire bytes read so far; slow is
	// set when the watchdog cut the body off for its rate.
	bodyStart atomic.Int64
	bodyBytes atomic.Int64
	slow      atomic.Bool

	// links in the watchdog's list, under its mutex; linked (the
	// request's own) says the context is in the list.
	prev, next *deadlineCtx
	linked     bool

	// runs counts the handler runs started under the context (start), so
	// that a look at a client (watchdog.lookAtClients) acts only on the
	// run it looked for. streamed says the run's answer became a stream,
	// whose client the peer watch looks after. look is when the watchdog
	// next looks whether the client of run lookRun is still connected
	// (monoNow nanoseconds, 0 for never): the watchdog's own, under its
	// mutex. A tick that finds runs past lookRun schedules the new run's
	// first look, whatever its deadline (a handler that asked Deadline,
	// as context.WithTimeout does, fixed it before any tick: found by
	// review on 2026-12-07, such a run was never looked at).
	runs        atomic.Uint64 // written under mu
	goneCancels bool          // under mu: the run asked for ErrClientGone (Request.GoneCancels)
	streamed    atomic.Bool
	look        int64
	lookRun     uint64
}

// ErrClientGone is why a handler's context ends when its client closed
// the connection (or, over net/http, the request's context ended) while
// the handler ran, if Check asked for it (Request.GoneCancels): a
// handler that has run for goneEvery (2 s) has its client looked at
// every goneEvery from then on, so one that a client left is told within
// about 4 s rather than running to its deadline for an answer no one
// reads (MCP 2026-07-28: "The server MUST treat a client disconnect as
// cancellation of that request"). A streamed answer's handler is told
// ErrStreamClosed instead.
var ErrClientGone = errors.New("fastserver: the client went away")

var _ context.Context = (*deadlineCtx)(nil)

// deadlineOpen is the deadline of a handler that started since the
// watchdog's last look: fixed by the next look (fix) or by Deadline.
const deadlineOpen = math.MinInt64

// deadlineIn returns the monoNow deadline d after now: MaxInt64 where
// the sum would pass it (a time centuries away, which time.Until gives
// as its largest Duration), and never the open deadline.
func deadlineIn(now int64, d time.Duration) int64 {
	if d > 0 && int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return max(now+int64(d), deadlineOpen+1)
}

// init prepares d for handlers with the given timeout.
func (d *deadlineCtx) init(timeout time.Duration) {
	d.done = make(chan struct{})
	d.timeout = int64(timeout)
}

// fix sets the open deadline of a running handler to timeout after the
// clock now, read under the lock that start stores under: after the
// handler started, never before (the watchdog's own reading for its tick
// may be older than a handler armed since). A deadline already set (by
// Stream.SetDeadline or an earlier fix), or a context with no handler
// running, is left as it is. It returns the deadline.
func (d *deadlineCtx) fix() int64 {
	d.mu.Lock()
	dl := d.deadline.Load()
	if dl == deadlineOpen && d.active {
		dl = monoNow() + d.timeout
		d.deadline.Store(dl)
	}
	d.mu.Unlock()
	return dl
}

// start arms the context with a deadline and returns it.
func (d *deadlineCtx) start(deadline int64, goneCancels bool) context.Context {
	d.mu.Lock()
	d.deadline.Store(deadline)
	d.active = true
	d.err = nil
	d.goneCancels = goneCancels
	d.runs.Add(1)
	if d.streamed.Load() {
		d.streamed.Store(false)
	}
	d.mu.Unlock()
	return d
}

// endRun ends the context with err if run is still the handler run under
// it (runs) and it has not ended yet. count, when not nil, is called
// first, under the lock: whoever sees the context end (the handler) finds
// the end already counted.
func (d *deadlineCtx) endRun(run uint64, err error, count func()) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runs.Load() != run || !d.active || d.err != nil {
		return false
	}
	if count != nil {
		count()
	}
	d.end(err)
	return true
}

// cancel ends the context now with err, if a handler is running under it.
func (d *deadlineCtx) cancel(err error) {
	d.mu.Lock()
	d.end(err)
	d.mu.Unlock()
}

// expire ends the context with context.DeadlineExceeded if a handler is
// running under it and its deadline is still at or before now: checked
// under the lock, so that a deadline Stream.SetDeadline moved later
// between the watchdog's look and this call is kept.
func (d *deadlineCtx) expire(now int64) {
	d.mu.Lock()
	if dl := d.deadline.Load(); dl != deadlineOpen && dl <= now {
		d.end(context.DeadlineExceeded)
	}
	d.mu.Unlock()
}

// end, under mu, ends the context with err if a handler is running under
// it and it has not ended yet.
func (d *deadlineCtx) end(err error) {
	if d.active && d.err == nil {
		d.err = err
		close(d.done)
	}
}

// stop disarms the context. It returns why the context ended, or nil:
// context.DeadlineExceeded when the deadline passed by now (even if the
// watchdog had not seen it yet), or the error given to cancel. A deadline
// still open has not passed: no tick found the handler, so it ran for
// less than a tick, and HandlerTimeout is at least two (watchdog.exact).
func (d *deadlineCtx) stop(now int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active = false
	err := d.err
	if err != nil {
		d.done = make(chan struct{})
		return err
	}
	if dl := d.deadline.Load(); dl != deadlineOpen && now >= dl {
		err = context.DeadlineExceeded
	}
	return err
}

// Deadline reports the handler's deadline, fixing it from the clock now
// if no tick has yet.
func (d *deadlineCtx) Deadline() (time.Time, bool) {
	dl := d.deadline.Load()
	if dl == deadlineOpen {
		dl = d.fix()
	}
	now := monoNow()
	if dl == deadlineOpen {
		dl = now + d.timeout // no handler runs under d (a context kept past its call)
	}
	// From the clocks now, not from the epoch's wall reading: right even
	// after the wall clock was stepped since the process started.
	return time.Now().Add(time.Duration(dl - now)), true
}

func (d *deadlineCtx) Done() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}

func (d *deadlineCtx) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

func (d *deadlineCtx) Value(any) any { return nil }

// watchdog keeps the list of running handlers and cancels the contexts
// whose deadline has passed.
type watchdog struct {
	mu     sync.Mutex
	head   *deadlineCtx
	conns  connList     // connections Serve accepted (conntime.go)
	limits connTimeouts // and their phases' timeouts
	tick   time.Duration
	// exact says handlers are armed with a deadline read off the clock
	// when they start: a HandlerTimeout under two ticks could pass before
	// any tick found the handler (the note above).
	exact   bool
	rate    int64 // minimum body data rate, bytes per second
	grace   int64 // before the rate applies, nanoseconds
	once    sync.Once
	stopped chan struct{}
	quit    sync.Once
	// ended is cancelAll's error once it ran: a handler that starts
	// after it (its body was read while the grace period ran out) starts
	// cancelled too.
	ended atomic.Pointer[error]

	// looks is the ticks' list of clients to look at (lookAt), kept for
	// the next tick; clientGone, when set, counts each handler run ended
	// with ErrClientGone.
	looks      []clientLook
	clientGone func()
}

// ceilMillis is d in whole milliseconds, rounded up: a positive timeout
// stays one (0 would mean none).
func ceilMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// newWatchdog returns the watchdog of handlers with deadline timeout and
// of connections with the read, write and idle timeouts (0: none). It
// ticks every twentieth of the shortest of them, at least every 100 ms,
// at most every 5 ms.
func newWatchdog(timeout time.Duration, rate int64, grace time.Duration, read, write, idle time.Duration) *watchdog {
	shortest := timeout
	for _, d := range []time.Duration{read, write, idle} {
		if d > 0 {
			shortest = min(shortest, d)
		}
	}
	tick := shortest / 20
	tick = max(tick, 5*time.Millisecond)
	tick = min(tick, 100*time.Millisecond)
	return &watchdog{
		tick: tick, exact: timeout < 2*tick, rate: rate, grace: int64(grace), stopped: make(chan struct{}),
		limits: connTimeouts{read: ceilMillis(read), write: ceilMillis(write), idle: ceilMillis(idle)},
	}
}

// tooSlow reports whether d's body, begun at d.bodyStart with n bytes in
// by now, has fallen below the minimum data rate: past the grace period,
// and fewer bytes than the rate asks for the time since the request began
// (Kestrel's MinRequestBodyDataRate).
func (w *watchdog) tooSlow(d *deadlineCtx, now int64) bool {
	start := d.bodyStart.Load()
	if d.conn == nil || start == 0 || w.rate <= 0 {
		return false
	}
	elapsed := now - start
	if elapsed <= w.grace {
		return false
	}
	return d.bodyBytes.Load() < int64(float64(elapsed)/1e9*float64(w.rate))
}

// ensure starts the watchdog goroutine on first use.
func (w *watchdog) ensure() {
	w.once.Do(func() { go w.run() })
}

func (w *watchdog) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	stopped := w.stopped
	for {
		select {
		case <-stopped:
			if w.conns.empty() {
				return
			}
			stopped = nil // tick on for the connections still open
		case <-t.C:
			now := monoNow()
			ms := now / int64(time.Millisecond)
			advanceClock(ms)
			w.conns.sweep(ms, &w.limits)
			if stopped == nil && w.conns.empty() {
				return
			}
			w.mu.Lock()
			looks := w.looks[:0]
			for d := w.head; d != nil; d = d.next {
				if w.tooSlow(d, now) && !d.slow.Load() {
					d.slow.Store(true)
					d.conn.SetReadDeadline(time.Now())
				}
				switch dl := d.deadline.Load(); {
				case dl == deadlineOpen:
					d.fix() // started since the last look
				case dl <= now:
					d.expire(now)
				}
				if run := d.runs.Load(); run != d.lookRun {
					d.lookRun, d.look = run, now+int64(goneEvery) // started since the last look
				} else if d.look != 0 && now >= d.look {
					looks = w.lookAt(looks, d, now)
				}
			}
			w.mu.Unlock()
			w.looks = w.lookAtClients(looks)
		}
	}
}

// clientLook is a running handler whose client the watchdog looks at:
// the run, and the socket or, over net/http, the request's Done channel.
type clientLook struct {
	d    *deadlineCtx
	run  uint64
	sock net.Conn
	gone <-chan struct{}
}

// lookAt, under w.mu, adds d's client to looks if its handler run is
// still the one due for a look, and sets the next look.
func (w *watchdog) lookAt(looks []clientLook, d *deadlineCtx, now int64) []clientLook {
	d.look = now + int64(goneEvery)
	d.mu.Lock()
	same := d.runs.Load() == d.lookRun && d.active && d.goneCancels
	d.mu.Unlock()
	if !same || d.streamed.Load() || d.conn == nil {
		d.look = 0 // ended, not asked for, or a stream: the peer watch's
		return looks
	}
	l := clientLook{d: d, run: d.lookRun}
	if b, ok := d.conn.(*bridgeConn); ok {
		l.gone = b.gone
	} else {
		l.sock = watchedSocket(d.conn) // under w.mu: d.conn is the request's
	}
	if l.sock == nil && l.gone == nil {
		d.look = 0 // nothing to look at (an in-memory connection)
		return looks
	}
	return append(looks, l)
}

// lookAtClients looks at each client in looks, w.mu released (a peek is
// a system call), and ends the handler run of each that went away with
// ErrClientGone. It returns looks emptied, for the next tick.
func (w *watchdog) lookAtClients(looks []clientLook) []clientLook {
	for _, l := range looks {
		left := false
		if l.gone != nil {
			select {
			case <-l.gone:
				left = true
			default:
			}
		} else {
			left = peerGone(l.sock)
		}
		if left {
			l.d.endRun(l.run, ErrClientGone, w.clientGone)
		}
	}
	clear(looks)
	return looks[:0]
}

// stop ends the watchdog goroutine once no connection it watches is
// left open (a handler that ignored Shutdown's cancellation still has
// its answer written under WriteTimeout).
func (w *watchdog) stop() { w.quit.Do(func() { close(w.stopped) }) }

func (w *watchdog) add(d *deadlineCtx) {
	w.mu.Lock()
	d.prev, d.next = nil, w.head
	if w.head != nil {
		w.head.prev = d
	}
	w.head = d
	w.mu.Unlock()
}

func (w *watchdog) remove(d *deadlineCtx) {
	w.mu.Lock()
	if d.prev != nil {
		d.prev.next = d.next
	} else if w.head == d {
		w.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	}
	d.prev, d.next = nil, nil
	w.mu.Unlock()
}

// link adds the request's context d to the list unless it is in it: a
// request is linked once, when its body starts (or its handler, if no
// body was read), and unlinked once, when its call is released, so that
// the list's lock is taken twice per request, not four times.
func (w *watchdog) link(d *deadlineCtx) {
	if !d.linked {
		w.add(d)
		d.linked = true
	}
}

// unlink removes d from the list if link added it, and forgets its
// connection.
func (w *watchdog) unlink(d *deadlineCtx) {
	if d.linked {
		w.remove(d)
		d.linked = false
	}
	d.conn = nil
}

// arm starts d's handler deadline, open (no clock read) unless w is
// exact, and links d: a context that cancelAll already passed over (not
// yet running then) is cancelled at once. The check comes after the link,
// and cancelAll records its error before it walks the list, so one of the
// two always sees the other.
func (w *watchdog) arm(d *deadlineCtx, goneCancels bool) context.Context {
	deadline := int64(deadlineOpen)
	if w.exact {
		deadline = monoNow() + d.timeout
	}
	ctx := d.start(deadline, goneCancels)
	w.link(d)
	if err := w.ended.Load(); err != nil {
		d.cancel(*err)
	}
	return ctx
}

// cancelAll cancels every running handler's context with err, and makes
// the reads of bodies still arriving fail at once.
func (w *watchdog) cancelAll(err error) {
	w.ended.Store(&err)
	w.mu.Lock()
	for d := w.head; d != nil; d = d.next {
		if d.conn != nil && d.bodyStart.Load() != 0 {
			d.conn.SetReadDeadline(time.Now())
		}
		d.cancel(err)
	}
	w.mu.Unlock()
}
