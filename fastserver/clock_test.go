package fastserver

import (
	"context"
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
	d.start(now - 1) // already passed: the watchdog's unlocked look says expire
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
	if err := d.stop(monoNow(), 0); err != context.DeadlineExceeded {
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
	if ctx := w.arm(&late, monoNow()+int64(time.Hour)); ctx.Err() != errShuttingDown {
		t.Errorf("armed after cancelAll: Err %v, want errShuttingDown", ctx.Err())
	}
	if err := late.stop(monoNow(), 0); err != errShuttingDown {
		t.Errorf("stop: %v, want errShuttingDown", err)
	}
	w.unlink(&late)

	w = newWatchdog(time.Second, 0, 0, 0, 0, 0)
	var running deadlineCtx
	running.init(time.Second)
	ctx := w.arm(&running, monoNow()+int64(time.Hour))
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
// watchdog's first look fixes it at that look's time plus the timeout,
// Deadline (asked first) at the time of the call, and neither moves a
// deadline once set; an open deadline never expires by the watchdog, and
// stop judges one no tick fixed from the request's start.
func TestOpenDeadline(t *testing.T) {
	const timeout = 50 * time.Millisecond
	w := newWatchdog(timeout, 0, 0, 0, 0, 0)
	var d deadlineCtx
	d.init(timeout)
	ctx := w.arm(&d, deadlineOpen)
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
	d.fix(monoNow() + int64(time.Hour)) // a later look keeps it
	if again, _ := ctx.Deadline(); d.deadline.Load() != fixed || again.Sub(dl).Abs() > time.Millisecond {
		t.Errorf("the deadline moved once set: %v, then %v", dl, again)
	}
	if err := d.stop(fixed-1, 0); err != nil {
		t.Errorf("stop before the deadline: %v", err)
	}
	w.unlink(&d)

	// The watchdog's look: at its time plus the timeout.
	ctx = w.arm(&d, deadlineOpen)
	look := monoNow()
	d.fix(look)
	if got := d.deadline.Load(); got != look+int64(timeout) {
		t.Errorf("fixed at %d, want the look's time + timeout = %d", got, look+int64(timeout))
	}
	d.expire(look + int64(timeout))
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("past the fixed deadline: Err %v, want DeadlineExceeded", ctx.Err())
	}
	if err := d.stop(look+int64(timeout), 0); err != context.DeadlineExceeded {
		t.Errorf("stop: %v, want DeadlineExceeded", err)
	}
	w.unlink(&d)

	// No look before the handler returned: judged from the request's start.
	began := monoNow()
	w.arm(&d, deadlineOpen)
	if err := d.stop(began+int64(timeout)-1, began); err != nil {
		t.Errorf("returned within the timeout of the request's start: %v", err)
	}
	w.arm(&d, deadlineOpen)
	if err := d.stop(began+int64(timeout), began); err != context.DeadlineExceeded {
		t.Errorf("returned a timeout after the request's start, unseen: %v, want DeadlineExceeded", err)
	}
	w.unlink(&d)
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
