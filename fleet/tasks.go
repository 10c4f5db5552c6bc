package fleet

import (
	"context"
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
)

// TaskOptions configures a TaskStore.
type TaskOptions struct {
	// TTL is how long a task is kept after its last change. Default 24 h.
	TTL time.Duration
	// MaxTasks bounds the tasks kept, fleet-wide: past it the oldest (by
	// creation) are evicted. Default 100,000.
	MaxTasks int
	// MaxTaskBytes bounds one task's encoded size: a change past it is
	// refused (a2a.ErrTaskTooLarge) and the task is unchanged. Default
	// 1 MiB.
	MaxTaskBytes int
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
// past MaxTasks. The layout is taskLua's, in scripts.go.
// Every write is one Lua script. Update is a check-and-set on the
// version, refused by the script when the stored task is final, retried
// on a conflict: so of a cancel and a completion racing on two instances
// exactly one is stored, and every instance then reads that one.
//
// While Redis is unreachable every method fails at once (no call is
// tried until the Fleet's probe finds Redis again) with an error wrapping
// a2a.ErrStoreUnavailable, which the a2a server answers 503 / -32603
// with Retry-After.
//
// ListTasks reads the one index that holds exactly its matches (every
// ListTasks with authorization on names its caller as the owner): its
// total is a ZCOUNT and its page a range read, O(page + log n) whatever
// the scope's size or filter. Tasks stored by a release without the
// state indexes are missing from listings with a status filter, or with
// both a context and an owner, until their next change (see the package
// documentation).
type TaskStore struct {
	f      *Fleet
	prefix string
	ttl    string // seconds
	maxN   string
	maxB   int
}

var _ a2a.TaskStore = (*TaskStore)(nil)

// TaskStore returns the fleet's A2A task store (set it as
// a2a.Config.Tasks).
func (f *Fleet) TaskStore(o TaskOptions) (*TaskStore, error) {
	if o.TTL < 0 || o.MaxTasks < 0 || o.MaxTaskBytes < 0 {
		return nil, errors.New("fleet: TaskOptions: negative TTL, MaxTasks or MaxTaskBytes")
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
	return &TaskStore{
		f:      f,
		prefix: f.keyPre + "{a2a}:",
		ttl:    strconv.FormatInt(int64(o.TTL/time.Second), 10),
		maxN:   strconv.Itoa(o.MaxTasks),
		maxB:   o.MaxTaskBytes,
	}, nil
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
	if isDown(err) {
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
	n, err := scriptCreate.Exec(cctx, s.f.client, []string{s.prefix + "t:" + t.ID}, []string{
		s.prefix, s.ttl, t.ID, t.ContextID, strconv.Itoa(int(t.Status.State)), millis(t), string(data), s.maxN, t.Owner,
	}).AsInt64()
	if s.f.checkFor(ctx, err) != nil {
		return s.fail(err)
	}
	if n != 1 {
		return fmt.Errorf("fleet: task %s exists", t.ID)
	}
	return nil
}

// Update is the check-and-set of a2a.TaskStore.Update.
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
		if nt.ID != old.ID || nt.ContextID != old.ContextID {
			return nil, errors.New("fleet: Update changed the task's id or context")
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
		ms := q.After.UnixMilli()
		if q.After.Before(time.UnixMilli(ms)) {
			ms-- // a time inside a millisecond: that millisecond matches
		}
		if q.After.After(time.UnixMilli(ms)) {
			ms++
		}
		after = strconv.FormatInt(ms, 10)
	}
	if !s.f.up.Load() {
		return a2a.TaskPage{}, errDownNow
	}
	cctx, cancel := s.f.ctx(ctx)
	defer cancel()
	vals, err := scriptList.Exec(cctx, s.f.client, []string{s.prefix + "all"}, []string{
		s.prefix, s.ttl, q.ContextID, cms, cid, strconv.Itoa(size), strconv.Itoa(int(q.State)), after, q.Owner, strconv.Itoa(pageBytes),
	}).ToArray()
	if s.f.checkFor(ctx, err) != nil {
		return a2a.TaskPage{}, s.fail(err)
	}
	if len(vals) < 2 || (len(vals)-2)%3 != 0 {
		return a2a.TaskPage{}, errors.New("fleet: list script answered a malformed page")
	}
	total, _ := vals[0].ToInt64()
	more, _ := vals[1].ToInt64()
	page := a2a.TaskPage{TotalSize: int(total)}
	var last a2a.PageCursor
	for i := 2; i < len(vals); i += 3 {
		id, _ := vals[i].ToString()
		msv, _ := vals[i+1].ToString()
		data, _ := vals[i+2].ToString()
		t, err := decodeTask([]byte(data))
		if err != nil {
			return a2a.TaskPage{}, fmt.Errorf("fleet: task %s: %w", id, err)
		}
		page.Tasks = append(page.Tasks, t)
		ms, _ := strconv.ParseInt(msv, 10, 64)
		last = a2a.PageCursor{Millis: ms, ID: id}
	}
	if more == 1 && len(page.Tasks) > 0 {
		page.NextPageToken = string(a2a.AppendPageToken(nil, last))
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
