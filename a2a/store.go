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
)

// store keeps tasks by id, bounded by a count and a byte budget; when a
// new task would pass either, the oldest tasks (by creation) are evicted.
// Updates replace a task without changing its age. Stored *Task values are
// never modified, so readers need no lock once they hold one.
//
// A store is safe for concurrent use: one mutex guards it, held only for
// map and ring operations (no allocation-heavy work inside).
type store struct {
	mu       sync.Mutex
	tasks    map[string]storedTask
	ring     []string // ids by creation; ring[head] is the oldest
	head     int
	n        int // ids in ring, the same as len(tasks)
	bytes    int64
	maxTasks int
	maxBytes int64
}

type storedTask struct {
	t    *Task
	size int64
}

func newStore(maxTasks int, maxBytes int64) *store {
	return &store{
		tasks:    make(map[string]storedTask, min(maxTasks, 1024)),
		ring:     make([]string, maxTasks),
		maxTasks: maxTasks,
		maxBytes: maxBytes,
	}
}

// get returns the task with the given id.
func (s *store) get(id string) (*Task, bool) {
	s.mu.Lock()
	e, ok := s.tasks[id]
	s.mu.Unlock()
	return e.t, ok
}

// put stores t under t.ID: a new task becomes the youngest, evicting the
// oldest ones as needed; an existing one is replaced in place.
func (s *store) put(t *Task) error {
	size := taskSize(t)
	if size > s.maxBytes {
		return ErrTaskTooLarge // it alone would pass the budget
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.tasks[t.ID]; ok {
		s.bytes += size - old.size
		s.tasks[t.ID] = storedTask{t, size}
		s.evict(t.ID)
		return nil
	}
	if s.n == s.maxTasks {
		s.dropOldest()
	}
	s.ring[(s.head+s.n)%s.maxTasks] = t.ID
	s.n++
	s.tasks[t.ID] = storedTask{t, size}
	s.bytes += size
	s.evict(t.ID)
	return nil
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
	if size > s.maxBytes {
		// The task alone would pass the budget, and the task being
		// changed is never evicted: refused, the task unchanged.
		releaseHistory(t, old.t)
		return old.t, true, ErrTaskTooLarge
	}
	s.bytes += size - old.size
	s.tasks[id] = storedTask{t, size}
	s.evict(id)
	return t, true, nil
}

// evict drops the oldest tasks while the byte budget is passed, but never
// keep, the task just stored: a task larger than the whole budget is kept
// alone, and when keep is itself the oldest it is moved to the young end
// (so an update under budget pressure renews a task's age).
func (s *store) evict(keep string) {
	for s.bytes > s.maxBytes && s.n > 0 {
		if s.ring[s.head] == keep {
			if len(s.tasks) == 1 {
				return
			}
			// keep is the oldest: skip over it by moving it to the young end.
			s.ring[s.head] = ""
			s.head = (s.head + 1) % s.maxTasks
			s.ring[(s.head+s.n-1)%s.maxTasks] = keep
			continue
		}
		s.dropOldest()
	}
}

// dropOldest removes the oldest id from the ring and its task, if still
// stored.
func (s *store) dropOldest() {
	id := s.ring[s.head]
	s.ring[s.head] = ""
	s.head = (s.head + 1) % s.maxTasks
	s.n--
	if e, ok := s.tasks[id]; ok {
		s.bytes -= e.size
		delete(s.tasks, id)
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
