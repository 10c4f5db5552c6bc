package mcp

// NOTE: tasks (SEP-2663, the io.modelcontextprotocol/tasks extension of
// MCP 2026-07-28).
//
// A tool registered with Task may go on in the background: its handler
// runs on the request as any tool's does (and may ask for input by
// input_required rounds), and where its long part starts it calls
// Call.StartTask. When the request's clientCapabilities declare the
// extension, StartTask returns ErrRunAsTask, the handler returns it, and
// the call is answered with a CreateTaskResult once the task is in the
// store (a tasks/get right after it finds the task). The handler then runs
// again from the start in the task, on a Call of its own that holds
// copies of the arguments, the answers gathered so far and the client's
// _meta; there StartTask returns nil and the handler goes on.
//
// In the task, Ask works as under 2026-07-28 on a request: an answer the
// task holds is returned; else the request is recorded and ErrInputRequired
// returned, and when the handler returns it the task is input_required,
// its inputRequests on tasks/get. tasks/update delivers answers; once every
// pending request has one, the handler runs again from the start with all
// of them. Cancellation (tasks/cancel, the task's TTL, Server.Close) ends
// the Call's Context, and what the handler returns after that is dropped.
//
// Outcomes: a handler that returns nil completes the task with its result;
// one that fails as a tool (any other error, or SetError) completes it with
// isError, as SEP-2663 asks; a *fastserver.Error, a panic, or a result that
// breaks the output schema fails it, with the JSON-RPC error inlined.
//
// The store is in memory, one per Server, bounded in tasks and bytes
// (TaskOptions); a task belongs to the token holder that created it
// (WithAuth): to another one it does not exist. Behind a balancer the
// tasks/* requests of a task must reach the instance that holds it: their
// Mcp-Name header carries the task id, and TaskOptions.IDPrefix lets the
// id name the instance.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// ExtensionTasks is the identifier of MCP's tasks extension (SEP-2663), the
// key under capabilities.extensions that a server advertises and a client
// declares.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// TaskSupport says whether a tool's calls may go on as tasks (SEP-2663).
type TaskSupport uint8

const (
	// TaskNone (the default): every call is answered on its request.
	TaskNone TaskSupport = iota
	// TaskOptional: the handler may move its call into a task
	// (Call.StartTask) when the request's client declares the tasks
	// extension; for a client that does not, StartTask returns nil and the
	// handler runs to its end on the request.
	TaskOptional
	// TaskRequired: only a client that declares the tasks extension may
	// call the tool; another's call is refused with 400 / -32021 (data
	// {"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})
	// before the handler runs, and so is every call under 2025-xx, which has
	// no tasks.
	TaskRequired
)

// String returns "none", "optional" or "required".
func (t TaskSupport) String() string {
	switch t {
	case TaskNone:
		return "none"
	case TaskOptional:
		return "optional"
	case TaskRequired:
		return "required"
	}
	return "TaskSupport(" + strconv.Itoa(int(t)) + ")"
}

// ErrRunAsTask is returned by Call.StartTask when the call is to go on as
// a task: the handler returns it (or an error wrapping it) at once, the
// call is answered with a CreateTaskResult, and the handler runs again,
// from the start, in the task.
var ErrRunAsTask = errors.New("mcp: the call goes on as a task")

// TaskOptions configures the task store (WithTasks). Zero fields take
// their defaults.
type TaskOptions struct {
	// TTL is how long a task is kept after its creation (its ttlMs),
	// rounded up to a whole millisecond: tasks/get finds it for that long
	// (unless, finished, it was dropped to make room: MaxTasks, MaxBytes),
	// and a task still running then is cancelled and forgotten. Default 1
	// hour; at most a year.
	TTL time.Duration
	// PollInterval is the pollIntervalMs advised to clients, rounded
	// up to a whole millisecond. Default 1 second; at most a year.
	PollInterval time.Duration
	// MaxTasks bounds the tasks kept at once, running or finished. When
	// the store is full, the oldest finished task is dropped before its
	// TTL; when none has finished, a call that would start a task is
	// refused with 503 / -32603 and Retry-After: 1. Default 1,000.
	MaxTasks int
	// MaxBytes bounds the bytes the tasks keep: arguments, the client's
	// _meta, answers, pending requests, the handler's state, the
	// statusMessage, the result or error, and 256 bytes a task. It is
	// enforced as MaxTasks is (oldest finished tasks dropped first, never
	// one still running): a call whose task does not fit even then is
	// refused (503, or 429 at a holder's share), a task whose answers,
	// requests or result do not fit fails with -32603, and a statusMessage
	// that does not fit is not kept. Default 64 MiB.
	MaxBytes int
	// MaxOwnerTasks and MaxOwnerBytes are one token holder's share of
	// MaxTasks and MaxBytes (under WithAuth; without it every client is
	// one and there are no shares): a holder at its share that starts a
	// task drops its own oldest finished one, never another's, and with
	// none finished is refused with 429 / -32603 (Retry-After: 1), so one
	// client cannot
	// take the store from the others. Default a tenth of each (at least
	// 1); more than the whole means the whole.
	MaxOwnerTasks int
	MaxOwnerBytes int
	// IDPrefix starts every task id, so that a balancer routing
	// tasks/get, tasks/update and tasks/cancel by their Mcp-Name header
	// (the task id) can send them to the instance that holds the task: at
	// most 64 bytes of letters, digits, '-', '_' and '.'. Default none.
	IDPrefix string
}

// maxTaskDuration bounds TaskOptions.TTL and PollInterval.
const maxTaskDuration = 365 * 24 * time.Hour

// Default task options.
const (
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
	DefaultMaxTasks         = 1000
	DefaultMaxTaskBytes     = 64 << 20
)

// WithTasks sets the task store's bounds and the ids' prefix. A server
// keeps tasks, and serves the tasks methods, when a tool is registered with
// Task; without WithTasks its store has the defaults.
func WithTasks(o TaskOptions) Option {
	return func(s *Server) error {
		switch {
		case o.TTL < 0, o.PollInterval < 0, o.MaxTasks < 0, o.MaxBytes < 0, o.MaxOwnerTasks < 0, o.MaxOwnerBytes < 0:
			return errors.New("mcp: TaskOptions fields must not be negative")
		case o.TTL > maxTaskDuration, o.PollInterval > maxTaskDuration:
			// Found by review on 2026-12-07: math.MaxInt64 ("never")
			// overflowed the rounding to whole milliseconds: ttlMs 1.
			return errors.New("mcp: TaskOptions.TTL and PollInterval must not exceed a year")
		case len(o.IDPrefix) > 64:
			return errors.New("mcp: TaskOptions.IDPrefix is longer than 64 bytes")
		}
		for i := 0; i < len(o.IDPrefix); i++ {
			if !idByte(o.IDPrefix[i]) {
				return fmt.Errorf("mcp: TaskOptions.IDPrefix holds %q: only letters, digits, '-', '_' and '.' are allowed", o.IDPrefix[i])
			}
		}
		s.taskOpts = o
		return nil
	}
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// Close cancels every task still running or waiting for input (their
// status becomes cancelled) and makes calls that would start one fail
// with 503 / -32603; it ends every subscriptions/listen stream gracefully
// (its SubscriptionsListenResult) and refuses new ones the same way. It
// returns at once: a handler that ignores its Context runs on, and what
// it returns is dropped. Close is for a server that stops while its
// process goes on; it is safe to call more than once.
func (s *Server) Close() {
	if st := s.tasks; st != nil {
		st.close()
	}
	s.listen.close()
}

// WritePrometheus writes the server's metrics in Prometheus's text
// format, for fastserver.Config.MoreMetrics: the subscriptions/listen
// streams', and the task store's on a server with tasks:
//
//	rpcedge_mcp_listen_streams               gauge, subscriptions/listen streams open
//	rpcedge_mcp_listen_notifications_total   counter, notifications/resources/updated written to them
//	rpcedge_mcp_listen_merged_total          counter, updates merged into one already waiting on a stream
//	rpcedge_mcp_listen_refused_total         counter, streams refused: ListenOptions.Max open, or the server closed
//	rpcedge_mcp_tasks{status}                gauge, tasks kept, by status
//	rpcedge_mcp_task_bytes                   gauge, bytes counted against TaskOptions.MaxBytes
//	rpcedge_mcp_tasks_refused_total{reason}  counter, calls refused a task: "full", "share", "closed"
//
// A scrape walks the task store once under its lock (at most MaxTasks
// tasks).
func (s *Server) WritePrometheus(w io.Writer) {
	s.listen.writePrometheus(w)
	st := s.tasks
	if st == nil {
		return
	}
	var n [len(taskStatusNames)]int
	st.mu.Lock()
	st.sweepLocked(time.Now())
	for t := st.head; t != nil; t = t.next {
		n[t.status]++
	}
	held := st.bytes
	st.mu.Unlock()
	b := []byte(taskMetricsHelp)
	for i, name := range taskStatusNames {
		b = fmt.Appendf(b, "rpcedge_mcp_tasks{status=%q} %d\n", name, n[i])
	}
	b = fmt.Appendf(b, "rpcedge_mcp_task_bytes %d\n", held)
	for i, reason := range refusalReasons {
		b = fmt.Appendf(b, "rpcedge_mcp_tasks_refused_total{reason=%q} %d\n", reason, st.refused[i].Load())
	}
	w.Write(b)
}

const taskMetricsHelp = `# HELP rpcedge_mcp_tasks MCP tasks kept (SEP-2663), by status.
# TYPE rpcedge_mcp_tasks gauge
# HELP rpcedge_mcp_task_bytes Bytes the MCP task store counts against its budget.
# TYPE rpcedge_mcp_task_bytes gauge
# HELP rpcedge_mcp_tasks_refused_total Calls refused a task: the store full of running tasks (full), a token holder at its share (share), the server closing (closed).
# TYPE rpcedge_mcp_tasks_refused_total counter
`

// Why a call was refused a task (taskStore.refused).
const (
	refusedFull = iota
	refusedShare
	refusedClosed
)

var refusalReasons = [...]string{"full", "share", "closed"}

// The task statuses of SEP-2663.
type taskStatus uint8

const (
	taskWorking taskStatus = iota
	taskInputRequired
	taskCompleted
	taskFailed
	taskCancelled
)

var taskStatusNames = [...]string{"working", "input_required", "completed", "failed", "cancelled"}

func (st taskStatus) terminal() bool { return st >= taskCompleted }

// pendingInput is a request to the client a task waits on.
type pendingInput struct {
	key string
	req []byte // {"method":…,"params":…}
}

// task is one task in the store. Every field after the first group is
// guarded by the store's mutex.
type task struct {
	id    string
	owner string // the token holder (taskOwner); "" without WithAuth
	tool  *tool
	v     Version
	args  []byte // the arguments, copied
	meta  []byte // the creating request's params._meta, copied
	ctx   context.Context
	stop  context.CancelFunc

	status     taskStatus
	doomed     bool   // picked to be dropped (roomLocked)
	running    bool   // a handler run is under way (tests wait on it)
	rounds     int    // handler runs started
	message    string // statusMessage (the last Progress message)
	created    time.Time
	updated    time.Time
	answers    []byte // "key":{…},… every answer delivered
	user       []byte // the handler's state (SetState)
	pending    []pendingInput
	result     []byte // completed: the tool's result object
	failure    []byte // failed: the JSON-RPC error object
	size       int    // bytes counted against MaxBytes
	prev, next *task  // creation order
}

// taskStore holds a Server's tasks.
type taskStore struct {
	ttl, poll time.Duration
	maxTasks  int
	maxBytes  int
	prefix    string

	maxOwnerTasks int
	maxOwnerBytes int

	mu         sync.Mutex
	byID       map[string]*task
	owners     map[string]*ownerUse // by task owner; "" (no token) has none
	head, tail *task                // oldest, newest
	bytes      int
	closed     bool
	// gone holds the tasks dropped (expired, or cancelled and then
	// evicted) while their handler still runs, goneBytes their sizes:
	// cancellation is cooperative, so each holds its goroutine and copies
	// until the handler returns, and counts against MaxTasks, MaxBytes
	// and its owner's share until then (found by review on 2026-12-07: a
	// client creating and cancelling tasks ran any number of handlers at
	// once).
	gone      map[*task]struct{}
	goneBytes int

	refused [len(refusalReasons)]atomic.Uint64
}

// ownerUse is what one token holder's tasks take of the store.
type ownerUse struct{ tasks, bytes int }

func newTaskStore(o TaskOptions) *taskStore {
	st := &taskStore{ttl: o.TTL, poll: o.PollInterval, maxTasks: o.MaxTasks, maxBytes: o.MaxBytes,
		prefix: o.IDPrefix, byID: make(map[string]*task), owners: make(map[string]*ownerUse)}
	if st.ttl == 0 {
		st.ttl = DefaultTaskTTL
	}
	// Whole milliseconds, as ttlMs tells clients: never shorter than that
	// (found by review on 2026-12-07: a TTL of 1 µs was advertised as
	// 1 ms and gone at once).
	st.ttl = (st.ttl + time.Millisecond - 1).Truncate(time.Millisecond)
	if st.poll == 0 {
		st.poll = DefaultTaskPollInterval
	}
	if st.maxTasks == 0 {
		st.maxTasks = DefaultMaxTasks
	}
	if st.maxBytes == 0 {
		st.maxBytes = DefaultMaxTaskBytes
	}
	st.maxOwnerTasks, st.maxOwnerBytes = o.MaxOwnerTasks, o.MaxOwnerBytes
	if st.maxOwnerTasks == 0 {
		st.maxOwnerTasks = max(st.maxTasks/10, 1)
	}
	if st.maxOwnerBytes == 0 {
		st.maxOwnerBytes = max(st.maxBytes/10, 1)
	}
	st.maxOwnerTasks = min(st.maxOwnerTasks, st.maxTasks)
	st.maxOwnerBytes = min(st.maxOwnerBytes, st.maxBytes)
	return st
}

// Refusals of the task store.
var (
	errTasksFull      = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "server busy: the task store is full", RetryAfter: 1}
	errTasksClosed    = &fastserver.Error{Status: 503, Code: decode.CodeInternalError, Message: "server closing: no new tasks"}
	errTasksOwnerFull = &fastserver.Error{Status: 429, Code: decode.CodeInternalError, Message: "too many tasks: this client's share of the task store is taken by tasks still running", RetryAfter: 1}
	errTaskIDMissing  = fastserver.InvalidParams("taskId", "params.taskId is required and must be a string")
	errTaskIDTwice    = fastserver.InvalidParams("taskId", "params.taskId is given twice")
	errTaskInputs     = fastserver.InvalidParams("inputResponses", "params.inputResponses is required and must be an object whose values are objects")
	errNoTaskSupport  = errors.New("mcp: StartTask needs a tool registered with Task (TaskOptional or TaskRequired)")
	errTaskTooLarge   = []byte(`{"code":-32603,"message":"the task's data exceeds the task store's byte budget"}`)
	errTaskPanicked   = []byte(`{"code":-32603,"message":"internal error: the tool panicked"}`)
)

// errTasksMissing refuses a tasks request, or a call of a TaskRequired
// tool, from a client that does not declare the extension: 400 / -32021.
var errTasksMissing = &fastserver.Error{Status: 400, Code: CodeMissingCapability,
	Message: "the request needs the client capability extensions." + ExtensionTasks + ", which it does not declare",
	Data:    []byte(`{"requiredCapabilities":{"extensions":{"` + ExtensionTasks + `":{}}}}`)}

// unknownTask answers a task id the store does not hold for the caller:
// -32602, as SEP-2663 asks.
func unknownTask(id []byte) *fastserver.Error {
	return fastserver.InvalidParams("taskId", "unknown task: "+clip(string(decode.AppendUnquoted(nil, id))))
}

// newID returns a task id: the prefix and 128 random bits, base64url.
func (st *taskStore) newID() string { return st.prefix + randomID() }

// sweepLocked drops the tasks whose TTL has passed, oldest first
// (creation order is expiry order: one TTL for all).
func (st *taskStore) sweepLocked(now time.Time) {
	for t := st.head; t != nil && !now.Before(t.created.Add(st.ttl)); t = st.head {
		st.dropLocked(t)
	}
}

// dropLocked removes t from the store, cancelling it when it runs; a
// running one stays counted (gone) until its handler returns.
func (st *taskStore) dropLocked(t *task) {
	if !t.status.terminal() {
		t.status = taskCancelled
	}
	t.stop()
	delete(st.byID, t.id)
	if t.running {
		if st.gone == nil {
			st.gone = make(map[*task]struct{})
		}
		st.gone[t] = struct{}{}
		st.goneBytes += t.size
	} else {
		st.releaseOwnerLocked(t)
	}
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		st.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		st.tail = t.prev
	}
	t.prev, t.next = nil, nil
	st.bytes -= t.size
}

// releaseOwnerLocked takes t out of its owner's use.
func (st *taskStore) releaseOwnerLocked(t *task) {
	if u := st.owners[t.owner]; u != nil {
		if u.tasks--; u.tasks == 0 {
			delete(st.owners, t.owner)
		} else {
			u.bytes -= t.size
		}
	}
}

// roomLocked makes room for n more tasks and extra more bytes of owner
// ("": none) by dropping finished tasks other than keep, oldest first:
// the owner's own while it is past its share, then any while the store is
// past its bounds. When that cannot make the room it drops nothing and
// returns the refusal (found by review on 2026-12-07: it dropped finished
// tasks one by one before finding out, so one answer larger than the
// store cleared every other client's results, and failed all the same).
func (st *taskStore) roomLocked(owner string, n, extra int, keep *task) *fastserver.Error {
	var victims []*task
	defer func() {
		for _, v := range victims {
			v.doomed = false
		}
	}()
	pick := func(mine bool, over func(tasks, bytes int) bool, tasks, bytes int) bool {
		for t := st.head; over(tasks, bytes); t = t.next {
			for t != nil && (t.doomed || t == keep || !t.status.terminal() || t.running || mine && t.owner != owner) {
				t = t.next
			}
			if t == nil {
				return false
			}
			t.doomed = true
			victims = append(victims, t)
			tasks, bytes = tasks-1, bytes-t.size
		}
		return true
	}
	if u := st.owners[owner]; owner != "" {
		ut, ub := 0, 0
		if u != nil {
			ut, ub = u.tasks, u.bytes
		}
		if !pick(true, func(tasks, bytes int) bool {
			return tasks+n > st.maxOwnerTasks || bytes+extra > st.maxOwnerBytes
		}, ut, ub) {
			return errTasksOwnerFull
		}
	}
	tasks, bytes := len(st.byID)+len(st.gone), st.bytes+st.goneBytes
	for _, v := range victims {
		tasks, bytes = tasks-1, bytes-v.size
	}
	if !pick(false, func(tasks, bytes int) bool {
		return tasks+n > st.maxTasks || bytes+extra > st.maxBytes
	}, tasks, bytes) {
		return errTasksFull
	}
	for _, v := range victims {
		st.dropLocked(v)
	}
	return nil
}

// sizeOf is what t counts against the byte bounds.
func sizeOf(t *task) int {
	n := len(t.args) + len(t.meta) + len(t.answers) + len(t.user) + len(t.result) + len(t.message) + 256
	if !shared(t.failure) { // the store's own errors are shared, not held
		n += len(t.failure)
	}
	for _, p := range t.pending {
		n += len(p.key) + len(p.req)
	}
	return n
}

// shared reports whether failure is one of the store's own error objects.
func shared(failure []byte) bool {
	return len(failure) > 0 && (&failure[0] == &errTaskTooLarge[0] || &failure[0] == &errTaskPanicked[0])
}

// resizeLocked sets t's counted size to the bytes it keeps now; it
// reports false, leaving the size, when the bounds cannot take them after
// dropping older finished tasks.
func (st *taskStore) resizeLocked(t *task) bool {
	n := sizeOf(t)
	if n > t.size && st.roomLocked(t.owner, 0, n-t.size, t) != nil {
		return false
	}
	st.setSizeLocked(t, n)
	return true
}

// setSizeLocked counts n bytes for t, whatever the bounds.
func (st *taskStore) setSizeLocked(t *task, n int) {
	st.bytes += n - t.size
	if u := st.owners[t.owner]; u != nil {
		u.bytes += n - t.size
	}
	t.size = n
}

// failTooLarge fails t for want of bytes: what it held for later rounds
// and its outcome are let go (its error is the store's own, shared), so
// its size only shrinks.
func (st *taskStore) failTooLarge(t *task) {
	t.status, t.failure = taskFailed, errTaskTooLarge
	t.result, t.pending, t.answers, t.user, t.message = nil, nil, nil, nil, ""
	t.stop()
	st.setSizeLocked(t, sizeOf(t))
}

// linkLocked adds t to the store, its size not counted yet
// (setSizeLocked counts it).
func (st *taskStore) linkLocked(t *task) {
	st.byID[t.id] = t
	t.prev = st.tail
	if st.tail != nil {
		st.tail.next = t
	} else {
		st.head = t
	}
	st.tail = t
	if t.owner != "" {
		u := st.owners[t.owner]
		if u == nil {
			u = new(ownerUse)
			st.owners[t.owner] = u
		}
		u.tasks++
	}
}

func (st *taskStore) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	now := time.Now()
	for t := st.head; t != nil; t = t.next {
		if !t.status.terminal() {
			t.status, t.updated = taskCancelled, now
			t.pending, t.answers, t.user, t.message = nil, nil, nil, ""
			st.setSizeLocked(t, sizeOf(t))
		}
		t.stop()
	}
}

// taskOwner names the token holder a task belongs to: "" without a token.
func taskOwner(tok *auth.Token) string {
	if tok == nil {
		return ""
	}
	return holderHash(tok)
}

// clientTakesTasks reports whether params._meta (meta) declares the tasks
// extension in its clientCapabilities.
func clientTakesTasks(meta []byte) bool {
	if kindOf(meta) != kindObject {
		return false
	}
	caps, _ := decode.Lookup(meta, metaCapabilitiesKey)
	if kindOf(caps) != kindObject {
		return false
	}
	ext, _ := decode.Lookup(caps, "extensions")
	if kindOf(ext) != kindObject {
		return false
	}
	v, n := decode.Lookup(ext, ExtensionTasks)
	return n >= 1 && kindOf(v) == kindObject
}

// StartTask moves the rest of the call into a task (SEP-2663), for a tool
// registered with Task. When the request's client declares the tasks
// extension (MCP 2026-07-28), it returns ErrRunAsTask: the handler
// returns it at once, the client is answered with a CreateTaskResult, and
// the handler runs again from the start in the task, where StartTask
// returns nil. Whatever the handler did before StartTask therefore runs
// twice, as it does across input_required rounds: asks for input (whose
// answers the task keeps) and checks belong there, the long work after it.
// For a client that does not declare the extension (and under 2025-xx),
// StartTask returns nil and the call goes on on its request (a TaskRequired
// tool never gets there: such calls are refused before the handler). It
// returns an error for a tool registered without Task.
//
// In a task the Call has no Request (nil); its Context ends when the task
// is cancelled (tasks/cancel, its TTL, Server.Close); Progress sets the
// task's statusMessage and sends nothing; Log sends nothing. Results are
// built as on a request, and kept for tasks/get.
func (c *Call) StartTask() error {
	switch {
	case c.task != nil:
		return nil
	case c.tool == nil || c.tool.Task == TaskNone:
		return errNoTaskSupport
	case !c.v.Stateless() || c.srv.tasks == nil || !clientTakesTasks(c.meta):
		return nil
	}
	c.startTask = true
	return ErrRunAsTask
}

// InTask reports whether the call runs in a task (after StartTask).
func (c *Call) InTask() bool { return c.task != nil }

// TaskID returns the id of the task the call runs in (the client's
// taskId, for logs and correlation), or "" outside a task.
func (c *Call) TaskID() string {
	if c.task == nil {
		return ""
	}
	return c.task.id
}

// createTask puts a task for the call c (whose handler returned
// ErrRunAsTask) in the store, starts it and appends its CreateTaskResult
// to dst.
func (c *Call) createTask(dst []byte) ([]byte, error) {
	if err := c.Context().Err(); err != nil {
		// The request ended while the part before StartTask ran (its
		// client cancelled it, or left under 2026-07-28, or its deadline
		// passed): no task, which nobody could name (found by review on
		// 2026-12-07: it was stored and run, holding a place for its TTL).
		return dst, err
	}
	s := c.srv
	st := s.tasks
	t := &task{id: st.newID(), owner: taskOwner(c.who), tool: c.tool, v: c.v,
		args: bytes.Clone(c.args), meta: bytes.Clone(c.meta), answers: bytes.Clone(c.used)}
	switch {
	case c.userSet:
		t.user = bytes.Clone(c.user)
	case c.hasState:
		t.user = bytes.Clone(c.state.user)
	}
	now := time.Now()
	t.created, t.updated = now, now

	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		st.refused[refusedClosed].Add(1)
		return dst, errTasksClosed
	}
	st.sweepLocked(now)
	size := sizeOf(t)
	if e := st.roomLocked(t.owner, 1, size, nil); e != nil {
		st.mu.Unlock()
		if e == errTasksOwnerFull {
			st.refused[refusedShare].Add(1)
		} else {
			st.refused[refusedFull].Add(1)
		}
		return dst, e
	}
	t.ctx, t.stop = context.WithDeadline(context.Background(), now.Add(st.ttl))
	st.linkLocked(t)
	st.setSizeLocked(t, size)
	t.rounds++
	t.running = true
	dst = append(dst, `{"resultType":"task",`...)
	dst = st.appendTaskLocked(dst, t)
	st.mu.Unlock()

	go s.runTask(t)
	return append(dst, s.meta...), nil
}

// appendTaskLocked appends the members of the Task object of t, from
// taskId to pollIntervalMs (no braces).
func (st *taskStore) appendTaskLocked(dst []byte, t *task) []byte {
	dst = append(dst, `"taskId":`...)
	dst = decode.AppendString(dst, t.id)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, taskStatusNames[t.status]...)
	dst = append(dst, '"')
	if t.message != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = decode.AppendString(dst, t.message)
	}
	dst = append(dst, `,"createdAt":"`...)
	dst = t.created.UTC().AppendFormat(dst, isoMillis)
	dst = append(dst, `","lastUpdatedAt":"`...)
	dst = t.updated.UTC().AppendFormat(dst, isoMillis)
	dst = append(dst, `","ttlMs":`...)
	dst = strconv.AppendInt(dst, max(st.ttl.Milliseconds(), 1), 10)
	dst = append(dst, `,"pollIntervalMs":`...)
	return strconv.AppendInt(dst, max((st.poll+time.Millisecond-1).Milliseconds(), 1), 10)
}

// isoMillis is the timestamps' format: ISO 8601, UTC, milliseconds.
const isoMillis = "2006-01-02T15:04:05.000Z07:00"

// runTask runs t's handler once, in a Call of its own, and records what
// came of it. A panic fails the task; it never reaches the process.
func (s *Server) runTask(t *task) {
	st := s.tasks
	c := &Call{v: t.v, args: t.args, tool: t.tool, task: t}
	c.srv, c.method, c.target = s, "tools/call", t.tool.Name
	c.meta = t.meta
	st.mu.Lock()
	if len(t.answers) > 0 {
		c.inputs = append(append([]byte{'{'}, t.answers...), '}')
	}
	if t.rounds > 1 || t.user != nil {
		c.hasState, c.state.user = true, t.user
	}
	st.mu.Unlock()

	var (
		result, failure []byte
		pending         []pendingInput
		user            []byte
		userSet         bool
	)
	func() {
		defer func() {
			if p := recover(); p != nil {
				result, pending, failure = nil, nil, errTaskPanicked
			}
		}()
		c.buf = append(s.openResult(nil, t.v), `"content":[`...)
		err := t.tool.Handler.CallTool(c)
		user, userSet = c.user, c.userSet
		if err == nil {
			if ferr := t.tool.checkOutput(c); ferr != nil {
				failure = appendErrorObject(nil, ferr)
				return
			}
			result = s.closeResult(c.endResult(c.buf), t.v)
			return
		}
		if fe, ok := errors.AsType[*fastserver.Error](err); ok {
			failure = appendErrorObject(nil, fe)
			return
		}
		if errors.Is(err, ErrInputRequired) && len(c.asks) > 0 {
			pending = splitAsks(c.asks)
			return
		}
		result = failedResult(s, nil, t.v, err)
	}()

	st.mu.Lock()
	defer st.mu.Unlock()
	t.running = false
	if _, ok := st.gone[t]; ok {
		delete(st.gone, t)
		st.goneBytes -= t.size
		st.releaseOwnerLocked(t)
	}
	if t.status.terminal() || st.byID[t.id] != t {
		return // cancelled, expired or dropped: the outcome is not wanted
	}
	if t.ctx.Err() != nil {
		// Its TTL passed while it ran (a cancel or Close made it
		// terminal above): it is gone, as the next sweep would find.
		st.dropLocked(t)
		return
	}
	t.updated = time.Now()
	switch {
	case failure != nil:
		t.status, t.failure = taskFailed, failure
	case pending != nil:
		t.status, t.pending = taskInputRequired, pending
		if userSet {
			t.user = bytes.Clone(user)
		}
	default:
		t.status, t.result = taskCompleted, result
	}
	if t.status.terminal() {
		// No round follows: what was kept for one goes before the result
		// is counted (found by review on 2026-12-07: a result that fit
		// was refused for the answers it replaced), and a progress
		// message would tell of work done.
		t.answers, t.user, t.message = nil, nil, ""
		t.stop() // the deadline's timer
	}
	if !st.resizeLocked(t) {
		st.failTooLarge(t)
	}
}

// splitAsks turns a round's input requests ("key":{…},…) into the task's
// pending list.
func splitAsks(asks []byte) []pendingInput {
	obj := append(append([]byte{'{'}, asks...), '}')
	var out []pendingInput
	var it decode.Members
	for it.Reset(obj); it.Next(); {
		out = append(out, pendingInput{key: memberName(&it), req: bytes.Clone(it.Value())})
	}
	return out
}

// appendErrorObject appends e as a JSON-RPC error object.
func appendErrorObject(dst []byte, e *fastserver.Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = decode.AppendString(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

// taskRequest reads a tasks request's taskId after checking that its
// client declares the extension, and finds the task for the caller.
// On success the store's mutex is held, for the caller to unlock.
func (s *Server) taskRequest(r *fastserver.Request) (*task, *fastserver.Error) {
	m := r.Msg
	var meta []byte
	if m.ParamsType == decode.ParamsObject {
		meta, _ = decode.Lookup(m.Params, "_meta")
	}
	if !clientTakesTasks(meta) {
		return nil, errTasksMissing
	}
	if m.ParamsType != decode.ParamsObject {
		return nil, errParamsNotObject
	}
	id, n := decode.Lookup(m.Params, "taskId")
	switch {
	case n > 1:
		return nil, errTaskIDTwice
	case n == 0 || !isString(id):
		return nil, errTaskIDMissing
	}
	st := s.tasks
	owner := taskOwner(auth.FromRequest(r))
	st.mu.Lock()
	st.sweepLocked(time.Now())
	t, _ := lookup(st.byID, id) // no copy of a plain id
	if t == nil || t.owner != owner {
		st.mu.Unlock()
		return nil, unknownTask(id)
	}
	return t, nil // locked
}

// serveTasksGet answers tasks/get with the DetailedTask: the task, and
// its result (completed), error (failed) or inputRequests
// (input_required).
func (s *Server) serveTasksGet(r *fastserver.Request, dst []byte) ([]byte, error) {
	t, e := s.taskRequest(r)
	if e != nil {
		return dst, e
	}
	st := s.tasks
	defer st.mu.Unlock()
	dst = append(dst, `{"resultType":"complete",`...)
	dst = st.appendTaskLocked(dst, t)
	switch t.status {
	case taskCompleted:
		dst = append(append(dst, `,"result":`...), t.result...)
	case taskFailed:
		dst = append(append(dst, `,"error":`...), t.failure...)
	case taskInputRequired:
		dst = append(dst, `,"inputRequests":{`...)
		for i, p := range t.pending {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = decode.AppendString(dst, p.key)
			dst = append(append(dst, ':'), p.req...)
		}
		dst = append(dst, '}')
	}
	return append(dst, s.meta...), nil
}

// serveTasksCancel answers tasks/cancel: the task is cancelled unless it
// has finished, and the answer is an empty result either way.
func (s *Server) serveTasksCancel(r *fastserver.Request, dst []byte) ([]byte, error) {
	t, e := s.taskRequest(r)
	if e != nil {
		return dst, e
	}
	if !t.status.terminal() {
		t.status, t.updated = taskCancelled, time.Now()
		t.pending, t.answers, t.user, t.message = nil, nil, nil, ""
		t.stop()
		s.tasks.setSizeLocked(t, sizeOf(t)) // smaller
	}
	s.tasks.mu.Unlock()
	return append(dst, s.empty[Version20260728]...), nil
}

// serveTasksUpdate answers tasks/update: the answers to pending requests
// are kept (others are ignored), and once none is pending the handler
// runs again. The answer is an empty result; the task's state is for
// tasks/get to tell.
func (s *Server) serveTasksUpdate(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	var inputs []byte
	if m.ParamsType == decode.ParamsObject {
		if v, n := decode.Lookup(m.Params, "inputResponses"); n == 1 && inputResponses(v) {
			inputs = v
		}
	}
	t, e := s.taskRequest(r)
	if e != nil {
		return dst, e
	}
	st := s.tasks
	if inputs == nil {
		st.mu.Unlock()
		return dst, errTaskInputs
	}
	run := false
	if t.status == taskInputRequired {
		// The answers go to copies, kept only when the bounds take them
		// (found by review on 2026-12-07: an answer too large stayed with
		// the failed task, uncounted).
		answers := t.answers[:len(t.answers):len(t.answers)]
		pending := append([]pendingInput(nil), t.pending...)
		var it decode.Members
		for it.Reset(inputs); it.Next(); {
			key := memberName(&it)
			for i, p := range pending {
				if p.key == key {
					answers = appendMember(answers, key, it.Value())
					pending = append(pending[:i], pending[i+1:]...)
					break
				}
			}
		}
		oldAnswers, oldPending := t.answers, t.pending
		t.answers, t.pending = answers, pending
		t.updated = time.Now()
		if !st.resizeLocked(t) {
			t.answers, t.pending = oldAnswers, oldPending
			st.failTooLarge(t)
		} else if len(t.pending) == 0 {
			t.pending, t.status, t.running = nil, taskWorking, true
			t.rounds++
			run = true
		}
	}
	st.mu.Unlock()
	if run {
		go s.runTask(t)
	}
	return append(dst, s.empty[Version20260728]...), nil
}

// note sets the task's statusMessage (Call.Progress in a task).
func (t *task) note(st *taskStore, message string) {
	if message == "" {
		return
	}
	if len(message) > 1024 {
		message = clip(message)
	}
	st.mu.Lock()
	if !t.status.terminal() {
		old := t.message
		t.message, t.updated = message, time.Now()
		if !st.resizeLocked(t) {
			t.message = old // the bounds cannot take it: the old one stays
		}
	}
	st.mu.Unlock()
}
