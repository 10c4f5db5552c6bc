package a2a

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Defaults of the task store's limits.
const (
	// DefaultMaxTasks is the default number of tasks kept: 10,000.
	DefaultMaxTasks = 10000
	// DefaultMaxTaskBytes is the default budget of the task store: 64 MiB,
	// as estimated by taskSize.
	DefaultMaxTaskBytes = 64 << 20
	// DefaultOwnerShare is the default share of one owner in the store's
	// limits: an owner keeps at most 1/DefaultOwnerShare of the tasks and
	// of the bytes (1,000 tasks and 6.4 MiB by default; at least one
	// task).
	DefaultOwnerShare = 10
)

// NOTE: the per-owner share.
//
// Tasks are ordered by creation in a ring of ids, so that the oldest is
// found in O(1) when the store is full. With owners (Config.Auth), each
// owner also has a queue of its own ids by creation: an owner at its
// share (count or bytes) that creates or grows a task evicts its own
// oldest, never another owner's. That eviction takes an id out of the
// middle of the ring and leaves a hole there: a slot whose id is "" or
// names a task stored at another slot (storedTask.pos says which slot is
// a task's). Holes are counted (holes), skipped and freed when they
// reach the head, and squeezed out when the ring is full: in place when
// at least half of it is holes, else into a ring twice as large (at most
// 2 × maxTasks, where a full ring is always more than half holes, since
// it never holds more than maxTasks tasks), so that squeezing, O(ring),
// comes at most once every ring/2 creates. The ring starts at firstRing
// slots (or maxTasks, when fewer) and grows so with the tasks stored: a
// large maxTasks costs nothing until the tasks come (found by review on
// 2026-12-07: the ring was allocated whole, and -a2a-max-tasks 2^63-1
// panicked at start). The count bound is the map's
// size, never the ring's: a ring full of holes frees its holes, it
// never evicts a live task for want of a slot. An owner's queue keeps
// the ids of its tasks evicted meanwhile by the global bounds (an entry
// is live while its task's oseq is the entry's), dropped when they reach
// its front and squeezed out when they outnumber the live ones twice.
// Without owners there are no holes and no queues.

// store keeps tasks by id, bounded by a count and a byte budget; when a
// new task would pass either, the oldest tasks (by creation) are evicted.
// Each owner (Task.Owner, when not "") is bounded by its share of both:
// past it, its own oldest tasks are evicted. Updates replace a task
// without changing its age. Stored *Task values are never modified, so
// readers need no lock once they hold one.
//
// A store is safe for concurrent use: one mutex guards it, held only for
// map and ring operations (no allocation-heavy work inside). Every
// operation is O(1) amortized.
type store struct {
	mu       sync.Mutex
	tasks    map[string]storedTask
	ring     []string // ids by creation; ring[head] is the oldest
	head     int
	n        int // slots used from head: len(tasks) + holes
	holes    int // slots of the n whose task left from the middle
	bytes    int64
	maxTasks int
	maxBytes int64

	owners        map[string]*ownerTasks
	ownerMax      int
	ownerMaxBytes int64
	seq           uint64 // the last ownerEntry.seq given
}

type storedTask struct {
	t    *Task
	size int64
	pos  int         // its slot in ring
	oseq uint64      // its entry in its owner's queue; 0 without an owner
	own  *ownerTasks // its owner's; nil without one
}

// ownerTasks is one owner's part of a store.
type ownerTasks struct {
	name  string       // Task.Owner
	q     []ownerEntry // by creation from q[qh]; stale entries among them
	qh    int
	n     int   // tasks stored
	bytes int64 // their sizes
}

// ownerEntry names a task in its owner's queue; it is stale once the
// task's storedTask.oseq is not seq (evicted, or re-queued).
type ownerEntry struct {
	id  string
	seq uint64
}

// newStore returns a store of at most maxTasks tasks and maxBytes bytes,
// without a share per owner.
func newStore(maxTasks int, maxBytes int64) *store {
	return newOwnedStore(maxTasks, maxBytes, maxTasks, maxBytes)
}

// newOwnedStore returns a store of at most maxTasks tasks and maxBytes
// bytes, each owner's at most ownerMax and ownerMaxBytes (0: the
// default share, ownerShare). Shares of the whole store are no share:
// owners are then not told apart (no queues).
// firstRing is the ring's size when a store starts.
const firstRing = 1024

func newOwnedStore(maxTasks int, maxBytes int64, ownerMax int, ownerMaxBytes int64) *store {
	s := &store{
		tasks:    make(map[string]storedTask, min(maxTasks, 1024)),
		ring:     make([]string, min(maxTasks, firstRing)),
		maxTasks: maxTasks,
		maxBytes: maxBytes,
	}
	s.ownerMax, s.ownerMaxBytes = ownerShare(maxTasks, maxBytes, ownerMax, ownerMaxBytes)
	if s.ownerMax < maxTasks || s.ownerMaxBytes < maxBytes {
		s.owners = map[string]*ownerTasks{}
	}
	return s
}

// owner is the owner t counts against: "" for none, and for every task
// of a store without shares.
func (s *store) owner(t *Task) string {
	if s.owners == nil {
		return ""
	}
	return t.Owner
}

// ownerShare resolves an owner's share: 0 means a DefaultOwnerShare-th
// of the store's bound (at least one task, one byte).
func ownerShare(maxTasks int, maxBytes int64, n int, b int64) (int, int64) {
	if n <= 0 {
		n = max(1, maxTasks/DefaultOwnerShare)
	}
	if b <= 0 {
		b = max(1, maxBytes/DefaultOwnerShare)
	}
	return n, b
}

// get returns the task with the given id.
func (s *store) get(id string) (*Task, bool) {
	s.mu.Lock()
	e, ok := s.tasks[id]
	s.mu.Unlock()
	return e.t, ok
}

// tooLarge reports whether a task of size bytes would alone pass the
// budget, or its owner's share of it.
func (s *store) tooLarge(t *Task, size int64) bool {
	return size > s.maxBytes || (s.owner(t) != "" && size > s.ownerMaxBytes)
}

// put stores t under t.ID: a new task becomes the youngest, evicting the
// oldest ones as needed (its owner's own first); an existing one is
// replaced in place.
func (s *store) put(t *Task) error {
	size := taskSize(t)
	if s.tooLarge(t, size) {
		return ErrTaskTooLarge // it alone would pass the budget
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.tasks[t.ID]; ok {
		s.replace(t.ID, old, t, size)
		return nil
	}
	own := s.owner(t)
	if o := s.owners[own]; o != nil && o.n >= s.ownerMax {
		// At its share: its own oldest goes (t.ID, not stored yet, is
		// no entry of its queue).
		s.dropOwnerOldest(o, t.ID)
	}
	if len(s.tasks) >= s.maxTasks {
		s.dropOldest()
	}
	if s.n == len(s.ring) {
		s.squeeze()
	}
	pos := (s.head + s.n) % len(s.ring)
	s.ring[pos] = t.ID
	s.n++
	e := storedTask{t: t, size: size, pos: pos}
	if own != "" {
		e.own, e.oseq = s.join(own, t.ID, size)
	}
	s.tasks[t.ID] = e
	s.bytes += size
	s.evict(t.ID)
	return nil
}

// replace stores t, of the given size, in place of old, the task stored
// under id, then evicts past the bounds (never id).
func (s *store) replace(id string, old storedTask, t *Task, size int64) {
	s.bytes += size - old.size
	e := storedTask{t: t, size: size, pos: old.pos, oseq: old.oseq, own: old.own}
	switch was, own := s.owner(old.t), s.owner(t); {
	case was == own:
		if e.own != nil {
			e.own.bytes += size - old.size
		}
		s.tasks[id] = e
	default:
		// Another owner (no Server does this): the task leaves the old
		// owner's queue and joins the new one's as its youngest.
		e.own, e.oseq = nil, 0
		s.tasks[id] = e
		if old.own != nil {
			s.leave(old.own, id, old.size)
		}
		if own != "" {
			e.own, e.oseq = s.join(own, id, size)
			s.tasks[id] = e
			for o := e.own; o.n > s.ownerMax; {
				s.dropOwnerOldest(o, id)
			}
		}
	}
	s.evict(id)
}

// update applies f to the stored task with the given id and stores its
// result, under the store's lock, so that concurrent updates of one task
// do not lose each other's changes. f must not block. It reports false
// when there is no such task (f is not called) and returns f's error.
func (s *store) update(id string, f func(*Task) (*Task, error)) (*Task, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.tasks[id]
	if !ok {
		return nil, false, nil
	}
	t, err := f(old.t)
	if err != nil {
		releaseHistory(t, old.t)
		return old.t, true, err
	}
	size := taskSize(t)
	if s.tooLarge(t, size) {
		// The task alone would pass the budget (or its owner's share),
		// and the task being changed is never evicted: refused, the task
		// unchanged.
		releaseHistory(t, old.t)
		return old.t, true, ErrTaskTooLarge
	}
	s.replace(id, old, t, size)
	return t, true, nil
}

// evict drops tasks past the byte bounds, but never keep, the task just
// stored: first the oldest of keep's owner while it passes its share,
// then the oldest of all while the budget is passed. When keep is itself
// the oldest it is moved to the young end (so an update under budget
// pressure renews a task's age); a task larger than the budget (or its
// owner's share) is refused before it gets here.
func (s *store) evict(keep string) {
	if o := s.tasks[keep].own; o != nil {
		for o.bytes > s.ownerMaxBytes && o.n > 1 {
			s.dropOwnerOldest(o, keep)
		}
	}
	for s.bytes > s.maxBytes && len(s.tasks) > 0 {
		s.trimHead()
		if s.ring[s.head] == keep {
			if len(s.tasks) == 1 {
				return
			}
			// keep is the oldest: skip over it by moving it to the young end.
			L := len(s.ring)
			s.ring[s.head] = ""
			s.head = (s.head + 1) % L
			e := s.tasks[keep]
			e.pos = (s.head + s.n - 1) % L
			s.ring[e.pos] = keep
			s.tasks[keep] = e
			s.trimHead()
			continue
		}
		s.dropOldest()
	}
}

// live reports whether ring slot i holds a stored task (not a hole).
func (s *store) live(i int) bool {
	e, ok := s.tasks[s.ring[i]]
	return ok && e.pos == i
}

// trimHead frees the holes at the head of the ring.
func (s *store) trimHead() {
	for s.holes > 0 && s.n > 0 && !s.live(s.head) {
		s.ring[s.head] = ""
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.holes--
	}
}

// dropOldest removes the oldest task, skipping the holes before it.
func (s *store) dropOldest() {
	s.trimHead()
	if s.n == 0 {
		return
	}
	id := s.ring[s.head]
	s.ring[s.head] = ""
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	if e, ok := s.tasks[id]; ok {
		s.forget(id, e)
	}
	s.trimHead()
}

// drop removes a stored task from anywhere in the ring: at the head the
// slot is freed, elsewhere it becomes a hole.
func (s *store) drop(id string, e storedTask) {
	s.ring[e.pos] = ""
	s.forget(id, e)
	if e.pos == s.head {
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.trimHead()
		return
	}
	s.holes++
}

// forget removes a task from the map and the byte and owner counts (its
// ring slot is the caller's).
func (s *store) forget(id string, e storedTask) {
	delete(s.tasks, id)
	s.bytes -= e.size
	if e.own != nil {
		s.leave(e.own, id, e.size)
	}
}

// squeeze makes room in a full ring by squeezing out its holes: in place
// when at least half of it is holes, else into a ring twice as large,
// at most 2 × maxTasks (see the note above).
func (s *store) squeeze() {
	L := len(s.ring)
	dst, base, inPlace := s.ring, s.head, 2*s.holes >= L
	if !inPlace {
		dst, base = make([]string, min(2*L, 2*s.maxTasks)), 0
	}
	// In place, slot head+j is written only once slots head to head+k,
	// k >= j, were read.
	j := 0
	for k := range s.n {
		i := (s.head + k) % L
		if !s.live(i) {
			continue
		}
		id := s.ring[i]
		p := (base + j) % len(dst)
		j++
		if inPlace && p == i {
			continue
		}
		dst[p] = id
		e := s.tasks[id]
		e.pos = p
		s.tasks[id] = e
	}
	if inPlace {
		for k := j; k < s.n; k++ {
			dst[(base+k)%L] = ""
		}
	}
	s.ring, s.head, s.n, s.holes = dst, base, j, 0
}

// join puts a task of size bytes at the young end of its owner's queue
// and returns the owner's part and the entry's seq.
func (s *store) join(owner, id string, size int64) (*ownerTasks, uint64) {
	o := s.owners[owner]
	if o == nil {
		o = &ownerTasks{name: owner}
		s.owners[owner] = o
	}
	s.seq++
	o.q = append(o.q, ownerEntry{id, s.seq})
	o.n++
	o.bytes += size
	return o, s.seq
}

// leave counts task id, of size bytes, out of its owner's (its queue
// entry is stale by then, or about to be); an owner with no task left is
// forgotten.
func (s *store) leave(o *ownerTasks, id string, size int64) {
	o.n--
	o.bytes -= size
	if o.n == 0 {
		delete(s.owners, o.name)
		return
	}
	if o.q[o.qh].id == id {
		// The owner's oldest (as the oldest of all mostly is): its
		// entry goes now rather than stale.
		o.pop()
		return
	}
	if len(o.q)-o.qh > 2*o.n+16 {
		// Mostly stale: keep the live entries, in order.
		q := make([]ownerEntry, 0, 2*o.n)
		for _, en := range o.q[o.qh:] {
			if s.tasks[en.id].oseq == en.seq {
				q = append(q, en)
			}
		}
		o.q, o.qh = q, 0
	}
}

// pop takes the entry at the front of o's queue (o.qh < len(o.q)).
func (o *ownerTasks) pop() ownerEntry {
	en := o.q[o.qh]
	o.q[o.qh] = ownerEntry{}
	o.qh++
	if o.qh > 32 && 2*o.qh > len(o.q) {
		o.q = o.q[:copy(o.q, o.q[o.qh:])]
		o.qh = 0
	}
	return en
}

// dropOwnerOldest evicts o's oldest task but keep: when keep is the
// oldest it is moved to the young end of o's queue, and the next goes.
func (s *store) dropOwnerOldest(o *ownerTasks, keep string) {
	for o.qh < len(o.q) {
		en := o.pop()
		e, ok := s.tasks[en.id]
		if !ok || e.oseq != en.seq {
			continue // stale
		}
		if en.id == keep {
			s.seq++
			e.oseq = s.seq
			s.tasks[keep] = e
			o.q = append(o.q, ownerEntry{keep, s.seq})
			continue
		}
		s.drop(en.id, e)
		return
	}
}

// len returns the number of tasks stored.
func (s *store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// taskSize estimates the memory a task holds: its strings and raw bytes
// plus a fixed overhead per object. It is what DefaultMaxTaskBytes counts.
func taskSize(t *Task) int64 {
	n := int64(256 + len(t.ID) + len(t.ContextID) + len(t.Metadata))
	if t.Status.Message != nil {
		n += messageSize(t.Status.Message)
	}
	for i := range t.Artifacts {
		a := &t.Artifacts[i]
		n += 128 + int64(len(a.ArtifactID)+len(a.Name)+len(a.Description)+len(a.Metadata))
		n += a.Parts.size()
		for _, e := range a.Extensions {
			n += 16 + int64(len(e))
		}
	}
	return n + historySize(t)
}

func messageSize(m *Message) int64 {
	n := int64(160 + len(m.MessageID) + len(m.ContextID) + len(m.TaskID) + len(m.Metadata))
	n += m.Parts.size()
	for _, e := range m.Extensions {
		n += 16 + int64(len(e))
	}
	for _, e := range m.ReferenceTaskIDs {
		n += 16 + int64(len(e))
	}
	return n
}

// list returns a page of the tasks matching q, newest status first, then
// id descending. Under the lock it counts the matches and keeps the page's
// candidates, those after the cursor, in a heap bounded by the page size
// (one more, to know whether a page follows): O(tasks · log page), where
// collecting and sorting every match cost a listing of a full default
// store some 2.5 ms of CPU (BenchmarkMemoryStoreList).
func (s *store) list(q TaskQuery) (TaskPage, error) {
	var cur PageCursor
	after := q.PageToken != ""
	if after {
		c, err := ParsePageToken(q.PageToken)
		if err != nil {
			return TaskPage{}, err
		}
		cur = c
	}
	size := q.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	h := pageHeap{max: size + 1}
	total := 0
	s.mu.Lock()
	for _, e := range s.tasks {
		if !q.Matches(e.t) {
			continue
		}
		total++
		ms := e.t.Status.Timestamp.UnixMilli()
		if after && !cur.Before(ms, e.t.ID) {
			continue
		}
		h.offer(listed{ms, e.t})
	}
	s.mu.Unlock()
	slices.SortFunc(h.items, func(a, b listed) int { return b.order(a) })
	page := TaskPage{TotalSize: total}
	n := min(size, len(h.items))
	if n > 0 {
		page.Tasks = make([]*Task, n)
		for i := range n {
			page.Tasks[i] = h.items[i].t
		}
	}
	if len(h.items) > size {
		last := h.items[size-1]
		page.NextPageToken = string(AppendPageToken(nil, PageCursor{Millis: last.ms, ID: last.t.ID}))
	}
	return page, nil
}

// listed is a task with its status time in ms, as listings order it.
type listed struct {
	ms int64
	t  *Task
}

// order compares a and b in listing order: -1 when a comes after b
// (older status, or the same ms and a smaller id), 1 when before.
func (a listed) order(b listed) int {
	if c := cmp.Compare(a.ms, b.ms); c != 0 {
		return c
	}
	return strings.Compare(a.t.ID, b.t.ID)
}

// pageHeap keeps the max first tasks in listing order offered to it: a
// min-heap on order, whose root is the last of them.
type pageHeap struct {
	items []listed
	max   int
}

func (h *pageHeap) offer(x listed) {
	if len(h.items) < h.max {
		h.items = append(h.items, x)
		for i := len(h.items) - 1; i > 0; {
			p := (i - 1) / 2
			if h.items[p].order(h.items[i]) <= 0 {
				break
			}
			h.items[p], h.items[i] = h.items[i], h.items[p]
			i = p
		}
		return
	}
	if x.order(h.items[0]) <= 0 {
		return // after every task kept
	}
	h.items[0] = x
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(h.items) && h.items[l].order(h.items[small]) < 0 {
			small = l
		}
		if r := l + 1; r < len(h.items) && h.items[r].order(h.items[small]) < 0 {
			small = r
		}
		if small == i {
			return
		}
		h.items[i], h.items[small] = h.items[small], h.items[i]
		i = small
	}
}
