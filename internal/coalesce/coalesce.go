// Package coalesce is a queue of keys in which a key already waiting is
// not queued again: an update that means "look again" (an MCP resource
// updated) merges into one still waiting to be handled, so a slow
// consumer costs at most one entry per distinct key. mcp's listen streams
// and fleet's resource relay use it.
package coalesce

import "sync"

// Result says what Add did with a key.
type Result int

const (
	Queued  Result = iota // the key was queued
	Merged                // the key was already waiting
	Dropped               // the queue was at a bound: nothing queued
)

// Queue is a coalescing queue of keys, safe for concurrent use. Create it
// with New.
type Queue struct {
	maxKeys, maxBytes int
	wake              chan struct{}

	mu      sync.Mutex
	waiting map[string]bool
	pending []string // the waiting keys, in the order they came
	bytes   int
}

// New returns an empty Queue bounded to maxKeys keys and maxBytes bytes
// of them; 0 means no bound.
func New(maxKeys, maxBytes int) *Queue {
	return &Queue{maxKeys: maxKeys, maxBytes: maxBytes, wake: make(chan struct{}, 1), waiting: make(map[string]bool)}
}

// Add queues k unless it is waiting already or the queue is at a bound,
// and signals Wake either way.
func (q *Queue) Add(k string) Result {
	r := Queued
	q.mu.Lock()
	switch {
	case q.waiting[k]:
		r = Merged
	case q.maxKeys > 0 && len(q.pending) >= q.maxKeys, q.maxBytes > 0 && q.bytes+len(k) > q.maxBytes:
		r = Dropped
	default:
		q.waiting[k] = true
		q.pending = append(q.pending, k)
		q.bytes += len(k)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return r
}

// Take appends the waiting keys to buf[:0], in the order they came, and
// empties the queue: a key added after it is queued again.
func (q *Queue) Take(buf []string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf = append(buf[:0], q.pending...)
	clear(q.pending)
	q.pending = q.pending[:0]
	clear(q.waiting)
	q.bytes = 0
	return buf
}

// Wake receives a value after an Add (one value for any number of Adds
// since the last receive).
func (q *Queue) Wake() <-chan struct{} { return q.wake }

// Len returns how many keys wait, and their bytes.
func (q *Queue) Len() (keys, bytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending), q.bytes
}
