package a2a

import (
	"cmp"
	"slices"
	"sort"
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
		return old.t, true, err
	}
	size := taskSize(t)
	if size > s.maxBytes {
		// The task alone would pass the budget, and the task being
		// changed is never evicted: refused, the task unchanged.
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
	for i := range t.History {
		n += messageSize(&t.History[i])
	}
	return n
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
// id descending: the matches are collected and sorted under the lock.
func (s *store) list(q TaskQuery) (TaskPage, error) {
	var cur PageCursor
	if q.PageToken != "" {
		c, err := ParsePageToken(q.PageToken)
		if err != nil {
			return TaskPage{}, err
		}
		cur = c
	}
	s.mu.Lock()
	var match []*Task
	for _, e := range s.tasks {
		if q.Matches(e.t) {
			match = append(match, e.t)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(match, func(a, b *Task) int {
		if c := cmp.Compare(b.Status.Timestamp.UnixMilli(), a.Status.Timestamp.UnixMilli()); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	page := TaskPage{TotalSize: len(match)}
	i := 0
	if q.PageToken != "" {
		i = sort.Search(len(match), func(i int) bool {
			return cur.Before(match[i].Status.Timestamp.UnixMilli(), match[i].ID)
		})
	}
	size := q.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	end := min(i+size, len(match))
	page.Tasks = match[i:end]
	if end < len(match) && end > i {
		last := match[end-1]
		page.NextPageToken = string(AppendPageToken(nil, PageCursor{Millis: last.Status.Timestamp.UnixMilli(), ID: last.ID}))
	}
	return page, nil
}
