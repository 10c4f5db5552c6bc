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
	d.init()
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
	late.init()
	w.link(&late) // linked when its body started
	w.cancelAll(errShuttingDown)
	if ctx := w.arm(&late, monoNow()+int64(time.Hour)); ctx.Err() != errShuttingDown {
		t.Errorf("armed after cancelAll: Err %v, want errShuttingDown", ctx.Err())
	}
	if err := late.stop(monoNow()); err != errShuttingDown {
		t.Errorf("stop: %v, want errShuttingDown", err)
	}
	w.unlink(&late)

	w = newWatchdog(time.Second, 0, 0, 0, 0, 0)
	var running deadlineCtx
	running.init()
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
