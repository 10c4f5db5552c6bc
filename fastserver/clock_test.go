package fastserver

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRequestTimePerRequest: Request.Time is each request's own, also
// when one pooled call serves them one after another on a connection
// (the wall clock Time reads when first asked is forgotten with the
// request).
func TestRequestTimePerRequest(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []time.Time
	)
	ep := testEndpoint(testMethods(nil))
	ep.Authorize = func(r *Request) *Error {
		mu.Lock()
		seen = append(seen, r.Time())
		mu.Unlock()
		return nil
	}
	_, addr := serve(t, Config{}, ep)
	c := dial(t, addr)
	const gap = 30 * time.Millisecond
	for i := range 5 {
		time.Sleep(gap)
		params := `{"i":` + string(rune('0'+i)) + `}`
		want{200, 0, "1", params, ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"echo","params":`+params+`}`)))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 5 {
		t.Fatalf("Authorize saw %d requests, want 5", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if d := seen[i].Sub(seen[i-1]); d < gap*2/3 {
			t.Errorf("request %d: Time %v after the one before, want about %v (a stale time)", i, d, gap)
		}
	}
	if d := time.Since(seen[len(seen)-1]); d < 0 || d > time.Second {
		t.Errorf("the last request's Time is %v from now", d)
	}
}

// TestDeadlineMovedBeforeExpiry: the watchdog's expiry rechecks the
// deadline under the context's lock, so a deadline moved later (as
// Stream.SetDeadline does) after the watchdog saw the old one expired is
// kept; one still passed ends the context. Deadline reports the moved
// deadline from the clocks now.
func TestDeadlineMovedBeforeExpiry(t *testing.T) {
	var d deadlineCtx
	d.init(time.Second)
	now := monoNow()
	d.start(now-1, false) // already passed: the watchdog's unlocked look says expire
	d.mu.Lock()
	d.deadline.Store(now + int64(time.Hour)) // moved later in between
	d.mu.Unlock()
	d.expire(monoNow())
	if err := d.Err(); err != nil {
		t.Fatalf("a deadline moved an hour later was expired: %v", err)
	}
	if dl, ok := d.Deadline(); !ok || time.Until(dl) < 59*time.Minute || time.Until(dl) > time.Hour {
		t.Errorf("Deadline %v (%v from now), want an hour from now", dl, time.Until(dl))
	}
	d.deadline.Store(monoNow() - 1)
	d.expire(monoNow())
	if err := d.Err(); err != context.DeadlineExceeded {
		t.Fatalf("a passed deadline: Err %v, want DeadlineExceeded", err)
	}
	select {
	case <-d.Done():
	default:
		t.Fatal("Done is open after the deadline passed")
	}
	if err := d.stop(monoNow()); err != context.DeadlineExceeded {
		t.Errorf("stop: %v, want DeadlineExceeded", err)
	}
}

// TestArmAfterCancelAll: a handler that starts after Shutdown's grace
// period ended (cancelAll ran while its body was being read, its context
// not yet running) starts cancelled; one running then is cancelled by
// cancelAll itself.
func TestArmAfterCancelAll(t *testing.T) {
	w := newWatchdog(time.Second, 0, 0, 0, 0, 0)
	var late deadlineCtx
	late.init(time.Second)
	w.link(&late) // linked when its body started
	w.cancelAll(errShuttingDown)
	if ctx := w.arm(&late, false); ctx.Err() != errShuttingDown {
		t.Errorf("armed after cancelAll: Err %v, want errShuttingDown", ctx.Err())
	}
	if err := late.stop(monoNow()); err != errShuttingDown {
		t.Errorf("stop: %v, want errShuttingDown", err)
	}
	w.unlink(&late)

	w = newWatchdog(time.Second, 0, 0, 0, 0, 0)
	var running deadlineCtx
	running.init(time.Second)
	ctx := w.arm(&running, false)
	if ctx.Err() != nil {
		t.Fatalf("armed before any cancelAll: Err %v", ctx.Err())
	}
	w.cancelAll(errShuttingDown)
	if ctx.Err() != errShuttingDown {
		t.Errorf("running at cancelAll: Err %v, want errShuttingDown", ctx.Err())
	}
	w.unlink(&running)
}

// TestOpenDeadline: a handler's deadline is left open when it starts. The
// watchdog's look fixes it from the clock read then, under the context's
// lock, Deadline (asked first) the same way, and neither moves a deadline
// once set; an open deadline is never expired by the watchdog, nor past
// at stop (no tick found the handler: it ran for less than a tick); a
// context with no handler running is not fixed.
func TestOpenDeadline(t *testing.T) {
	const timeout = 50 * time.Millisecond
	w := newWatchdog(timeout, 0, 0, 0, 0, 0)
	var d deadlineCtx
	d.init(timeout)
	ctx := w.arm(&d, false)
	d.expire(monoNow() + int64(time.Hour)) // the watchdog never expires an open deadline
	if ctx.Err() != nil {
		t.Fatalf("an open deadline expired: %v", ctx.Err())
	}
	before := time.Now()
	dl, ok := ctx.Deadline()
	after := time.Now()
	if !ok || dl.Before(before.Add(timeout)) || dl.After(after.Add(timeout+5*time.Millisecond)) {
		t.Errorf("Deadline %v, want %v after the call (%v)", dl, timeout, before)
	}
	fixed := d.deadline.Load()
	if d.fix(); d.deadline.Load() != fixed { // a later look keeps it
		t.Errorf("the deadline moved once set: %d, then %d", fixed, d.deadline.Load())
	}
	if again, _ := ctx.Deadline(); again.Sub(dl).Abs() > time.Millisecond {
		t.Errorf("Deadline moved: %v, then %v", dl, again)
	}
	if err := d.stop(fixed - 1); err != nil {
		t.Errorf("stop before the deadline: %v", err)
	}
	w.unlink(&d)

	// The watchdog's look: from its own clock reading, after the start.
	ctx = w.arm(&d, false)
	armed := monoNow()
	got := d.fix()
	if got < armed+int64(timeout) || got > monoNow()+int64(timeout) {
		t.Errorf("fixed at %v after the start, want %v", time.Duration(got-armed), timeout)
	}
	d.expire(got)
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("at the fixed deadline: Err %v, want DeadlineExceeded", ctx.Err())
	}
	if err := d.stop(got); err != context.DeadlineExceeded {
		t.Errorf("stop: %v, want DeadlineExceeded", err)
	}
	w.unlink(&d)

	// No look before the handler returned: not past, however long ago
	// the request began (its body may have been slow).
	w.arm(&d, false)
	if err := d.stop(monoNow() + int64(time.Hour)); err != nil {
		t.Errorf("an open deadline at stop: %v, want none passed", err)
	}
	// No handler running: a look fixes nothing.
	if d.fix(); d.deadline.Load() != deadlineOpen {
		t.Errorf("a stopped context's open deadline was fixed")
	}
	w.unlink(&d)
}

// TestFixAfterStart: the watchdog reads its clock for a tick, then sweeps
// and takes its list's lock; a handler armed in between (a pooled call
// linked when its body started: arm takes no list lock) must not get a
// deadline counted from that earlier reading. The list's lock is held
// here to stand for the delay.
func TestFixAfterStart(t *testing.T) {
	const timeout = 100 * time.Millisecond // a tick of 5 ms
	w := newWatchdog(timeout, 0, 0, 0, 0, 0)
	defer w.stop()
	var d deadlineCtx
	d.init(timeout)
	d.deadline.Store(math.MaxInt64) // its body is being read
	w.link(&d)
	w.ensure()
	time.Sleep(20 * time.Millisecond)
	w.mu.Lock()
	time.Sleep(20 * time.Millisecond) // the watchdog has read its clock and waits
	armed := monoNow()
	ctx := w.arm(&d, false)
	w.mu.Unlock()
	<-ctx.Done()
	if lived := time.Duration(monoNow() - armed); lived < timeout {
		t.Errorf("cancelled %v after it started, before HandlerTimeout %v", lived, timeout)
	}
	d.stop(monoNow())
	w.unlink(&d)
}

// TestSlowBodyFastHandler: a body that takes longer than HandlerTimeout
// to arrive does not count against the handler, which returns at once:
// every answer is its result (found by a review of the open deadline,
// which first judged an unseen handler from the request's start).
func TestSlowBodyFastHandler(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var ms Methods
	ms.HandleFunc("fast", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, "1"...), nil
	})
	_, addr := serve(t, Config{HandlerTimeout: timeout}, testEndpoint(&ms))
	c := dial(t, addr)
	for i := range 3 {
		id := strconv.Itoa(100 + i)
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"fast"}`
		head, _, _ := strings.Cut(post(pathRPC, body), "\r\n\r\n")
		c.send(head + "\r\n\r\n" + body[:5])
		time.Sleep(timeout + 50*time.Millisecond)
		c.send(body[5:])
		want{200, 0, id, "1", ""}.check(t, c.read())
	}
}

// TestExactArm: a HandlerTimeout under two ticks (5 ms ticks at the
// least) is armed from the clock at the handler's start, as an open
// deadline could pass unseen: a handler past it, returning before most
// ticks could find it, is answered 500 every time; one that returns at
// once gets its result.
func TestExactArm(t *testing.T) {
	const timeout = 2 * time.Millisecond
	if w, w10 := newWatchdog(timeout, 0, 0, 0, 0, 0), newWatchdog(10*time.Millisecond, 0, 0, 0, 0, 0); !w.exact || w10.exact {
		t.Fatalf("exact at 2 ms: %v, at 10 ms: %v, with a %v tick", w.exact, w10.exact, w.tick)
	}
	var ms Methods
	ms.HandleFunc("slow", func(r *Request, dst []byte) ([]byte, error) {
		time.Sleep(2 * timeout) // ignores its context; under a tick
		return append(dst, "1"...), nil
	})
	ms.HandleFunc("fast", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, "2"...), nil
	})
	_, addr := serve(t, Config{HandlerTimeout: timeout}, testEndpoint(&ms))
	c := dial(t, addr)
	for range 10 {
		want{500, -32603, "1", "", ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)))
		want{200, 0, "2", "2", ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":2,"method":"fast"}`)))
	}
}

// TestHandlerDeadlineNotEarly: a handler waiting on its context is ended
// no earlier than HandlerTimeout after it started, and within a few of
// the watchdog's ticks after that, request after request.
func TestHandlerDeadlineNotEarly(t *testing.T) {
	const timeout = 100 * time.Millisecond // a tick of 5 ms
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	var ms Methods
	ms.HandleFunc("wait", func(r *Request, dst []byte) ([]byte, error) {
		start := time.Now()
		<-r.Context().Done()
		mu.Lock()
		waits = append(waits, time.Since(start))
		mu.Unlock()
		return append(dst, "null"...), nil
	})
	_, addr := serve(t, Config{HandlerTimeout: timeout}, testEndpoint(&ms))
	c := dial(t, addr)
	for i := range 5 {
		time.Sleep(time.Duration(i) * 3 * time.Millisecond) // start at different places between ticks
		want{500, -32603, "1", "", ""}.check(t, c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"wait"}`)))
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("waits %v", waits)
	for i, w := range waits {
		if w < timeout || w > timeout+500*time.Millisecond {
			t.Errorf("call %d: the context ended %v after the handler started, want %v to %v", i, w, timeout, timeout+500*time.Millisecond)
		}
	}
	if len(waits) != 5 {
		t.Errorf("%d handlers ran, want 5", len(waits))
	}
}

// TestDeadlineIn: a stream's deadline set centuries away (time.Until
// saturates) is the furthest deadline, not one wrapped into the past that
// the next tick would expire; one far in the past is past, never the open
// deadline.
func TestDeadlineIn(t *testing.T) {
	now := monoNow()
	far := deadlineIn(now, time.Until(time.Now().AddDate(300, 0, 0)))
	if far != math.MaxInt64 {
		t.Errorf("300 years ahead: %d, want MaxInt64", far)
	}
	var d deadlineCtx
	d.init(time.Second)
	ctx := d.start(far, false)
	d.expire(monoNow())
	if ctx.Err() != nil {
		t.Errorf("a deadline 300 years ahead expired: %v", ctx.Err())
	}
	if dl, _ := ctx.Deadline(); time.Until(dl) < 100*365*24*time.Hour {
		t.Errorf("Deadline %v, want about 290 years ahead", dl)
	}
	for _, back := range []time.Duration{-time.Second, math.MinInt64} {
		if got := deadlineIn(now, back); got == deadlineOpen || got > now {
			t.Errorf("deadlineIn(now, %v) = %d: want a past deadline", back, got)
		}
	}
	if got := deadlineIn(now, time.Second); got != now+int64(time.Second) {
		t.Errorf("one second ahead: %d, want %d", got, now+int64(time.Second))
	}
}
