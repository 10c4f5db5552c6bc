package a2a

import (
	"sync/atomic"
	"unsafe"
)

// NOTE: growing a task's history.
//
// A stored Task is never modified, so each change makes a new one. Copying
// the history into each new task made a continued message cost the whole
// history: at 100,000 messages (half the default budget) a 300-byte
// message allocated 20 MB and copied it under the store's lock (found by
// review on 2026-12-06). So a history sits in a sharedBuf, an array with
// room to grow shared by a task and its successors, each seeing its own
// prefix: a successor writes its messages into the free slots after its
// predecessor's. The slots are claimed with a compare-and-swap, because a
// TaskStore may call its update function more than once on one task, and
// two successors of one task must never write the same slot: the one that
// loses the claim copies. History is clipped to its length, so that an
// append to a task read from the store (Call.Task, Server.Task) copies
// rather than writes into the shared slots. The history's size estimate
// travels with it, so the store's budget check does not walk it either.
// An artifact built in chunks (UpdateArtifact with Append) grows its parts
// the same way: each chunk copied every part before it, a Part (144
// bytes) each, so the demo's stream skill turned an 8 KB message of 1000
// chunks into 155 MB of allocation.

// sharedBuf is the backing array of a growing slice (a history, the parts
// of an artifact built in chunks) with room to grow.
type sharedBuf[T any] struct {
	items []T          // len(items) == cap(items): every slot
	used  atomic.Int64 // items[:used] are claimed by some holder
}

// holds reports whether have is a prefix of b's items.
func (b *sharedBuf[T]) holds(have []T) bool {
	return b != nil && len(have) > 0 && len(have) <= len(b.items) && &have[0] == &b.items[0]
}

// appendShared returns have followed by add, clipped, and the buffer that
// holds it: b, when have is its prefix and the slots after it are free
// (claimed here), else a new buffer with a quarter more room.
func appendShared[T any](b *sharedBuf[T], have []T, add ...T) ([]T, *sharedBuf[T]) {
	n, k := len(have), len(add)
	if b.holds(have) && n+k <= len(b.items) && b.used.CompareAndSwap(int64(n), int64(n+k)) {
		copy(b.items[n:], add)
		return b.items[: n+k : n+k], b
	}
	nb := &sharedBuf[T]{items: make([]T, n+k+(n+k)/4+4)}
	copy(nb.items, have)
	copy(nb.items[n:], add)
	nb.used.Store(int64(n + k))
	return nb.items[: n+k : n+k], nb
}

// messageSlot and partSlot are what a free slot of a sharedBuf costs.
const (
	messageSlot = int64(unsafe.Sizeof(Message{}))
	partSlot    = int64(unsafe.Sizeof(Part{}))
)

// sharedHistory reports whether t.History is the prefix of t.hist that
// t.histN and t.histBytes describe (not so for a task built or changed
// elsewhere, such as decoded by a shared store).
func (t *Task) sharedHistory() bool {
	return t.histN > 0 && len(t.History) == t.histN && t.hist.holds(t.History)
}

// historySize estimates the memory of t's history for the store's
// budget, with the free slots of its buffer.
func historySize(t *Task) int64 {
	if t.sharedHistory() {
		return t.histBytes + int64(len(t.hist.items)-t.histN)*messageSlot
	}
	var n int64
	for i := range t.History {
		n += messageSize(&t.History[i])
	}
	return n
}

// appendHistory sets nt's history (nt being a successor of old) to old's
// followed by msgs.
func appendHistory(nt, old *Task, msgs ...Message) {
	var size int64
	for i := range msgs {
		size += messageSize(&msgs[i])
	}
	var b *sharedBuf[Message]
	if old.sharedHistory() {
		b, size = old.hist, size+old.histBytes
	} else {
		for i := range old.History {
			size += messageSize(&old.History[i])
		}
	}
	h, b := appendShared(b, old.History, msgs...)
	nt.History, nt.hist, nt.histN, nt.histBytes = h, b, len(h), size
}

// releaseHistory gives back the slots that nt, a successor of old that
// will not be stored, claimed in old's buffer, so that the next successor
// of old writes there instead of copying. Only a store that calls update
// functions one at a time with the stored task may call it (MemoryStore,
// under its lock): no other successor of old can hold slots after nt's.
func releaseHistory(nt, old *Task) {
	if nt != nil && nt.hist != nil && nt.hist == old.hist && old.sharedHistory() && nt.histN > old.histN {
		nt.hist.used.CompareAndSwap(int64(nt.histN), int64(old.histN))
	}
}
