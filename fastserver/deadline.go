package fastserver

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is the context a handler runs under: a reusable
// context.Context with the handler deadline, so that giving handlers a
// deadline allocates nothing per request. Its Done channel is closed when
// the deadline passes; a new one is made for the next request only then.
type deadlineCtx struct {
	mu       sync.Mutex
	deadline time.Time
	done     chan struct{}
	err      error
	active   bool
	timer    *time.Timer
}

var _ context.Context = (*deadlineCtx)(nil)

func (d *deadlineCtx) init() {
	d.done = make(chan struct{})
	d.timer = time.AfterFunc(time.Hour, d.fire)
	d.timer.Stop()
}

// start arms the deadline and returns the context.
func (d *deadlineCtx) start(timeout time.Duration) context.Context {
	d.mu.Lock()
	d.deadline = time.Now().Add(timeout)
	d.active = true
	d.err = nil
	d.mu.Unlock()
	d.timer.Reset(timeout)
	return d
}

// fire runs on the timer. A late fire from an earlier request finds a
// later deadline and does nothing.
func (d *deadlineCtx) fire() {
	d.mu.Lock()
	if d.active && d.err == nil && !time.Now().Before(d.deadline) {
		d.err = context.DeadlineExceeded
		close(d.done)
	}
	d.mu.Unlock()
}

// stop disarms the deadline and reports whether it had passed.
func (d *deadlineCtx) stop() bool {
	d.timer.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active = false
	expired := d.err != nil || !time.Now().Before(d.deadline)
	if d.err != nil {
		d.done = make(chan struct{})
	}
	return expired
}

func (d *deadlineCtx) Deadline() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deadline, true
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
