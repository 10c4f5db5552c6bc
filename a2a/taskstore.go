package a2a

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// NOTE: the task store seam.
//
// A Server keeps its tasks in a TaskStore. The default is the bounded
// in-memory store of this package (one process, nothing to run). A store
// shared by several processes (package fleet keeps tasks in Redis) lets a
// task created through one instance be read, continued, listed and
// canceled through any other, and outlive the instance that created it.
// Every change of a task goes through Update, a check-and-set: the store
// applies f to the task as stored and keeps the result only if nobody
// changed the task meanwhile (else it calls f again on the newer task), and
// never replaces a task in a final state. That is what makes a CancelTask
// racing the completion of a task end in exactly one of the two, the same
// for every reader.

// TaskStore keeps a Server's tasks (Config.Tasks). Implementations must be
// safe for concurrent use. A *Task handed to or returned by a store is
// never modified afterwards: stores keep their own copy or an immutable
// one, and callers treat what they get as read-only.
//
// Errors: a store answers ErrTaskNotFound (wrapped or not) for an id it
// does not hold, ErrTaskFinal when Update finds the task final,
// ErrTaskTooLarge for a task past its size bound, ErrBadPageToken for a
// page token it did not issue, and an error wrapping ErrStoreUnavailable
// when its backend cannot be reached: the Server answers that 503 /
// -32603 with Retry-After, and keeps serving everything else.
type TaskStore interface {
	// Get returns the task with the given id.
	Get(ctx context.Context, id string) (*Task, error)
	// Create stores a new task under t.ID (a fresh random id).
	Create(ctx context.Context, t *Task) error
	// Update replaces the task with the given id by f's result,
	// atomically. f gets the task as stored and returns the new one (with
	// the same ID and ContextID) or an error, which Update returns as is
	// with the stored task unchanged. f may be called more than once
	// (when another writer changed the task in between) and must have
	// no side effects. f is called even when the stored task is in a
	// final state (so that it can say why it refuses); if it returns a
	// task then, Update returns ErrTaskFinal: a final state is final.
	Update(ctx context.Context, id string, f func(old *Task) (*Task, error)) (*Task, error)
	// List returns one page of the tasks matching q, ordered by status
	// timestamp, newest first, then by id, descending (A2A's ListTasks
	// order). A page token carries the position of the last task of the
	// page, so pages neither repeat nor skip a task that does not change
	// in between; a task whose status changes while a client pages moves
	// to the front of the order and is not listed again by that client.
	List(ctx context.Context, q TaskQuery) (TaskPage, error)
}

// TaskQuery selects tasks for TaskStore.List (ListTasks' params).
type TaskQuery struct {
	// ContextID, when not "", selects the tasks of that context.
	ContextID string
	// State, when not TaskStateUnspecified, selects tasks in that state.
	State TaskState
	// After, when not zero, selects tasks whose status timestamp is at or
	// after it.
	After time.Time
	// Owner, when not "", selects the tasks of that owner (Task.Owner).
	// The Server sets it to the caller's with Config.Auth.
	Owner string
	// PageSize is the most tasks returned: 1 to MaxPageSize.
	PageSize int
	// PageToken is "" for the first page, else a TaskPage.NextPageToken
	// of the same query.
	PageToken string
}

// TaskPage is one page of TaskStore.List.
type TaskPage struct {
	// Tasks are the page's tasks, in order.
	Tasks []*Task
	// NextPageToken is "" on the last page.
	NextPageToken string
	// TotalSize is the number of tasks matching the query, all pages
	// together.
	TotalSize int
}

// Page sizes of ListTasks.
const (
	// DefaultPageSize is ListTasks' page size when pageSize is absent.
	DefaultPageSize = 50
	// MaxPageSize is the largest pageSize ListTasks accepts.
	MaxPageSize = 100
)

// Errors of a TaskStore, matched with errors.Is.
var (
	// ErrTaskNotFound: no task has the id (never created, evicted or
	// expired). Answered -32001.
	ErrTaskNotFound = errors.New("a2a: task not found")
	// ErrTaskFinal: Update found the task in a final state. Answered
	// -32002 by CancelTask, -32004 by SendMessage.
	ErrTaskFinal = errors.New("a2a: the task is in a final state")
	// ErrTaskTooLarge: the task would pass the store's bound on one
	// task's size. Answered -32602 (the message that would grow it is
	// refused; the task is unchanged).
	ErrTaskTooLarge = errors.New("a2a: the task would pass the store's size bound")
	// ErrBadPageToken: a page token the store did not issue. Answered
	// -32602.
	ErrBadPageToken = errors.New("a2a: invalid page token")
	// ErrStoreUnavailable: the store's backend cannot be reached.
	// Answered 503 / -32603 with Retry-After.
	ErrStoreUnavailable = errors.New("a2a: task store unavailable")
)

// PageCursor is a position in List's order: the status timestamp (in
// milliseconds) and id of the last task of a page. Stores may use it for
// their page tokens (AppendPageToken, ParsePageToken), or a format of
// their own.
type PageCursor struct {
	// Millis is the status timestamp in Unix milliseconds.
	Millis int64
	// ID is the task id.
	ID string
}

// Before reports whether a task with status timestamp ms and id comes
// after the cursor in List's order (newest first, then id descending).
func (c PageCursor) Before(ms int64, id string) bool {
	return ms < c.Millis || (ms == c.Millis && id < c.ID)
}

// AppendPageToken appends the opaque page token of c (unpadded base64url
// of "1:<millis>:<id>") to dst.
func AppendPageToken(dst []byte, c PageCursor) []byte {
	raw := make([]byte, 0, 24+len(c.ID))
	raw = append(raw, "1:"...)
	raw = strconv.AppendInt(raw, c.Millis, 10)
	raw = append(raw, ':')
	raw = append(raw, c.ID...)
	return base64.RawURLEncoding.AppendEncode(dst, raw)
}

// ParsePageToken reads a token of AppendPageToken; the error wraps
// ErrBadPageToken.
func ParsePageToken(tok string) (PageCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) > 512 {
		return PageCursor{}, ErrBadPageToken
	}
	s, ok := strings.CutPrefix(string(raw), "1:")
	if !ok {
		return PageCursor{}, ErrBadPageToken
	}
	ms, id, ok := strings.Cut(s, ":")
	if !ok || id == "" {
		return PageCursor{}, ErrBadPageToken
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return PageCursor{}, ErrBadPageToken
	}
	return PageCursor{Millis: n, ID: id}, nil
}

// Matches reports whether t is selected by q's filters (not its page).
func (q *TaskQuery) Matches(t *Task) bool {
	switch {
	case q.ContextID != "" && t.ContextID != q.ContextID:
		return false
	case q.Owner != "" && t.Owner != q.Owner:
		return false
	case q.State != TaskStateUnspecified && t.Status.State != q.State:
		return false
	case !q.After.IsZero() && t.Status.Timestamp.Before(q.After):
		return false
	}
	return true
}

// MemoryStore is the in-process TaskStore, the default of a Server: tasks
// by id in a map, bounded by a count and a byte budget (the oldest tasks,
// by creation, evicted first) and, when made by NewMemoryStoreWith (as a
// Server's own store is), each owner (Task.Owner) by its share of both:
// an owner at its share that creates or grows a task evicts its own
// oldest, never another owner's. It is safe for concurrent use (one
// mutex, held for map and ring operations, O(1) amortized; List counts a
// query's matches under it and keeps its page's candidates, O(tasks ·
// log page): some 0.2 ms for a full default store). Create it with
// NewMemoryStore or NewMemoryStoreWith.
type MemoryStore struct {
	s *store
}

var _ TaskStore = (*MemoryStore)(nil)

// NewMemoryStore returns a MemoryStore keeping at most maxTasks tasks and
// maxBytes estimated bytes (0 or less means DefaultMaxTasks and
// DefaultMaxTaskBytes), without a share per owner: one owner may fill it
// and so evict every other owner's tasks. A store whose owners are
// authenticated clients (Config.Auth) should be made by
// NewMemoryStoreWith.
func NewMemoryStore(maxTasks int, maxBytes int64) *MemoryStore {
	if maxTasks <= 0 {
		maxTasks = DefaultMaxTasks
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTaskBytes
	}
	return &MemoryStore{s: newStore(maxTasks, maxBytes)}
}

// MemoryStoreOptions are the bounds of a MemoryStore (NewMemoryStoreWith).
// Each left at 0 takes its default; none may be negative.
type MemoryStoreOptions struct {
	// MaxTasks is the most tasks kept; past it the oldest (by creation)
	// is evicted. The ring that orders tasks costs 16 bytes per slot,
	// allocated at once (twice that once an owner's eviction leaves a
	// hole in it). Default DefaultMaxTasks (10,000).
	MaxTasks int
	// MaxTaskBytes is the budget in estimated bytes; past it the oldest
	// tasks are evicted, and a task that alone would pass it is refused
	// (ErrTaskTooLarge). Default DefaultMaxTaskBytes (64 MiB).
	MaxTaskBytes int64
	// MaxOwnerTasks is the most tasks of one owner (Task.Owner, when not
	// ""): an owner at it that creates a task evicts its own oldest (by
	// creation). At most MaxTasks, which means no share. Default
	// MaxTasks / DefaultOwnerShare, at least 1 (1,000).
	MaxOwnerTasks int
	// MaxOwnerTaskBytes is one owner's budget in estimated bytes: past it
	// the owner's own oldest tasks are evicted, and a task of an owner
	// that alone would pass it is refused (ErrTaskTooLarge). At most
	// MaxTaskBytes, which means no share. Default MaxTaskBytes /
	// DefaultOwnerShare (6.4 MiB).
	MaxOwnerTaskBytes int64
}

// NewMemoryStoreWith returns a MemoryStore with the bounds of o, or an
// error naming every bound that is negative or, for an owner's, above
// the store's.
//
// An owner's share bounds what its creates take from the others: at its
// share it evicts only its own tasks, so it displaces at most
// MaxOwnerTasks tasks (MaxOwnerTaskBytes bytes) of other owners, and
// only when the others fill the rest of the store. Owners are the
// issuer and subject of access tokens: a client that gets tokens for
// many subjects gets a share for each. Tasks without an owner are
// bounded by MaxTasks and MaxTaskBytes only.
func NewMemoryStoreWith(o MemoryStoreOptions) (*MemoryStore, error) {
	var errs []error
	if o.MaxTasks < 0 || o.MaxTaskBytes < 0 || o.MaxOwnerTasks < 0 || o.MaxOwnerTaskBytes < 0 {
		errs = append(errs, fmt.Errorf("a2a: MemoryStoreOptions %+v: a bound is negative", o))
	}
	maxTasks := cmp.Or(o.MaxTasks, DefaultMaxTasks)
	maxBytes := cmp.Or(o.MaxTaskBytes, DefaultMaxTaskBytes)
	if o.MaxOwnerTasks > maxTasks {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTasks %d is above MaxTasks %d", o.MaxOwnerTasks, maxTasks))
	}
	if o.MaxOwnerTaskBytes > maxBytes {
		errs = append(errs, fmt.Errorf("a2a: MaxOwnerTaskBytes %d is above MaxTaskBytes %d", o.MaxOwnerTaskBytes, maxBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &MemoryStore{s: newOwnedStore(maxTasks, maxBytes, o.MaxOwnerTasks, o.MaxOwnerTaskBytes)}, nil
}

// Get returns the task with the given id, or ErrTaskNotFound.
func (m *MemoryStore) Get(_ context.Context, id string) (*Task, error) {
	t, ok := m.s.get(id)
	if !ok {
		return nil, ErrTaskNotFound
	}
	return t, nil
}

// Exists reports whether the store holds the task (TaskExister).
func (m *MemoryStore) Exists(_ context.Context, id string) (bool, error) {
	_, ok := m.s.get(id)
	return ok, nil
}

// Create stores t, evicting the oldest tasks past the bounds: its
// owner's own oldest past its share, then the oldest of all. A task
// whose estimated size alone passes the byte budget (or its owner's
// share of it) is refused with ErrTaskTooLarge (and so is an Update that
// would make it so).
func (m *MemoryStore) Create(_ context.Context, t *Task) error {
	return m.s.put(t)
}

// Update applies f under the store's lock.
func (m *MemoryStore) Update(_ context.Context, id string, f func(*Task) (*Task, error)) (*Task, error) {
	t, ok, err := m.s.update(id, func(old *Task) (*Task, error) {
		t, err := f(old)
		if err == nil && old.Status.State.Final() {
			releaseHistory(t, old)
			return nil, ErrTaskFinal
		}
		return t, err
	})
	switch {
	case !ok:
		return nil, ErrTaskNotFound
	case err != nil:
		return nil, err
	}
	return t, nil
}

// List returns a page of the tasks matching q.
func (m *MemoryStore) List(_ context.Context, q TaskQuery) (TaskPage, error) {
	return m.s.list(q)
}

// Len returns the number of tasks stored.
func (m *MemoryStore) Len() int { return m.s.len() }
