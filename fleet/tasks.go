package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
)

// Defaults of TaskOptions.
const (
	DefaultTaskTTL      = 24 * time.Hour
	DefaultMaxTasks     = 100000
	DefaultMaxTaskBytes = 1 << 20
	// DefaultMaxBytes bounds the task data kept, fleet-wide
	// (TaskOptions.MaxBytes): 1 GiB.
	DefaultMaxBytes = 1 << 30
	// DefaultOwnerShare: an owner keeps at most 1/DefaultOwnerShare of
	// MaxTasks by default (TaskOptions.MaxOwnerTasks).
	DefaultOwnerShare = 10
	// maxCASTries bounds Update's read-modify-write loop under contention;
	// between tries a writer that lost waits a random moment that grows
	// with the tries (up to casBackoff each), so that racing writers stop
	// colliding instead of losing together again.
	maxCASTries = 32
	// pageBytes bounds the stored form of one ListTasks page's tasks (a
	// page holds one task at least, and fewer than its size past this,
	// with a next page token): 100 tasks of 1 MiB in one reply held the
	// instance's one Redis connection past the call timeout and took the
	// fleet down (found by review on 2026-12-05).
	pageBytes  = 4 << 20
	casBackoff = 10 * time.Millisecond
	// reapInterval is how often each instance's reaper forgets expired
	// tasks (up to reapCalls calls of reapPerCall tasks each, while more
	// are due), so that a listing's total counts a task for about this
	// long after it expired.
	reapInterval = time.Second
	reapCalls    = 8
	// maxKeyPart is the longest context id or owner named as is in the
	// names of the index keys; a longer one is named by its digest
	// (keyPart).
	maxKeyPart = 64
)

// TaskOptions configures a TaskStore.
type TaskOptions struct {
	// TTL is how long a task is kept after its last change. Default 24 h.
	TTL time.Duration
	// MaxTasks bounds the tasks kept, fleet-wide: past it the oldest (by
	// creation) are evicted, at most 64 by one create (a larger excess,
	// after MaxTasks was lowered, goes over the next creates). Default
	// 100,000.
	MaxTasks int
	// MaxTaskBytes bounds one task's encoded size: a change past it is
	// refused (a2a.ErrTaskTooLarge) and the task is unchanged. Default
	// 1 MiB.
	MaxTaskBytes int
	// MaxOwnerTasks bounds the tasks of one owner (a2a.Task.Owner: with
	// authorization, one token issuer and subject), fleet-wide: an owner
	// past it that creates a task evicts its own oldest (by creation),
	// never another owner's, so that one client cannot flush the
	// others' tasks out of MaxTasks. At most MaxTasks (which means no
	// share). It costs an owned task one more sorted-set entry (about
	// 135 bytes of Redis), its create 3 more commands and its updates 2.
	// Default MaxTasks / DefaultOwnerShare (10,000), at least 1.
	MaxOwnerTasks int
	// MaxBytes bounds the bytes of task data kept (tasks' JSON, as
	// MaxTaskBytes counts them), fleet-wide: a write that would pass it
	// first forgets expired tasks, then evicts the oldest (by creation),
	// never the task being written, at most 64 with MaxTasks' and the
	// owner's evictions; when that does not make room the write is
	// refused (wrapping a2a.ErrStoreUnavailable: 503 with Retry-After)
	// and the next goes on. Redis spends some 600-900 bytes more a task
	// on its indexes, which MaxTasks bounds.
	// Default DefaultMaxBytes (1 GiB); at least MaxTaskBytes.
	MaxBytes int64
	// MaxOwnerBytes bounds the bytes of task data of one owner,
	// fleet-wide: a write of an owner that would pass it (a create, or an
	// update that grows a task) first evicts its own oldest tasks, never
	// another owner's nor the task being written (and is refused as
	// MaxBytes says when that does not make room), so that one client
	// cannot fill Redis with
	// MaxOwnerTasks tasks of MaxTaskBytes each (10 GiB by default before
	// 2026-12-07). Default MaxBytes / DefaultOwnerShare (~102 MiB), at
	// least MaxTaskBytes; at most MaxBytes.
	MaxOwnerBytes int64
}

// TaskStore is an a2a.TaskStore in Redis, shared by every instance of the
// fleet: a task created through one is read, continued, listed and
// canceled through any other, and outlives the instance that created it.
//
// Layout (one hash tag, {a2a}, so every key of a script is in one slot):
// a hash per task (d: the task's JSON, s: state, c: context, v: version,
// u: status time in ms, o: owner) with EXPIRE TTL renewed by each change;
// for ListTasks, sorted sets scored by status time: one for all tasks,
// one per context, one per owner (a2a.Task.Owner) and one per owner in a
// context, and each of these again per state (a change of state moves
// the task between them); a sorted set by creation, to evict the oldest
// past MaxTasks; and a sorted set by the time each task's hash expires,
// with a hash of each task's context, owner and state, from which the
// scripts and a reaper forget expired tasks in every index; and per
// owner a sorted set of its tasks by creation, whose oldest go past
// MaxOwnerTasks. A context id or owner over 64 bytes is named in the
// keys by its SHA-256. The layout is taskLua's, in scripts.go.
// Every write is one Lua script. Update is a check-and-set on the
// version, refused by the script when the stored task is final, retried
// on a conflict: so of a cancel and a completion racing on two instances
// exactly one is stored, and every instance then reads that one.
//
// While Redis is unreachable every method fails at once (no call is
// tried until the Fleet's probe finds Redis again) with an error wrapping
// a2a.ErrStoreUnavailable, which the a2a server answers 503 / -32603
// with Retry-After; so does a write that a reachable Redis refuses
// (READONLY, OOM, MISCONF, NOREPLICAS: refusesWrites).
//
// ListTasks reads the one index that holds exactly its matches (every
// ListTasks with authorization on names its caller as the owner): its
// total is a ZCOUNT and its page a range read, O(page + log n) whatever
// the scope's size or filter, plus at most 256 entries of tasks that
// expired and are not yet forgotten (past those the page ends early, with
// a next page token). The indexes are in milliseconds: with an After
// inside a millisecond, the page leaves out that millisecond's tasks
// before it, but the total counts them. Tasks stored by a release
// without the state indexes are missing from listings with a status
// filter, or with both a context and an owner, until their next change
// (see the package documentation).
//
// Each TaskStore runs a reaper, until the Fleet is closed: every second,
// while Redis is up, it forgets the tasks whose TTL passed (from every
// index), and adds tasks of an older release to the expiry index.
type TaskStore struct {
	f      *Fleet
	prefix string
	ttl    string // seconds
	maxN   string
	maxO   string
	maxB   int
	maxT   string // MaxBytes
	maxOB  string // MaxOwnerBytes
}

var _ a2a.TaskStore = (*TaskStore)(nil)

// TaskStore returns the fleet's A2A task store (set it as
// a2a.Config.Tasks).
func (f *Fleet) TaskStore(o TaskOptions) (*TaskStore, error) {
	if o.TTL < 0 || o.MaxTasks < 0 || o.MaxTaskBytes < 0 || o.MaxOwnerTasks < 0 || o.MaxBytes < 0 || o.MaxOwnerBytes < 0 {
		return nil, errors.New("fleet: TaskOptions: negative TTL, MaxTasks, MaxTaskBytes, MaxOwnerTasks, MaxBytes or MaxOwnerBytes")
	}
	if o.TTL == 0 {
		o.TTL = DefaultTaskTTL
	}
	if o.TTL < time.Second {
		return nil, errors.New("fleet: TaskOptions.TTL below one second")
	}
	if o.MaxTasks == 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.MaxTaskBytes == 0 {
		o.MaxTaskBytes = DefaultMaxTaskBytes
	}
	if o.MaxOwnerTasks == 0 {
		o.MaxOwnerTasks = max(1, o.MaxTasks/DefaultOwnerShare)
	}
	if o.MaxOwnerTasks > o.MaxTasks {
		return nil, fmt.Errorf("fleet: TaskOptions.MaxOwnerTasks %d is above MaxTasks %d", o.MaxOwnerTasks, o.MaxTasks)
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = max(DefaultMaxBytes, int64(o.MaxTaskBytes))
	}
	if o.MaxOwnerBytes == 0 {
		o.MaxOwnerBytes = max(int64(o.MaxTaskBytes), o.MaxBytes/DefaultOwnerShare)
	}
	switch {
	case o.MaxBytes < int64(o.MaxTaskBytes):
		return nil, fmt.Errorf("fleet: TaskOptions.MaxBytes %d is below MaxTaskBytes %d: no task could be kept", o.MaxBytes, o.MaxTaskBytes)
	case o.MaxOwnerBytes < int64(o.MaxTaskBytes):
		return nil, fmt.Errorf("fleet: TaskOptions.MaxOwnerBytes %d is below MaxTaskBytes %d: an owner's task could not be kept", o.MaxOwnerBytes, o.MaxTaskBytes)
	case o.MaxOwnerBytes > o.MaxBytes:
		return nil, fmt.Errorf("fleet: TaskOptions.MaxOwnerBytes %d is above MaxBytes %d", o.MaxOwnerBytes, o.MaxBytes)
	}
	s := &TaskStore{
		f:      f,
		prefix: f.keyPre + "{a2a}:",
		ttl:    strconv.FormatInt(int64(o.TTL/time.Second), 10),
		maxN:   strconv.Itoa(o.MaxTasks),
		maxO:   strconv.Itoa(o.MaxOwnerTasks),
		maxB:   o.MaxTaskBytes,
		maxT:   strconv.FormatInt(o.MaxBytes, 10),
		maxOB:  strconv.FormatInt(o.MaxOwnerBytes, 10),
	}
	select {
	case <-f.closed:
	default:
		f.wg.Add(1)
		go s.reaper()
	}
	return s, nil
}

// reaper forgets expired tasks every reapInterval while Redis is up (a
// call at a time, while more are due, at most reapCalls), and walks age
// for tasks of an older release, until the Fleet is closed.
func (s *TaskStore) reaper() {
	defer s.f.wg.Done()
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	var sweep int64
	for {
		select {
		case <-s.f.closed:
			return
		case <-t.C:
		}
		for range reapCalls {
			if !s.f.up.Load() {
				break
			}
			more, next, err := s.reap(sweep)
			if err != nil {
				break
			}
			sweep = next
			if !more {
				break
			}
		}
	}
}

// reap runs one reaper call: more reports whether more tasks may be due;
// next is the rank of age to sweep from next time.
func (s *TaskStore) reap(sweep int64) (more bool, next int64, err error) {
	cctx, cancel := s.f.ctx(context.Background())
	defer cancel()
	vals, err := scriptReap.Exec(cctx, s.f.client, []string{s.prefix + "exp"}, []string{
		s.prefix, s.ttl, strconv.Itoa(reapPerCall), strconv.FormatInt(sweep, 10), strconv.Itoa(sweepPerCall),
	}).AsIntSlice()
	if s.f.check(err) != nil {
		return false, 0, err
	}
	if len(vals) != 2 {
		return false, 0, errors.New("fleet: reap script answered " + strconv.Itoa(len(vals)) + " values")
	}
	return vals[0] == 1, vals[1], nil
}

// keyPart is the form of a context id or owner in the names of the
// index keys (and in the task's hash): itself up to maxKeyPart bytes,
// else "#" and its SHA-256 in hex, 65 bytes, which no name kept as is
// can equal (found by review on 2026-12-06: a client-chosen context id
// of 256 KiB was copied into the hash and into four key names, some six
// times MaxTaskBytes of Redis memory for one task).
func keyPart(s string) string {
	if len(s) <= maxKeyPart {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "#" + hex.EncodeToString(sum[:])
}

// errUnavailable wraps a2a.ErrStoreUnavailable with the cause.
type errUnavailable struct{ cause error }

func (e errUnavailable) Error() string {
	return "fleet: task store unavailable: " + e.cause.Error()
}
func (e errUnavailable) Unwrap() []error { return []error{a2a.ErrStoreUnavailable, e.cause} }

var errDownNow = errUnavailable{errors.New("redis is down")}

// fail turns a Redis error into the store's error.
func (s *TaskStore) fail(err error) error {
	if isDown(err) || refusesWrites(err) {
		return errUnavailable{err}
	}
	return fmt.Errorf("fleet: task store: %w", err)
}

// Get returns the task with the given id.
func (s *TaskStore) Get(ctx context.Context, id string) (*a2a.Task, error) {
	t, _, err := s.get(ctx, id)
	return t, err
}

// Exists reports whether the store holds the task, without reading it
// (a2a.TaskExister: a stream asks at each keep-alive).
func (s *TaskStore) Exists(ctx context.Context, id string) (bool, error) {
	if !s.f.up.Load() {
		return false, errDownNow
	}
	cctx, cancel := s.f.ctx(ctx)
	defer cancel()
	c := s.f.client
	n, err := c.Do(cctx, c.B().Exists().Key(s.prefix+"t:"+id).Build()).AsInt64()
	if s.f.checkFor(ctx, err) != nil {
		return false, s.fail(err)
	}
	return n == 1, nil
}

func (s *TaskStore) get(ctx context.Context, id string) (*a2a.Task, string, error) {
	if !s.f.up.Load() {
		return nil, "", errDownNow
	}
	cctx, cancel := s.f.ctx(ctx)
	defer cancel()
	c := s.f.client
	vals, err := c.Do(cctx, c.B().Hmget().Key(s.prefix+"t:"+id).Field("d", "v").Build()).ToArray()
	if s.f.checkFor(ctx, err) != nil {
		return nil, "", s.fail(err)
	}
	if len(vals) != 2 || vals[0].IsNil() {
		return nil, "", a2a.ErrTaskNotFound
	}
	data, err := vals[0].ToString()
	if err != nil {
		return nil, "", s.fail(err)
	}
	ver, _ := vals[1].ToString()
	t, err := decodeTask([]byte(data))
	if err != nil {
		return nil, "", fmt.Errorf("fleet: task %s: %w", id, err)
	}
	return t, ver, nil
}

// Create stores a new task.
func (s *TaskStore) Create(ctx context.Context, t *a2a.Task) error {
	data, err := encodeTask(t)
	if err != nil {
		return err
	}
	if len(data) > s.maxB {
		return a2a.ErrTaskTooLarge
	}
	if !s.f.up.Load() {
		return errDownNow
	}
	cctx, cancel := s.f.ctx(ctx)
	defer cancel()
	n, err := scriptCreate.Exec(cctx, s.f.client, []string{s.prefix + "t:" + t.ID}, s.createArgs(t, data)).AsInt64()
	if s.f.checkFor(ctx, err) != nil {
		return s.fail(err)
	}
	switch n {
	case 1:
		return nil
	case -3:
		return errNoRoom
	}
	return fmt.Errorf("fleet: task %s exists", t.ID)
}

// errNoRoom is a write refused because the evictions one write may make
// (evictPerCreate) did not make room for its bytes under MaxBytes or
// MaxOwnerBytes: the next write goes on evicting, so the client is told
// to retry (503 with Retry-After).
var errNoRoom = fmt.Errorf("fleet: the task store is making room for the task's bytes (%d evictions a write): retry: %w", evictPerCreate, a2a.ErrStoreUnavailable)

// createArgs are scriptCreate's arguments for t, encoded as data.
func (s *TaskStore) createArgs(t *a2a.Task, data []byte) []string {
	return []string{s.prefix, s.ttl, t.ID, keyPart(t.ContextID), strconv.Itoa(int(t.Status.State)), millis(t), string(data), s.maxN,
		keyPart(t.Owner), strconv.Itoa(evictPerCreate), strconv.Itoa(reapPerWrite), s.maxO, s.maxT, s.maxOB}
}

// Update is the check-and-set of a2a.TaskStore.Update. f may not change
// the task's ID, ContextID or Owner (an error): the indexes that list a
// task follow its context and owner, which stay as created.
func (s *TaskStore) Update(ctx context.Context, id string, f func(*a2a.Task) (*a2a.Task, error)) (*a2a.Task, error) {
	for try := range maxCASTries {
		if try > 0 {
			wait := min(time.Duration(try)*200*time.Microsecond, casBackoff)
			select {
			case <-time.After(rand.N(wait)):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		old, ver, err := s.get(ctx, id)
		if err != nil {
			return nil, err
		}
		nt, err := f(old)
		if err != nil {
			return nil, err
		}
		if old.Status.State.Final() {
			return nil, a2a.ErrTaskFinal
		}
		if nt.ID != old.ID || nt.ContextID != old.ContextID || nt.Owner != old.Owner {
			// (An owner changed in the JSON only left the task listed
			// to its former owner: found by review on 2026-12-06.)
			return nil, errors.New("fleet: Update changed the task's id, context or owner")
		}
		data, err := encodeTask(nt)
		if err != nil {
			return nil, err
		}
		if len(data) > s.maxB {
			return nil, a2a.ErrTaskTooLarge
		}
		cctx, cancel := s.f.ctx(ctx)
		r, err := scriptUpdate.Exec(cctx, s.f.client, []string{s.prefix + "t:" + id}, []string{
			s.prefix, s.ttl, id, ver, strconv.Itoa(int(nt.Status.State)), millis(nt), string(data),
			keyPart(nt.ContextID), keyPart(nt.Owner), strconv.Itoa(reapPerWrite), s.maxT, s.maxOB, strconv.Itoa(evictPerCreate),
		}).AsInt64()
		cancel()
		if s.f.checkFor(ctx, err) != nil {
			return nil, s.fail(err)
		}
		switch r {
		case 1:
			return nt, nil
		case -1:
			return nil, a2a.ErrTaskNotFound
		case -3:
			return nil, errNoRoom
		case -2, 0:
			// Changed meanwhile (to a final state, or not): read again,
			// so that f sees the task that won and says why it refuses.
			continue
		}
		return nil, fmt.Errorf("fleet: update script answered %d", r)
	}
	// Busy, not broken: the client is told to retry (503 with
	// Retry-After), as when the store cannot be reached.
	return nil, fmt.Errorf("fleet: task %s: %d conflicting updates in a row: %w", id, maxCASTries, a2a.ErrStoreUnavailable)
}

// List returns one page of the tasks matching q.
func (s *TaskStore) List(ctx context.Context, q a2a.TaskQuery) (a2a.TaskPage, error) {
	var cms, cid string
	if q.PageToken != "" {
		c, err := a2a.ParsePageToken(q.PageToken)
		if err != nil {
			return a2a.TaskPage{}, err
		}
		cms, cid = strconv.FormatInt(c.Millis, 10), c.ID
	}
	size := q.PageSize
	if size <= 0 {
		size = a2a.DefaultPageSize
	}
	after := "-inf"
	if !q.After.IsZero() {
		// The index scores are milliseconds: a time inside one reads
		// from that millisecond (UnixMilli rounds down), and its tasks
		// before the time are left out of the page below (found by
		// review on 2026-12-06: it was rounded up, leaving out the
		// tasks after it in the same millisecond).
		after = strconv.FormatInt(q.After.UnixMilli(), 10)
	}
	if !s.f.up.Load() {
		return a2a.TaskPage{}, errDownNow
	}
	cctx, cancel := s.f.ctx(ctx)
	defer cancel()
	vals, err := scriptList.Exec(cctx, s.f.client, []string{s.prefix + "all"}, []string{
		s.prefix, s.ttl, keyPart(q.ContextID), cms, cid, strconv.Itoa(size), strconv.Itoa(int(q.State)), after, keyPart(q.Owner),
		strconv.Itoa(pageBytes), strconv.Itoa(listSkip), strconv.Itoa(reapPerList),
	}).ToArray()
	if s.f.checkFor(ctx, err) != nil {
		return a2a.TaskPage{}, s.fail(err)
	}
	if len(vals) < 4 || (len(vals)-4)%3 != 0 {
		return a2a.TaskPage{}, errors.New("fleet: list script answered a malformed page")
	}
	total, _ := vals[0].ToInt64()
	more, _ := vals[1].ToInt64()
	page := a2a.TaskPage{TotalSize: int(total)}
	for i := 4; i < len(vals); i += 3 {
		id, _ := vals[i].ToString()
		data, _ := vals[i+2].ToString()
		t, err := decodeTask([]byte(data))
		if err != nil {
			return a2a.TaskPage{}, fmt.Errorf("fleet: task %s: %w", id, err)
		}
		if !q.After.IsZero() && t.Status.Timestamp.Before(q.After) {
			continue // in After's millisecond, before it
		}
		page.Tasks = append(page.Tasks, t)
	}
	if more == 1 {
		// The cursor is the last entry the page took or passed over:
		// a page that passed over many expired tasks may be short, or
		// empty, and still have a next one.
		msv, _ := vals[2].ToString()
		id, _ := vals[3].ToString()
		ms, err := strconv.ParseInt(msv, 10, 64)
		if err != nil || id == "" {
			return a2a.TaskPage{}, errors.New("fleet: list script answered a malformed cursor")
		}
		page.NextPageToken = string(a2a.AppendPageToken(nil, a2a.PageCursor{Millis: ms, ID: id}))
	}
	return page, nil
}

// millis is the task's status time in ms, the score of its index entries.
func millis(t *a2a.Task) string {
	return strconv.FormatInt(t.Status.Timestamp.UnixMilli(), 10)
}

// NOTE: the stored form of a task.
//
// JSON of mirror types whose optional members are omitted when empty, so
// that a task read back equals the one stored (nil stays nil), with the
// status time in Unix nanoseconds (0 for none) and a version member for
// later changes of the form.

type taskJSON struct {
	V         int             `json:"v"`
	ID        string          `json:"id"`
	ContextID string          `json:"ctx"`
	State     a2a.TaskState   `json:"st"`
	StatusMsg *messageJSON    `json:"sm,omitempty"`
	Time      int64           `json:"ts,omitempty"`
	Artifacts []artifactJSON  `json:"ar,omitempty"`
	History   []messageJSON   `json:"hi,omitempty"`
	Metadata  json.RawMessage `json:"md,omitempty"`
	Seq       uint64          `json:"sq,omitempty"`
	Owner     string          `json:"ow,omitempty"`
}

type messageJSON struct {
	MessageID        string          `json:"id,omitempty"`
	ContextID        string          `json:"ctx,omitempty"`
	TaskID           string          `json:"task,omitempty"`
	Role             a2a.Role        `json:"role,omitempty"`
	Parts            []partJSON      `json:"parts,omitempty"`
	Metadata         json.RawMessage `json:"md,omitempty"`
	Extensions       []string        `json:"ext,omitempty"`
	ReferenceTaskIDs []string        `json:"refs,omitempty"`
}

type artifactJSON struct {
	ArtifactID  string          `json:"id,omitempty"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"desc,omitempty"`
	Parts       []partJSON      `json:"parts,omitempty"`
	Metadata    json.RawMessage `json:"md,omitempty"`
	Extensions  []string        `json:"ext,omitempty"`
}

type partJSON struct {
	Kind      a2a.PartKind    `json:"k"`
	Text      string          `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	HasRaw    bool            `json:"hr,omitempty"` // Raw is set (even empty)
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Filename  string          `json:"fn,omitempty"`
	MediaType string          `json:"mt,omitempty"`
	Metadata  json.RawMessage `json:"md,omitempty"`
}

func encodeTask(t *a2a.Task) ([]byte, error) {
	j := taskJSON{V: 1, ID: t.ID, ContextID: t.ContextID, State: t.Status.State, Metadata: t.Metadata, Seq: t.Seq, Owner: t.Owner}
	if !t.Status.Timestamp.IsZero() {
		j.Time = t.Status.Timestamp.UnixNano()
	}
	if t.Status.Message != nil {
		m := toMessageJSON(t.Status.Message)
		j.StatusMsg = &m
	}
	for i := range t.Artifacts {
		a := &t.Artifacts[i]
		j.Artifacts = append(j.Artifacts, artifactJSON{a.ArtifactID, a.Name, a.Description, toParts(a.Parts), a.Metadata, a.Extensions})
	}
	for i := range t.History {
		j.History = append(j.History, toMessageJSON(&t.History[i]))
	}
	return json.Marshal(&j)
}

func decodeTask(data []byte) (*a2a.Task, error) {
	var j taskJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	if j.V != 1 {
		return nil, fmt.Errorf("stored form version %d is not known", j.V)
	}
	t := &a2a.Task{ID: j.ID, ContextID: j.ContextID, Status: a2a.TaskStatus{State: j.State}, Metadata: j.Metadata, Seq: j.Seq, Owner: j.Owner}
	if j.Time != 0 {
		t.Status.Timestamp = time.Unix(0, j.Time).UTC()
	}
	if j.StatusMsg != nil {
		m := fromMessageJSON(j.StatusMsg)
		t.Status.Message = &m
	}
	for i := range j.Artifacts {
		a := &j.Artifacts[i]
		t.Artifacts = append(t.Artifacts, a2a.Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
			Parts: fromParts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions})
	}
	for i := range j.History {
		t.History = append(t.History, fromMessageJSON(&j.History[i]))
	}
	return t, nil
}

func toMessageJSON(m *a2a.Message) messageJSON {
	return messageJSON{m.MessageID, m.ContextID, m.TaskID, m.Role, toParts(m.Parts), m.Metadata, m.Extensions, m.ReferenceTaskIDs}
}

func fromMessageJSON(m *messageJSON) a2a.Message {
	return a2a.Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: m.Role,
		Parts: fromParts(m.Parts), Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func toParts(ps a2a.Parts) []partJSON {
	if ps.Len() == 0 {
		return nil
	}
	out := make([]partJSON, 0, ps.Len())
	for _, p := range ps.All() {
		out = append(out, partJSON{p.Kind, p.Text, p.Raw, p.Raw != nil, p.URL, p.Data, p.Filename, p.MediaType, p.Metadata})
	}
	return out
}

func fromParts(ps []partJSON) a2a.Parts {
	if ps == nil {
		return a2a.Parts{}
	}
	out := make([]a2a.Part, len(ps))
	for i, p := range ps {
		out[i] = a2a.Part{Kind: p.Kind, Text: p.Text, Raw: p.Raw, URL: p.URL, Data: p.Data, Filename: p.Filename, MediaType: p.MediaType, Metadata: p.Metadata}
		if p.HasRaw && p.Raw == nil {
			out[i].Raw = []byte{}
		}
	}
	return a2a.PartsOf(out...)
}
