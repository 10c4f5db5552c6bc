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

	// links in the server's list of running handlers, under the
	// server's activeMu
	prev, next *deadlineCtx
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

// cancel ends the context now with err, if a handler is running under it.
func (d *deadlineCtx) cancel(err error) {
	d.mu.Lock()
	if d.active && d.err == nil {
		d.err = err
		close(d.done)
	}
	d.mu.Unlock()
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

// stop disarms the deadline. It returns why the context ended, or nil:
// context.DeadlineExceeded when the deadline passed (even if the timer
// had not fired yet), or the error given to cancel.
func (d *deadlineCtx) stop() error {
	d.timer.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active = false
	err := d.err
	if err != nil {
		d.done = make(chan struct{})
	} else if !time.Now().Before(d.deadline) {
		err = context.DeadlineExceeded
	}
	return err
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

// activeList is the list of handlers running, so that Shutdown can cancel
// their contexts when the grace period is over.
type activeList struct {
	mu   sync.Mutex
	head *deadlineCtx
}

func (l *activeList) add(d *deadlineCtx) {
	l.mu.Lock()
	d.prev, d.next = nil, l.head
	if l.head != nil {
		l.head.prev = d
	}
	l.head = d
	l.mu.Unlock()
}

func (l *activeList) remove(d *deadlineCtx) {
	l.mu.Lock()
	if d.prev != nil {
		d.prev.next = d.next
	} else if l.head == d {
		l.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	}
	d.prev, d.next = nil, nil
	l.mu.Unlock()
}

// cancelAll cancels every running handler's context with err.
func (l *activeList) cancelAll(err error) {
	l.mu.Lock()
	for d := l.head; d != nil; d = d.next {
		d.cancel(err)
	}
	l.mu.Unlock()
}
