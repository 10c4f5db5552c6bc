package mcp

// Review 8 (hostile review) of the task store after 8de2254..b09ae27:
// roomLocked's two phases, the byte and count books across every path,
// the TTL, WritePrometheus. Tests named TestR8TaskFault… fail on b09ae27:
// each names the fault it proves. The others (TestR8Task…) check a claim,
// found it holding, and stay as guards.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// r8Audit checks the store's books under its lock and returns what is
// wrong: list and map agree and the list is well linked; st.bytes is the
// sum of the sizes; each size is sizeOf (every path promises it); each
// owner's use is what the list holds; no task is left doomed; each
// status holds what it should (and nothing it should have let go); the
// bounds hold, but for the documented overshoot of a task failed for
// want of bytes (len(errTaskTooLarge)) and, leniently, of one cancelled
// at its TTL (len(errTaskExpired), see TestR8TaskFaultTTLPathOvershoots).
func r8Audit(st *taskStore) []string {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	st.mu.Lock()
	defer st.mu.Unlock()
	type use struct{ tasks, bytes, slack int }
	owners := map[string]*use{}
	n, sum, slack := 0, 0, 0
	var prev *task
	for t := st.head; t != nil; t = t.next {
		if n++; n > len(st.byID)+st.maxTasks+1 {
			bad("the list loops")
			break
		}
		if t.prev != prev {
			bad("task %s: prev link broken", t.id)
		}
		prev = t
		if st.byID[t.id] != t {
			bad("task %s listed, not mapped", t.id)
		}
		sum += t.size
		if h := sizeOf(t); t.size != h {
			bad("task %s (%s): size %d, sizeOf %d", t.id, taskStatusNames[t.status], t.size, h)
		}
		if t.doomed {
			bad("task %s left doomed", t.id)
		}
		// No slack since the store's own errors are shared, not counted,
		// and a task past its TTL is dropped (both fixed after this review).
		sl := 0
		slack += sl
		if t.owner != "" {
			u := owners[t.owner]
			if u == nil {
				u = new(use)
				owners[t.owner] = u
			}
			u.tasks, u.bytes, u.slack = u.tasks+1, u.bytes+t.size, u.slack+sl
		}
		switch t.status {
		case taskWorking:
			if !t.running || t.pending != nil || t.result != nil || t.failure != nil {
				bad("working task %s: running %v, pending %d, result %d, failure %d", t.id, t.running, len(t.pending), len(t.result), len(t.failure))
			}
		case taskInputRequired:
			if t.running || len(t.pending) == 0 || t.result != nil || t.failure != nil {
				bad("input_required task %s: running %v, pending %d", t.id, t.running, len(t.pending))
			}
		case taskCompleted:
			if t.result == nil || t.pending != nil || t.answers != nil || t.user != nil || t.message != "" || t.failure != nil {
				bad("completed task %s keeps answers %d, user %d, pending %d, message %q", t.id, len(t.answers), len(t.user), len(t.pending), t.message)
			}
		case taskFailed:
			if t.failure == nil || t.result != nil || t.pending != nil || t.answers != nil || t.user != nil {
				bad("failed task %s keeps answers %d, user %d, pending %d, result %d", t.id, len(t.answers), len(t.user), len(t.pending), len(t.result))
			}
		case taskCancelled:
			if t.result != nil || t.failure != nil || t.pending != nil || t.answers != nil || t.user != nil || t.message != "" {
				bad("cancelled task %s keeps answers %d, user %d, pending %d, message %q", t.id, len(t.answers), len(t.user), len(t.pending), t.message)
			}
		}
	}
	if st.tail != prev {
		bad("tail is not the last task")
	}
	// Tasks dropped while their handler runs count for their owner until
	// it returns (taskStore.gone).
	goneBytes := 0
	for t := range st.gone {
		if !t.running || st.byID[t.id] == t {
			bad("gone task %s: running %v, still mapped %v", t.id, t.running, st.byID[t.id] == t)
		}
		goneBytes += t.size
		if t.owner != "" {
			u := owners[t.owner]
			if u == nil {
				u = new(use)
				owners[t.owner] = u
			}
			u.tasks, u.bytes = u.tasks+1, u.bytes+t.size
		}
	}
	if goneBytes != st.goneBytes {
		bad("st.goneBytes %d, the gone tasks' sizes sum to %d", st.goneBytes, goneBytes)
	}
	if n+len(st.gone) > st.maxTasks {
		bad("bounds: %d tasks and %d gone (max %d)", n, len(st.gone), st.maxTasks)
	}
	if n != len(st.byID) {
		bad("%d tasks listed, %d mapped", n, len(st.byID))
	}
	if sum != st.bytes {
		bad("st.bytes %d, the sizes sum to %d", st.bytes, sum)
	}
	if n > st.maxTasks || st.bytes < 0 || st.bytes > st.maxBytes+slack {
		bad("bounds: %d tasks (max %d), %d bytes (max %d + %d slack)", n, st.maxTasks, st.bytes, st.maxBytes, slack)
	}
	if _, ok := st.owners[""]; ok {
		bad("the tokenless owner has an ownerUse")
	}
	for o, u := range owners {
		g := st.owners[o]
		switch {
		case g == nil:
			bad("owner %.8s holds %d tasks, has no ownerUse", o, u.tasks)
		case g.tasks != u.tasks || g.bytes != u.bytes:
			bad("owner %.8s: counted %d tasks %d bytes, holds %d tasks %d bytes", o, g.tasks, g.bytes, u.tasks, u.bytes)
		}
		if u.tasks > st.maxOwnerTasks || u.bytes > st.maxOwnerBytes+u.slack {
			bad("owner %.8s past its share: %d tasks (max %d), %d bytes (max %d + %d)", o, u.tasks, st.maxOwnerTasks, u.bytes, st.maxOwnerBytes, u.slack)
		}
	}
	for o, g := range st.owners {
		if owners[o] == nil {
			bad("owner %.8s counted (%d tasks) but holds none", o, g.tasks)
		}
	}
	return errs
}

// r8Scrape parses WritePrometheus's output.
func r8Scrape(t testing.TB, s *Server) (status map[string]int, held int, refused map[string]uint64) {
	t.Helper()
	var b bytes.Buffer
	s.WritePrometheus(&b)
	status, refused = map[string]int{}, map[string]uint64{}
	held = -1
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "rpcedge_mcp_listen_") {
			continue // the listen streams' metrics (TestListenBounds)
		}
		name, val, ok := strings.Cut(line, " ")
		v, err := strconv.ParseUint(val, 10, 64)
		if !ok || err != nil {
			t.Errorf("metrics line %q", line)
			continue
		}
		switch {
		case strings.HasPrefix(name, `rpcedge_mcp_tasks{status="`):
			status[strings.TrimSuffix(strings.TrimPrefix(name, `rpcedge_mcp_tasks{status="`), `"}`)] = int(v)
		case name == "rpcedge_mcp_task_bytes":
			held = int(v)
		case strings.HasPrefix(name, `rpcedge_mcp_tasks_refused_total{reason="`):
			refused[strings.TrimSuffix(strings.TrimPrefix(name, `rpcedge_mcp_tasks_refused_total{reason="`), `"}`)] = v
		default:
			t.Errorf("unknown metric %q", line)
		}
	}
	if len(status) != len(taskStatusNames) || held < 0 || len(refused) != len(refusalReasons) {
		t.Errorf("metrics incomplete: %v %d %v", status, held, refused)
	}
	return status, held, refused
}

// r8Idle waits (3 s at most) until no handler run is under way in e's store.
func r8Idle(t testing.TB, s *Server) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		st := s.tasks
		st.mu.Lock()
		busy := 0
		for tk := st.head; tk != nil; tk = tk.next {
			if tk.running {
				busy++
			}
		}
		st.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d task runs still under way after 3s", busy)
		}
		time.Sleep(time.Millisecond)
	}
}

// r8SizeOfProbe returns the size a task of tool with args is counted at
// while its handler blocks, from a store of its own.
func r8SizeOfProbe(t *testing.T, tool Tool, args string) int {
	t.Helper()
	p := r7New(t, nil, tool)
	id := p.create(nil, tool.Name, args)
	p.s.tasks.mu.Lock()
	defer p.s.tasks.mu.Unlock()
	return p.s.tasks.byID[id].size
}

// FAULT (tasks.go:743): runTask measures a finished task with the
// answers, state and statusMessage it is about to let go (tasks.go:748)
// still in it. A result that fits once they are gone is refused: the task
// fails "the task's data exceeds the task store's byte budget" although
// the store, empty but for it, would hold it. Fix: on a terminal outcome
// clear answers, user and message before resizeLocked (and measure once).
func TestR8TaskFaultFinishedResultCountsAnswersItDrops(t *testing.T) {
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if _, err := c.Elicit("k", nil); err != nil {
			return err
		}
		n, _ := c.ArgInt("size")
		c.AddText(strings.Repeat("x", int(n)))
		return nil
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, ask)
	id := e.create(nil, "ask", `{"size":9000}`)
	e.await(nil, id, "input_required")
	if a := e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"action":"accept","content":{"v":"`+strings.Repeat("a", 7000)+`"}}},`); a.Code != 0 {
		t.Fatalf("update: %+v", a)
	}
	e.idle(id)
	v := e.get(nil, id)
	if v == nil || v["status"] != "completed" {
		t.Errorf("a 9 KB result in an otherwise empty 16 KiB store: task %v, want completed", v)
	}
	for _, m := range r8Audit(e.s.tasks) {
		t.Error(m)
	}
}

// FAULT (tasks.go:488, failTooLarge, from serveTasksUpdate at 912): a
// task failed by an answer too large keeps its progress statusMessage,
// although a finished task drops it everywhere else (runTask's terminal
// branch, tasks/cancel, Close; 7374c18). Fix: failTooLarge sets
// t.message = "" too.
func TestR8TaskFaultUpdateTooLargeKeepsStatusMessage(t *testing.T) {
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		_ = c.Progress(0, 1, "asking")
		if _, err := c.Elicit("k", nil); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, ask)
	id := e.create(nil, "ask", `{}`)
	e.await(nil, id, "input_required")
	e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"v":"`+strings.Repeat("a", 32<<10)+`"}},`)
	v := e.get(nil, id)
	if v == nil || v["status"] != "failed" {
		t.Fatalf("after an oversized answer: %v", v)
	}
	if m, ok := v["statusMessage"]; ok {
		t.Errorf("a failed task still says %q", m)
	}
}

// FAULT (tasks.go:488 and the doc of failTooLarge, "a few hundred bytes
// at most over the bounds"): each task failed for want of bytes counts
// len(errTaskTooLarge) (80) bytes more than it held, unchecked, and the
// overshoots add up: 32 tasks that fill the budget and all end with a
// result too large leave the store 2.5 KB past MaxBytes (MaxTasks of them:
// 1,000 by default, 80 KB), and rpcedge_mcp_task_bytes says so. Fix: do
// not count the shared static error (errTaskTooLarge, errTaskPanicked are
// one slice for all tasks) in sizeOf, or count it within the 256 bytes of
// overhead, so that a failed task never grows.
func TestR8TaskFaultTooLargeOvershootAddsUp(t *testing.T) {
	const n = 32
	block := make(chan struct{})
	tool := Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)}
	const args = `{"block":true,"size":200000}`
	s := r8SizeOfProbe(t, tool, args)
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxTasks: 100, MaxBytes: n * s})}, tool)
	for range n {
		e.create(nil, "run", args)
	}
	close(block)
	r8Idle(t, e.s)
	st := e.s.tasks
	st.mu.Lock()
	over, failed := st.bytes-st.maxBytes, 0
	for tk := st.head; tk != nil; tk = tk.next {
		if tk.status == taskFailed {
			failed++
		}
	}
	st.mu.Unlock()
	if failed != n {
		t.Fatalf("%d of %d tasks failed", failed, n)
	}
	if over > 300 {
		_, held, _ := r8Scrape(t, e.s)
		t.Errorf("%d tasks failed for want of bytes leave the store %d bytes past MaxBytes %d (gauge %d)", n, over, n*s, held)
	}
}

// FAULT (tasks.go:727): a run that ends after its task's TTL (its
// Context's deadline) but before a sweep sets statusMessage to
// errTaskExpired and counts it (35 bytes) unchecked: a full store ends
// past MaxBytes. The message is never seen either: every tasks/* request
// sweeps first, and the task is past its TTL. Fix: drop the task there
// (st.dropLocked(t)) instead of keeping a cancelled one.
func TestR8TaskFaultTTLPathOvershoots(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	tool := Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)}
	const args = `{"block":true}`
	s := r8SizeOfProbe(t, tool, args)
	e := r7New(t, []Option{WithTasks(TaskOptions{TTL: 100 * time.Millisecond, MaxBytes: 2 * s})}, tool)
	e.create(nil, "run", args)
	e.create(nil, "run", args)
	time.Sleep(100 * time.Millisecond)
	r8Idle(t, e.s) // no tasks/* request: no sweep
	st := e.s.tasks
	st.mu.Lock()
	over := st.bytes - st.maxBytes
	st.mu.Unlock()
	if over > 0 {
		_, held, _ := r8Scrape(t, e.s)
		t.Errorf("two runs that end past their TTL leave the store %d bytes past MaxBytes (gauge %d, max %d)", over, held, 2*s)
	}
}

// FAULT (tasks.go:308 and 663): rounding TTL and PollInterval up to whole
// milliseconds overflows near math.MaxInt64, which WithTasks accepts (it
// only refuses negatives). TTL: math.MaxInt64, a careless "never", makes
// every TTL negative: tasks advertise ttlMs 1 and are gone at once;
// PollInterval: math.MaxInt64 advertises pollIntervalMs 1, the fastest
// polling there is. Fix: refuse (or clamp) values past, say, 100 years
// in WithTasks, or round without overflow (d%ms != 0 ? d-d%ms+ms : d,
// saturating).
func TestR8TaskFaultHugeDurationsOverflow(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	tool := Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)}
	for _, c := range []struct {
		name string
		o    TaskOptions
	}{
		{"TTL", TaskOptions{TTL: math.MaxInt64}},
		{"PollInterval", TaskOptions{PollInterval: math.MaxInt64}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Info{Name: "r8", Version: "1"}, WithTasks(c.o))
			if err != nil {
				return // refused: fine
			}
			t.Cleanup(s.Close)
			tl := tool
			tl.InputSchema = `{"type":"object"}`
			if err := s.AddTool(tl); err != nil {
				t.Fatal(err)
			}
			e := &r7Env{t: t, s: s, ep: s.Endpoint()}
			a := e.call(nil, "run", `{"block":true}`)
			m := obj(t, a.Result)
			id, _ := m["taskId"].(string)
			ttl, _ := m["ttlMs"].(float64)
			poll, _ := m["pollIntervalMs"].(float64)
			if ttl < float64(time.Hour/time.Millisecond) {
				t.Errorf("ttlMs %v", ttl)
			}
			if poll < 1000 {
				t.Errorf("pollIntervalMs %v", poll)
			}
			if v := e.get(nil, id); v == nil || v["status"] != "working" {
				t.Errorf("the task right after its creation: %v (nil: gone)", v)
			}
		})
	}
}

// TestR8TaskRoomLockedOracle: roomLocked against an independent greedy
// oracle on thousands of random stores (owners, statuses, sizes, keep,
// stores already past their bounds): the same refusal, the same victims
// (finished, not keep, the owner's own oldest first while it is past its
// share, then anyone's oldest), nothing dropped on a refusal, no doomed
// flag left, victims stopped, the books exact.
func TestR8TaskRoomLockedOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(2663, 8))
	owners := []string{"", "alice", "bob"}
	for iter := range 4000 {
		st := newTaskStore(TaskOptions{MaxTasks: 1 + r.IntN(8), MaxBytes: 200 + r.IntN(2000),
			MaxOwnerTasks: 1 + r.IntN(6), MaxOwnerBytes: 100 + r.IntN(1500)})
		var list []*task
		for i := range r.IntN(12) {
			tk := &task{id: strconv.Itoa(i), owner: owners[r.IntN(3)], status: taskStatus(r.IntN(5))}
			tk.ctx, tk.stop = context.WithCancel(context.Background())
			st.linkLocked(tk)
			st.setSizeLocked(tk, 1+r.IntN(400))
			list = append(list, tk)
		}
		owner, n, extra := owners[r.IntN(3)], r.IntN(2), r.IntN(900)
		var keep *task
		if len(list) > 0 && r.IntN(2) == 0 {
			keep = list[r.IntN(len(list))]
			owner, n = keep.owner, 0
		}
		// The oracle.
		want := map[*task]bool{}
		var wantErr *fastserver.Error
		eligible := func(x *task) bool { return x != keep && x.status.terminal() && !want[x] }
		if owner != "" {
			ut, ub := 0, 0
			for _, x := range list {
				if x.owner == owner {
					ut, ub = ut+1, ub+x.size
				}
			}
			for _, x := range list {
				if ut+n <= st.maxOwnerTasks && ub+extra <= st.maxOwnerBytes {
					break
				}
				if x.owner == owner && eligible(x) {
					want[x], ut, ub = true, ut-1, ub-x.size
				}
			}
			if ut+n > st.maxOwnerTasks || ub+extra > st.maxOwnerBytes {
				wantErr = errTasksOwnerFull
			}
		}
		if wantErr == nil {
			gt, gb := len(list)-len(want), st.bytes
			for x := range want {
				gb -= x.size
			}
			for _, x := range list {
				if gt+n <= st.maxTasks && gb+extra <= st.maxBytes {
					break
				}
				if eligible(x) {
					want[x], gt, gb = true, gt-1, gb-x.size
				}
			}
			if gt+n > st.maxTasks || gb+extra > st.maxBytes {
				wantErr = errTasksFull
			}
		}
		if wantErr != nil {
			want = nil
		}

		st.mu.Lock()
		got := st.roomLocked(owner, n, extra, keep)
		st.mu.Unlock()
		if got != wantErr {
			t.Fatalf("iter %d: roomLocked(%q, %d, %d) = %v, want %v", iter, owner, n, extra, got, wantErr)
		}
		for _, x := range list {
			_, kept := st.byID[x.id]
			if kept == want[x] {
				t.Fatalf("iter %d: task %s (%s, owner %q, size %d, keep %v): kept %v", iter, x.id, taskStatusNames[x.status], x.owner, x.size, x == keep, kept)
			}
			if (x.ctx.Err() != nil) != want[x] {
				t.Fatalf("iter %d: task %s stopped %v, dropped %v", iter, x.id, x.ctx.Err() != nil, want[x])
			}
			if x.doomed {
				t.Fatalf("iter %d: task %s left doomed", iter, x.id)
			}
		}
		// The books (bounds aside: the store may start past them).
		sum, ut := 0, map[string][2]int{}
		for x := st.head; x != nil; x = x.next {
			sum += x.size
			if x.owner != "" {
				u := ut[x.owner]
				ut[x.owner] = [2]int{u[0] + 1, u[1] + x.size}
			}
		}
		if sum != st.bytes || len(ut) != len(st.owners) {
			t.Fatalf("iter %d: books: bytes %d vs %d, owners %d vs %d", iter, st.bytes, sum, len(st.owners), len(ut))
		}
		for o, u := range ut {
			if g := st.owners[o]; g == nil || g.tasks != u[0] || g.bytes != u[1] {
				t.Fatalf("iter %d: owner %s: %+v, holds %v", iter, o, g, u)
			}
		}
		for _, x := range list {
			x.stop()
		}
	}
}

// r8World drives a server with the "r8" tool, which does what its
// arguments say: a statusMessage ("msg" bytes), state ("state" bytes),
// "asks" elicitations, a wait on gate "gate" (or its Context), then an
// outcome ("mode": 0 a result of "size" bytes, 1 a tool error, 2 a
// JSON-RPC error, 3 a panic, 4 SetError with the result).
type r8World struct {
	e     *r7Env
	ttl   time.Duration
	mu    sync.Mutex
	gates [4]chan struct{}
	// cancelled: ids the test sent tasks/cancel for; early: runs whose
	// Context ended before their TTL without a cancel or Close (a running
	// task dropped).
	cancelled map[string]bool
	early     []string
	closed    atomic.Bool
	toks      []*auth.Token
}

func newR8World(t *testing.T, o TaskOptions) *r8World {
	w := &r8World{ttl: o.TTL, cancelled: map[string]bool{}, toks: []*auth.Token{nil,
		{Issuer: "https://as", Subject: "alice", ClientID: "app"},
		{Issuer: "https://as", Subject: "bob", ClientID: "app"},
		{Issuer: "https://as", Subject: "carol", ClientID: "app"}}}
	for i := range w.gates {
		w.gates[i] = make(chan struct{})
	}
	w.e = r7New(t, []Option{WithTasks(o)}, w.tool())
	t.Cleanup(func() { w.releaseAll() })
	return w
}

func (w *r8World) tool() Tool {
	return Tool{Name: "r8", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if m, _ := c.ArgInt("msg"); m > 0 {
			_ = c.Progress(0, 1, strings.Repeat("m", int(m)))
		}
		if s, _ := c.ArgInt("state"); s > 0 {
			_ = c.SetState([]byte(`"` + strings.Repeat("s", int(s)) + `"`))
		}
		asks, _ := c.ArgInt("asks")
		var errs []error
		for i := range asks {
			if _, err := c.Elicit("k"+strconv.Itoa(int(i)), nil); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if g, err := c.ArgInt("gate"); err == nil {
			w.mu.Lock()
			ch := w.gates[g]
			w.mu.Unlock()
			select {
			case <-ch:
			case <-c.Context().Done():
				w.ended(c.task)
				return c.Context().Err()
			}
		}
		size, _ := c.ArgInt("size")
		switch mode, _ := c.ArgInt("mode"); mode {
		case 1:
			return errors.New("the tool failed")
		case 2:
			return &fastserver.Error{Code: -32000, Message: "the tool refused"}
		case 3:
			panic("r8")
		case 4:
			c.SetError()
		}
		c.AddText(strings.Repeat("x", int(size)))
		return nil
	})}
}

func (w *r8World) ended(t *task) {
	if w.closed.Load() || time.Since(t.created) >= w.ttl {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cancelled[t.id] {
		w.early = append(w.early, t.id)
	}
}

func (w *r8World) release(g int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.gates[g])
	w.gates[g] = make(chan struct{})
}

func (w *r8World) releaseAll() {
	for g := range w.gates {
		w.release(g)
	}
}

type r8Task struct {
	id  string
	tok *auth.Token
}

// step does one random operation; it reports a task it created.
func (w *r8World) step(t *testing.T, r *rand.Rand, known []r8Task) (r8Task, bool) {
	e := w.e
	pick := func(xs ...int) int { return xs[r.IntN(len(xs))] }
	switch op := r.IntN(100); {
	case op < 30 || len(known) == 0:
		tok := w.toks[r.IntN(len(w.toks))]
		gate := ""
		if r.IntN(5) < 2 {
			gate = `,"gate":` + strconv.Itoa(r.IntN(len(w.gates)))
		}
		args := fmt.Sprintf(`{"size":%d,"msg":%d,"state":%d,"asks":%d,"mode":%d,"pad":"%s"%s}`,
			pick(0, 200, 3000, 7000, 30000), pick(0, 0, 40, 1024, 1500), pick(0, 0, 100, 2000),
			pick(0, 0, 1, 2), pick(0, 0, 0, 1, 2, 3, 4), strings.Repeat("p", pick(0, 300, 2500, 9500)), gate)
		a := e.call(tok, "r8", args)
		switch {
		case a.Status == 200 && a.Code == 0:
			id, _ := obj(t, a.Result)["taskId"].(string)
			if id == "" {
				t.Errorf("not a task: %s", a.Result)
			}
			return r8Task{id, tok}, true
		case a.Status == 503 && a.Msg == errTasksFull.Message, a.Status == 429 && tok != nil:
		default:
			t.Errorf("create: %+v", a)
		}
	case op < 55:
		k := known[max(len(known)-12, 0)+r.IntN(min(len(known), 12))] // recent: likelier alive
		tok := k.tok
		if r.IntN(10) == 0 {
			tok = w.toks[r.IntN(len(w.toks))]
		}
		var m []string
		for _, key := range []string{"k0", "k1", "zz"} {
			if r.IntN(2) == 0 {
				m = append(m, `"`+key+`":{"v":"`+strings.Repeat("a", pick(0, 10, 2000, 25000))+`"}`)
			}
		}
		a := e.do(tok, "tasks/update", k.id, `"inputResponses":{`+strings.Join(m, ",")+`},`)
		if a.Code != 0 && a.Code != decode.CodeInvalidParams {
			t.Errorf("update: %+v", a)
		}
	case op < 65:
		k := known[max(len(known)-12, 0)+r.IntN(min(len(known), 12))]
		w.mu.Lock()
		w.cancelled[k.id] = true
		w.mu.Unlock()
		if a := e.do(k.tok, "tasks/cancel", k.id, ""); a.Code != 0 && a.Code != decode.CodeInvalidParams {
			t.Errorf("cancel: %+v", a)
		}
	case op < 75:
		k := known[r.IntN(len(known))]
		tok := k.tok
		if r.IntN(4) == 0 {
			tok = w.toks[r.IntN(len(w.toks))]
		}
		if a := e.do(tok, "tasks/get", k.id, ""); a.Code != 0 && a.Code != decode.CodeInvalidParams {
			t.Errorf("get: %+v", a)
		}
	case op < 85:
		w.release(r.IntN(len(w.gates)))
	case op < 92:
		status, held, _ := r8Scrape(t, e.s)
		total := 0
		for _, v := range status {
			total += v
		}
		if total > e.s.tasks.maxTasks || held > e.s.tasks.maxBytes+total*len(errTaskTooLarge) {
			t.Errorf("metrics past the bounds: %v, %d bytes", status, held)
		}
	default:
		time.Sleep(time.Duration(1+r.IntN(3)) * time.Millisecond)
	}
	return r8Task{}, false
}

// finish releases every gate, waits for the runs, checks the books and
// the metrics against the store, closes the server and checks again.
func (w *r8World) finish(t *testing.T) {
	w.releaseAll()
	r8Idle(t, w.e.s)
	for _, m := range r8Audit(w.e.s.tasks) {
		t.Error(m)
	}
	st := w.e.s.tasks
	status, held, refused := r8Scrape(t, w.e.s)
	var n [len(taskStatusNames)]int
	st.mu.Lock()
	for tk := st.head; tk != nil; tk = tk.next {
		n[tk.status]++
	}
	bytesNow := st.bytes
	st.mu.Unlock()
	for i, name := range taskStatusNames {
		if status[name] != n[i] {
			t.Errorf("metrics: %s %d, the store holds %d", name, status[name], n[i])
		}
	}
	if held != bytesNow {
		t.Errorf("metrics: %d bytes, the store counts %d", held, bytesNow)
	}
	w.closed.Store(true)
	w.e.s.Close()
	r8Idle(t, w.e.s)
	for _, m := range r8Audit(st) {
		t.Error("after Close: " + m)
	}
	st.mu.Lock()
	for tk := st.head; tk != nil; tk = tk.next {
		if !tk.status.terminal() {
			t.Errorf("after Close task %s is %s", tk.id, taskStatusNames[tk.status])
		}
	}
	st.mu.Unlock()
	w.mu.Lock()
	if len(w.early) > 0 {
		t.Errorf("running tasks dropped before their TTL: %v", w.early)
	}
	w.mu.Unlock()
	t.Logf("refusals %v; store at the end %v", refused, n)
}

// TestR8TaskRandomInterleavings: 1,500 random steps (seeded) of creates by
// four holders (three tokens and none) with every outcome, updates with
// answers small and too large, cancels, gets, gate releases, scrapes and
// pauses past a short TTL, on a store whose bounds and shares bind; the
// books are audited after every step (r8Audit), and at the end the
// metrics match the store and no running task was dropped.
func TestR8TaskRandomInterleavings(t *testing.T) {
	w := newR8World(t, TaskOptions{TTL: 120 * time.Millisecond, MaxTasks: 10, MaxBytes: 20 << 10,
		MaxOwnerTasks: 5, MaxOwnerBytes: 9 << 10})
	r := rand.New(rand.NewPCG(8, 2663))
	var known []r8Task
	seen := map[string]map[string]bool{} // what the audits saw: kind → task ids
	for i := range 1500 {
		if k, ok := w.step(t, r, known); ok {
			known = append(known, k)
		}
		for _, m := range r8Audit(w.e.s.tasks) {
			t.Errorf("step %d: %s", i, m)
		}
		if t.Failed() {
			t.FailNow()
		}
		st := w.e.s.tasks
		st.mu.Lock()
		for tk := st.head; tk != nil; tk = tk.next {
			kind := taskStatusNames[tk.status]
			switch {
			case bytes.Equal(tk.failure, errTaskTooLarge):
				kind += " (too large)"
			case tk.status == taskWorking && tk.message != "":
				kind += " (message)"
			case tk.status == taskInputRequired && tk.user != nil:
				kind += " (state)"
			}
			if seen[kind] == nil {
				seen[kind] = map[string]bool{}
			}
			seen[kind][tk.id] = true
		}
		st.mu.Unlock()
	}
	w.finish(t)
	cover := map[string]int{}
	for k, ids := range seen {
		cover[k] = len(ids)
	}
	t.Logf("%d tasks made; seen %v", len(known), cover)
	for _, k := range []string{"completed", "failed", "failed (too large)", "input_required", "cancelled"} {
		if cover[k] == 0 {
			t.Errorf("no %s task in the run: the walk misses a path", k)
		}
	}
}

// TestR8TaskConcurrentInterleavings: the same operations from six
// goroutines at once for 300 ms, with an auditor and a scraper running
// beside them (go test -race): the books hold at every audit.
func TestR8TaskConcurrentInterleavings(t *testing.T) {
	w := newR8World(t, TaskOptions{TTL: 150 * time.Millisecond, MaxTasks: 12, MaxBytes: 24 << 10,
		MaxOwnerTasks: 5, MaxOwnerBytes: 10 << 10})
	stop := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	var kmu sync.Mutex
	var known []r8Task
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2663))
			for i := 0; i < 2000 && time.Now().Before(stop); i++ {
				kmu.Lock()
				ks := known
				kmu.Unlock()
				if k, ok := w.step(t, r, ks); ok {
					kmu.Lock()
					known = append(known, k)
					kmu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for i := 0; i < 5000 && time.Now().Before(stop); i++ {
			for _, m := range r8Audit(w.e.s.tasks) {
				t.Errorf("audit %d: %s", i, m)
			}
			r8Scrape(t, w.e.s)
			time.Sleep(200 * time.Microsecond)
		}
	})
	wg.Wait()
	w.finish(t)
}

// TestR8TaskTTLFromTheClientsView: a task is found until createdAt +
// ttlMs as the client reads them (createdAt is cut to the millisecond,
// ttlMs rounded up), gone shortly after, and a running task's Context ends
// at its TTL (DeadlineExceeded), not before.
func TestR8TaskTTLFromTheClientsView(t *testing.T) {
	const ttl = 150 * time.Millisecond
	endedAt := make(chan time.Duration, 1)
	forever := Tool{Name: "forever", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		<-c.Context().Done()
		if errors.Is(c.Context().Err(), context.DeadlineExceeded) {
			endedAt <- time.Since(c.task.created)
		} else {
			endedAt <- -1
		}
		return c.Context().Err()
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{TTL: ttl - 300*time.Microsecond})}, r7Sized(nil), forever)
	done := e.create(nil, "sized", `{"size":1}`)
	a := e.call(nil, "forever", `{}`)
	m := obj(t, a.Result)
	run, _ := m["taskId"].(string)
	created, err := time.Parse(time.RFC3339Nano, m["createdAt"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if m["ttlMs"] != float64(ttl/time.Millisecond) {
		t.Fatalf("ttlMs %v", m["ttlMs"])
	}
	expiry := created.Add(ttl)
	for i := 0; i < 1000 && time.Until(expiry) > 3*time.Millisecond; i++ {
		if e.get(nil, done) == nil || e.get(nil, run) == nil {
			t.Fatalf("a task gone %v before its advertised expiry", time.Until(expiry))
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case d := <-endedAt:
		if d < ttl-time.Millisecond || d > ttl+100*time.Millisecond {
			t.Errorf("the running task's Context ended %v after its creation (-1: not at its deadline), TTL %v", d, ttl)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the running task's Context did not end at its TTL")
	}
	time.Sleep(time.Until(expiry.Add(5 * time.Millisecond)))
	if e.get(nil, done) != nil || e.get(nil, run) != nil {
		t.Errorf("tasks found past their TTL")
	}
	for _, m := range r8Audit(e.s.tasks) {
		t.Error(m)
	}
}

// TestR8TaskIDPrefixes: every prefix cmd/rpcedge can make (internal/app's
// taskIDPrefix: at most 63 bytes of letters, digits, '-' and '_', then a
// dot) is one WithTasks takes, and the ids it makes are told as they are.
func TestR8TaskIDPrefixes(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	r := rand.New(rand.NewPCG(64, 63))
	for _, n := range []int{1, 2, 17, 62, 63} {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		p := string(b) + "."
		e := r7New(t, []Option{WithTasks(TaskOptions{IDPrefix: p})}, r7Sized(nil))
		id := e.create(nil, "sized", `{"size":1}`)
		if !strings.HasPrefix(id, p) || e.get(nil, id) == nil {
			t.Errorf("prefix %q: id %q", p, id)
		}
	}
}
