package mcp

// Review 7 (hostile review) of d92f8fb: the tasks extension (SEP-2663).
// Tests named TestR7TaskFault… failed on that commit: each names the fault
// it proves. The others (TestR7Task…) checked a claim, found it holding,
// and stay as guards.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// r7Meta is the _meta of a 2026-07-28 request whose client declares the
// tasks extension and elicitation.
const r7Meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// r7Env is a server with task tools.
type r7Env struct {
	t  *testing.T
	s  *Server
	ep *fastserver.Endpoint
}

func r7New(t *testing.T, opts []Option, tools ...Tool) *r7Env {
	t.Helper()
	s, err := New(Info{Name: "r7", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.InputSchema == "" {
			tl.InputSchema = `{"type":"object"}`
		}
		if err := s.AddTool(tl); err != nil {
			t.Fatal(err)
		}
	}
	ep := s.Endpoint()
	if ep.Err != nil {
		t.Fatal(ep.Err)
	}
	t.Cleanup(s.Close)
	return &r7Env{t: t, s: s, ep: ep}
}

// call calls tool with args (raw JSON) as tok, the client declaring tasks.
func (e *r7Env) call(tok *auth.Token, tool, args string) answer {
	e.t.Helper()
	return exchangeAs(e.t, e.ep, tok, v26("tools/call", HeaderName, tool), req("tools/call", `"name":"`+tool+`","arguments":`+args+`,`+r7Meta))
}

// do sends a tasks request on id as tok; more are params members ending
// in a comma.
func (e *r7Env) do(tok *auth.Token, method, id, more string) answer {
	e.t.Helper()
	return exchangeAs(e.t, e.ep, tok, v26(method, HeaderName, id), req(method, `"taskId":`+string(decode.AppendString(nil, id))+`,`+more+r7Meta))
}

// create calls tool and returns the id of the task it made.
func (e *r7Env) create(tok *auth.Token, tool, args string) string {
	e.t.Helper()
	a := e.call(tok, tool, args)
	if a.Status != 200 || a.Code != 0 {
		e.t.Fatalf("%s: no task: %+v", tool, a)
	}
	m := obj(e.t, a.Result)
	id, _ := m["taskId"].(string)
	if m["resultType"] != "task" || id == "" {
		e.t.Fatalf("%s: not a CreateTaskResult: %s", tool, a.Result)
	}
	return id
}

// get returns the DetailedTask of id, or nil when the store does not
// know it (-32602).
func (e *r7Env) get(tok *auth.Token, id string) map[string]any {
	e.t.Helper()
	a := e.do(tok, "tasks/get", id, "")
	if a.Code == decode.CodeInvalidParams {
		return nil
	}
	if a.Status != 200 || a.Code != 0 {
		e.t.Fatalf("tasks/get %s: %+v", id, a)
	}
	return obj(e.t, a.Result)
}

// await polls tasks/get until id leaves the status working (or reaches
// want), for 3 s at most; nil when the task is gone.
func (e *r7Env) await(tok *auth.Token, id, want string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		v := e.get(tok, id)
		if v == nil || v["status"] == want || (want == "" && v["status"] != "working") {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s: status %v after 3s, want %q", id, v["status"], want)
		}
		time.Sleep(time.Millisecond)
	}
}

// idle waits until no handler run of id is under way (3 s at most).
func (e *r7Env) idle(id string) {
	e.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		st := e.s.tasks
		st.mu.Lock()
		t := st.byID[id]
		running := t != nil && t.running
		st.mu.Unlock()
		if !running {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s still running after 3s", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// audit checks the store's books: the list and the map hold the same
// tasks, the bytes counted are the sum of the tasks' sizes, and both
// bounds hold.
func (e *r7Env) audit() {
	e.t.Helper()
	st := e.s.tasks
	st.mu.Lock()
	defer st.mu.Unlock()
	n, sum := 0, 0
	for t := st.head; t != nil; t = t.next {
		n++
		sum += t.size
		if st.byID[t.id] != t {
			e.t.Errorf("task %s is listed but not mapped", t.id)
		}
	}
	if n != len(st.byID) {
		e.t.Errorf("%d tasks listed, %d mapped", n, len(st.byID))
	}
	if st.bytes != sum {
		e.t.Errorf("byte accounting drifted: %d bytes counted, the %d tasks held size %d", st.bytes, n, sum)
	}
	if st.bytes < 0 || st.bytes > st.maxBytes || n > st.maxTasks {
		e.t.Errorf("bounds broken: %d bytes (max %d), %d tasks (max %d)", st.bytes, st.maxBytes, n, st.maxTasks)
	}
}

// r7Sized is a task tool: StartTask, then (with "msg") sets a 1 KiB
// statusMessage, (with "block") waits for release or its Context, then
// answers "size" x's.
func r7Sized(release <-chan struct{}) Tool {
	return Tool{Name: "sized", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if c.Arg("msg") != nil {
			_ = c.Progress(0, 1, strings.Repeat("m", 1024))
		}
		if c.Arg("block") != nil {
			select {
			case <-release:
			case <-c.Context().Done():
				return c.Context().Err()
			}
		}
		n, _ := c.ArgInt("size")
		c.AddText(strings.Repeat("x", int(n)))
		return nil
	})}
}

// FAULT: runTask sets the task's terminal status before resizeLocked, so
// makeRoomLocked, which drops the oldest finished task first, drops the
// very task it makes room for when that task is the oldest; resizeLocked
// then counts its new size anyway. A long task outlived by newer short
// ones vanishes on completion, and its bytes stay counted forever.
func TestR7TaskFaultFinishingOldestTaskEvictsItself(t *testing.T) {
	release := make(chan struct{})
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, r7Sized(release))
	long := e.create(nil, "sized", `{"block":true,"size":6000}`)
	var short []string
	for range 3 {
		id := e.create(nil, "sized", `{"size":3000}`)
		e.await(nil, id, "completed")
		short = append(short, id)
	}
	close(release)
	e.idle(long)
	v := e.get(nil, long)
	if v == nil || v["status"] != "completed" {
		t.Errorf("the long task, completed with a result that fits once an older short one is dropped, is %v (nil: gone)", v)
	}
	if e.get(nil, short[2]) == nil {
		t.Errorf("the newest finished task was dropped")
	}
	e.audit()
}

// FAULT: same root. A result the budget cannot take even alone should
// fail the task with -32603 (TaskOptions.MaxBytes); instead the task
// drops itself, then counts its new size: the store keeps ~14 KiB of its
// 16 KiB for nothing, for ever, and refuses every later task of a few KiB
// with 503 "the task store is full" while it holds no task at all.
func TestR7TaskFaultOversizedResultLeaksBytesAndBricksStore(t *testing.T) {
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, r7Sized(nil))
	args := `{"pad":"` + strings.Repeat("p", 4000) + `","size":` + fmt.Sprint(16<<10-2048) + `}`
	id := e.create(nil, "sized", args)
	e.idle(id)
	v := e.get(nil, id)
	if v == nil || v["status"] != "failed" || !strings.Contains(fmt.Sprint(v["error"]), "byte budget") {
		t.Errorf("an oversized result: task %v, want failed with the byte budget's error", v)
	}
	e.audit()
	// The store is empty, or holds one failed task; a task the size of the
	// first must be accepted.
	if a := e.call(nil, "sized", `{"pad":"`+strings.Repeat("p", 4000)+`","size":1}`); a.Status != 200 || a.Code != 0 {
		t.Errorf("after one oversized result, a 4 KiB task is refused: %+v", a)
	}
}

// FAULT: same root, on tasks/cancel. Progress sets statusMessage without
// counting it (note); tasks/cancel resizes the now-cancelled task, which
// grew, and makeRoomLocked drops it, the oldest finished task: a
// cancelled task is gone at once instead of showing "cancelled".
func TestR7TaskFaultCancelledTaskEvictsItself(t *testing.T) {
	const maxBytes = 8192
	release := make(chan struct{})
	defer close(release)
	// The size a finished task of {"size":N} (N of 4 digits) is counted
	// at, from a store of its own.
	probe := r7New(t, nil, r7Sized(nil))
	pid := probe.create(nil, "sized", `{"size":1000}`)
	probe.await(nil, pid, "completed")
	probe.s.tasks.mu.Lock()
	base := probe.s.tasks.byID[pid].size - 1000
	probe.s.tasks.mu.Unlock()

	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: maxBytes})}, r7Sized(release))
	id := e.create(nil, "sized", `{"block":true,"msg":true,"pad":"`+strings.Repeat("p", 1000)+`"}`)
	deadline := time.Now().Add(3 * time.Second)
	for v := e.get(nil, id); v["statusMessage"] == nil; v = e.get(nil, id) {
		if time.Now().After(deadline) {
			t.Fatal("no statusMessage")
		}
		time.Sleep(time.Millisecond)
	}
	e.s.tasks.mu.Lock()
	sT := e.s.tasks.byID[id].size // the 1 KiB statusMessage is not in it
	e.s.tasks.mu.Unlock()
	// A finished task that fills the budget but for 300 bytes: the
	// cancelled task's message (1024) no longer fits beside it.
	n := maxBytes - sT - 300 - base
	if n < 1000 || n > 9999 {
		t.Fatalf("sizes: task %d, base %d", sT, base)
	}
	e.await(nil, e.create(nil, "sized", fmt.Sprintf(`{"size":%d}`, n)), "completed")
	e.audit()
	if a := e.do(nil, "tasks/cancel", id, ""); a.Code != 0 {
		t.Fatalf("cancel: %+v", a)
	}
	if v := e.get(nil, id); v == nil || v["status"] != "cancelled" {
		t.Errorf("a task just cancelled is %v (nil: gone), want cancelled", v)
	}
	e.audit()
}

// FAULT: same root, on tasks/update. An answer too large for the budget
// is meant to fail the task (-32603, serveTasksUpdate sets taskFailed and
// errTaskTooLarge), but the answers are kept and the second resizeLocked
// drops the failed task: it vanishes (-32602 unknown task).
func TestR7TaskFaultOversizedAnswerMakesTaskVanish(t *testing.T) {
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if _, err := c.Elicit("k", []byte(`{"message":"?"}`)); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, ask)
	id := e.create(nil, "ask", `{}`)
	e.await(nil, id, "input_required")
	big := `"inputResponses":{"k":{"action":"accept","content":{"v":"` + strings.Repeat("a", 32<<10) + `"}}},`
	if a := e.do(nil, "tasks/update", id, big); a.Code != 0 {
		t.Fatalf("update: %+v", a)
	}
	v := e.get(nil, id)
	if v == nil || v["status"] != "failed" || !strings.Contains(fmt.Sprint(v["error"]), "byte budget") {
		t.Errorf("after an oversized answer the task is %v (nil: gone), want failed with the byte budget's error", v)
	}
	e.audit()
}

// r7Held is what t keeps now (resizeLocked's measure of it), against
// which its counted size is checked.
func r7Held(t *task) int { return sizeOf(t) }

// r7AskTool asks for "k" in its task, then answers "done".
func r7AskTool() Tool {
	return Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if _, err := c.Elicit("k", []byte(`{"message":"?"}`)); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})}
}

// FAULT: serveTasksUpdate appends the answers to t.answers before it
// knows the budget takes them, and does not take them back when it does
// not: the failed task keeps them, counted at its old size. (On d92f8fb
// the task then dropped itself; since 6b53fc1 it is kept, so each failed
// task can hold a whole request body uncounted: one per token holder
// under WithAuth, whose share refusal stops before the store's loop.)
func TestR7TaskFaultOversizedAnswerKeptUncounted(t *testing.T) {
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, r7AskTool())
	id := e.create(nil, "ask", `{}`)
	e.await(nil, id, "input_required")
	e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"action":"accept","content":{"v":"`+strings.Repeat("a", 32<<10)+`"}}},`)
	e.idle(id)
	e.audit()
	st := e.s.tasks
	st.mu.Lock()
	defer st.mu.Unlock()
	for tk := st.head; tk != nil; tk = tk.next {
		if h := r7Held(tk); h > tk.size || h > st.maxBytes {
			t.Errorf("task %s (%s) holds %d bytes, counted %d, MaxBytes %d", tk.id, taskStatusNames[tk.status], h, tk.size, st.maxBytes)
		}
	}
}

// FAULT: makeRoomLocked (d92f8fb) / roomLocked (6b53fc1) drops finished
// tasks one by one and only then finds that the room asked for cannot be
// made: an answer larger than the whole budget, from one client, wipes
// every finished task in the store (other clients' unread results) and
// still fails. It should check that enough can be freed before dropping
// anything.
func TestR7TaskFaultImpossibleRoomStillEvictsFinishedTasks(t *testing.T) {
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxBytes: 16 << 10})}, r7AskTool(), r7Sized(nil))
	var done []string
	for range 3 {
		id := e.create(nil, "sized", `{"size":100}`)
		e.await(nil, id, "completed")
		done = append(done, id)
	}
	id := e.create(nil, "ask", `{}`)
	e.await(nil, id, "input_required")
	e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"action":"accept","content":{"v":"`+strings.Repeat("a", 32<<10)+`"}}},`)
	e.idle(id)
	for _, d := range done {
		if e.get(nil, d) == nil {
			t.Errorf("finished task %s was dropped to make room that could not be made", d)
		}
	}
}

// FAULT (minor): a TTL under a millisecond is taken as it is but
// advertised as ttlMs 1: the task is gone before its advertised TTL (here
// on the very next tasks/get). WithTasks should round TTL up to whole
// milliseconds (as PollInterval is) or refuse it.
func TestR7TaskFaultSubMillisecondTTLShorterThanTtlMs(t *testing.T) {
	s, err := New(Info{Name: "r7", Version: "1"}, WithTasks(TaskOptions{TTL: time.Microsecond}))
	if err != nil {
		return // refused: fine
	}
	t.Cleanup(s.Close)
	if err := s.AddTool(r7Sized(nil)); err != nil {
		t.Fatal(err)
	}
	e := &r7Env{t: t, s: s, ep: s.Endpoint()}
	start := time.Now() // before the task is made: its age is at most time.Since(start)
	a := e.call(nil, "sized", `{"size":1}`)
	m := obj(t, a.Result)
	id, _ := m["taskId"].(string)
	ttl, _ := m["ttlMs"].(float64)
	// Gone is a fault only while the advertised ttlMs cannot have passed:
	// on a loaded machine (CI's -race stage) the next tasks/get may come
	// more than a millisecond later, and then the task has rightly expired.
	if e.get(nil, id) == nil {
		if age := time.Since(start); age < time.Duration(ttl*float64(time.Millisecond)) {
			t.Errorf("a task advertised with ttlMs %v is gone on the next tasks/get, at most %v after it was made", m["ttlMs"], age)
		}
	}
}

// r7Keys returns the member names of a JSON object, sorted.
func r7Keys(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return strings.Join(ks, ",")
}

// TestR7TaskShape: CreateTaskResult, DetailedTask in every status, and
// the answers of tasks/update and tasks/cancel, member by member.
func TestR7TaskShape(t *testing.T) {
	release := make(chan struct{})
	tools := []Tool{r7Sized(release),
		{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			_, err := c.Elicit("k", []byte(`{"message":"?"}`))
			return err
		})},
		{Name: "proto", Task: TaskRequired, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			return &fastserver.Error{Code: -32042, Message: "backend", Data: []byte(`{"x":1}`)}
		})},
		{Name: "toolfail", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			return errors.New("broke")
		})},
	}
	e := r7New(t, []Option{WithTasks(TaskOptions{TTL: 90 * time.Second, PollInterval: 1500 * time.Microsecond})}, tools...)
	defer close(release)
	a := e.call(nil, "sized", `{"block":true}`)
	if got := r7Keys(t, a.Result); got != "_meta,createdAt,lastUpdatedAt,pollIntervalMs,resultType,status,taskId,ttlMs" {
		t.Errorf("CreateTaskResult members %s: %s", got, a.Result)
	}
	var ct struct {
		ResultType, TaskID, Status, CreatedAt, LastUpdatedAt string
		TTLMs, PollIntervalMs                                json.Number
	}
	d := json.NewDecoder(bytes.NewReader(a.Result))
	d.UseNumber()
	if err := d.Decode(&ct); err != nil {
		t.Fatal(err)
	}
	if ct.ResultType != "task" || ct.Status != "working" || ct.TTLMs != "90000" || ct.PollIntervalMs != "2" {
		t.Errorf("CreateTaskResult %s", a.Result)
	}
	for _, ts := range []string{ct.CreatedAt, ct.LastUpdatedAt} {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
			t.Errorf("timestamp %q: %v", ts, err)
		}
	}
	working := e.do(nil, "tasks/get", ct.TaskID, "")
	if got := r7Keys(t, working.Result); got != "_meta,createdAt,lastUpdatedAt,pollIntervalMs,resultType,status,taskId,ttlMs" {
		t.Errorf("working DetailedTask members %s", got)
	}
	// Each status carries its own member only.
	for _, c := range []struct{ tool, status, member string }{
		{"ask", "input_required", "inputRequests"},
		{"proto", "failed", "error"},
		{"toolfail", "completed", "result"},
	} {
		id := e.create(nil, c.tool, `{}`)
		v := e.await(nil, id, c.status)
		for _, m := range []string{"result", "error", "inputRequests"} {
			if _, has := v[m]; has != (m == c.member) {
				t.Errorf("%s (%s): member %s present=%v: %v", c.tool, c.status, m, has, v)
			}
		}
		switch c.tool {
		case "proto":
			if er, _ := v["error"].(map[string]any); er["code"] != float64(-32042) || fmt.Sprint(er["data"]) != "map[x:1]" {
				t.Errorf("failed task's error %v", v["error"])
			}
		case "toolfail":
			if r, _ := v["result"].(map[string]any); r["isError"] != true {
				t.Errorf("a tool failure is a completed task with isError: %v", v["result"])
			}
		case "ask":
			ack := e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"action":"decline"}},`)
			if r7Keys(t, ack.Result) != "_meta,resultType" || obj(t, ack.Result)["resultType"] != "complete" {
				t.Errorf("tasks/update answer %s", ack.Result)
			}
		}
	}
	ack := e.do(nil, "tasks/cancel", ct.TaskID, "")
	if r7Keys(t, ack.Result) != "_meta,resultType" || obj(t, ack.Result)["resultType"] != "complete" {
		t.Errorf("tasks/cancel answer %s", ack.Result)
	}
	v := e.get(nil, ct.TaskID)
	if v["status"] != "cancelled" || v["result"] != nil || v["error"] != nil || v["inputRequests"] != nil {
		t.Errorf("cancelled task %v", v)
	}
	// A cancel of a finished task acknowledges and changes nothing.
	if a := e.do(nil, "tasks/cancel", ct.TaskID, ""); a.Code != 0 || e.get(nil, ct.TaskID)["status"] != "cancelled" {
		t.Errorf("second cancel %+v", a)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		more := ""
		if m == "tasks/update" {
			more = `"inputResponses":{},`
		}
		if a := e.do(nil, m, "nope", more); a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "taskId" {
			t.Errorf("%s on an unknown task: %+v", m, a)
		}
	}
}

// TestR7TaskGating: a client that does not declare the extension, and
// 2025-xx, never reach tasks.
func TestR7TaskGating(t *testing.T) {
	required := Tool{Name: "req", Task: TaskRequired, Handler: ToolFunc(func(c *Call) error { c.AddText("ran"); return nil })}
	e := r7New(t, nil, required, r7Sized(nil))
	id := e.create(nil, "sized", `{}`)
	metas := map[string]string{
		"no extensions":     meta26,
		"tasks not object":  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":true}}}`,
		"extensions array":  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":["io.modelcontextprotocol/tasks"]}}`,
		"other extension":   `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/task":{}}}}`,
		"caps at top level": `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`,
	}
	for name, meta := range metas {
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			a := exchange(t, e.ep, v26(m, HeaderName, id), req(m, `"taskId":"`+id+`","inputResponses":{},`+meta))
			if a.Status != 400 || a.Code != CodeMissingCapability || !strings.Contains(string(a.Data), ExtensionTasks) {
				t.Errorf("%s, %s: %+v", name, m, a)
			}
		}
		a := exchange(t, e.ep, v26("tools/call", HeaderName, "req"), req("tools/call", `"name":"req","arguments":{},`+meta))
		if a.Status != 400 || a.Code != CodeMissingCapability {
			t.Errorf("%s, TaskRequired tool: %+v", name, a)
		}
	}
	if a := exchange(t, e.ep, hdr{HeaderProtocolVersion, "2025-11-25"}, req("tools/call", `"name":"req","arguments":{}`)); a.Status != 400 || a.Code != CodeMissingCapability {
		t.Errorf("TaskRequired under 2025-11-25: %+v", a)
	}
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			a := exchange(t, e.ep, hdr{HeaderProtocolVersion, v, HeaderName, id}, req(m, `"taskId":"`+id+`",`+r7Meta))
			if a.Code != decode.CodeMethodNotFound {
				t.Errorf("%s under %s: %+v", m, v, a)
			}
		}
	}
	// A server without tasks: unknown methods under 2026-07-28 too.
	_, plain := testServer(t)
	if a := exchange(t, plain, v26("tasks/get", HeaderName, id), req("tasks/get", `"taskId":"`+id+`",`+r7Meta)); a.Code != decode.CodeMethodNotFound {
		t.Errorf("tasks/get on a server without tasks: %+v", a)
	}
}

// TestR7TaskOddParams: hostile params on tasks/*: never a panic, always
// a refusal, never a task found by accident.
func TestR7TaskOddParams(t *testing.T) {
	e := r7New(t, nil, r7Sized(nil), Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		_, err := c.Elicit("k", nil)
		return err
	})})
	id := e.create(nil, "ask", `{}`)
	e.await(nil, id, "input_required")
	huge := strings.Repeat("Z", 200<<10)
	esc := `\u00` + fmt.Sprintf("%x", id[0]) + id[1:] // the id with its first byte escaped
	cases := []struct {
		name, method, header, body string
	}{
		{"no params", "tasks/get", id, `{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`},
		{"params array", "tasks/get", id, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":["` + id + `"]}`},
		{"taskId number", "tasks/get", "1", req("tasks/get", `"taskId":1,`+r7Meta)},
		{"taskId null", "tasks/cancel", "null", req("tasks/cancel", `"taskId":null,`+r7Meta)},
		{"taskId object", "tasks/cancel", id, req("tasks/cancel", `"taskId":{"id":"`+id+`"},`+r7Meta)},
		{"taskId twice", "tasks/get", id, req("tasks/get", `"taskId":"`+id+`","taskId":"`+id+`",`+r7Meta)},
		{"taskId missing", "tasks/get", id, req("tasks/get", r7Meta)},
		{"taskId huge", "tasks/get", huge, req("tasks/get", `"taskId":"`+huge+`",`+r7Meta)},
		{"taskId empty", "tasks/get", "", req("tasks/get", `"taskId":"",`+r7Meta)},
		{"header differs", "tasks/cancel", id + "x", req("tasks/cancel", `"taskId":"`+id+`",`+r7Meta)},
		{"no header", "tasks/cancel", "", req("tasks/cancel", `"taskId":"`+id+`",`+r7Meta)},
		{"_meta array", "tasks/get", id, req("tasks/get", `"taskId":"`+id+`","_meta":[]`)},
		{"_meta twice", "tasks/get", id, req("tasks/get", `"taskId":"`+id+`",`+r7Meta+`,`+r7Meta)},
		{"update, no inputResponses", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`",`+r7Meta)},
		{"update, inputResponses array", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`","inputResponses":[{"k":{}}],`+r7Meta)},
		{"update, value not object", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`","inputResponses":{"k":"yes"},`+r7Meta)},
		{"update, key twice", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`","inputResponses":{"k":{},"k":{}},`+r7Meta)},
		{"update, escaped key twice", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`","inputResponses":{"k":{},"\u006b":{}},`+r7Meta)},
		{"update, inputResponses twice", "tasks/update", id, req("tasks/update", `"taskId":"`+id+`","inputResponses":{"k":{}},"inputResponses":{"k":{}},`+r7Meta)},
	}
	for _, c := range cases {
		h := hdr{HeaderProtocolVersion, "2026-07-28", HeaderMethod, c.method}
		if c.header != "" {
			h = append(h, HeaderName, c.header)
		}
		a := exchange(t, e.ep, h, c.body)
		if a.Code == 0 || (a.Status != 200 && a.Status != 400) {
			t.Errorf("%s: %+v", c.name, a)
		}
		if len(a.Msg) > 1024 {
			t.Errorf("%s: the refusal echoes %d bytes", c.name, len(a.Msg))
		}
	}
	// The task is untouched by all that.
	if v := e.get(nil, id); v["status"] != "input_required" {
		t.Fatalf("after odd params the task is %v", v)
	}
	// An escaped taskId names the same task, header and body agreeing.
	a := exchange(t, e.ep, v26("tasks/get", HeaderName, id), req("tasks/get", `"taskId":"`+esc+`",`+r7Meta))
	if a.Code != 0 || obj(t, a.Result)["taskId"] != id {
		t.Errorf("escaped taskId: %+v", a)
	}
	// An escaped answer key answers the pending request.
	if a := e.do(nil, "tasks/update", id, `"inputResponses":{"\u006b":{"action":"accept","content":{}}},`); a.Code != 0 {
		t.Fatalf("update %+v", a)
	}
	if v := e.await(nil, id, ""); v["status"] != "completed" {
		t.Errorf("after an escaped key's answer: %v", v)
	}
}

// TestR7TaskPanicsFailTheTask: a panic in a task (the handler's own, or
// Request() being nil there) fails the task and never reaches the
// process; so does one in a re-run after tasks/update.
func TestR7TaskPanicsFailTheTask(t *testing.T) {
	tools := []Tool{
		{Name: "boom", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			panic("boom")
		})},
		{Name: "req", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			c.AddText(string(c.Request().Header("X"))) // nil in a task
			return nil
		})},
		{Name: "later", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			if _, err := c.Elicit("k", nil); err != nil {
				return err
			}
			var m map[string]int
			//lint:ignore SA5000 the panic in a re-run is the point
			m["x"]++ // nil map
			return nil
		})},
	}
	e := r7New(t, nil, tools...)
	for _, tool := range []string{"boom", "req", "later"} {
		id := e.create(nil, tool, `{}`)
		if tool == "later" {
			e.await(nil, id, "input_required")
			e.do(nil, "tasks/update", id, `"inputResponses":{"k":{"action":"accept","content":{}}},`)
		}
		v := e.await(nil, id, "failed")
		if er, _ := v["error"].(map[string]any); er["code"] != float64(decode.CodeInternalError) {
			t.Errorf("%s: %v", tool, v)
		}
	}
	e.audit()
}

// TestR7TaskOwnerIsolation: under WithAuth another token holder (or a
// request without a token) cannot see, answer or cancel a task.
func TestR7TaskOwnerIsolation(t *testing.T) {
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		v, err := c.Elicit("k", nil)
		if err != nil {
			return err
		}
		c.AddText(string(v))
		return nil
	})}
	e := r7New(t, nil, ask)
	alice := &auth.Token{Issuer: "https://as", Subject: "alice", ClientID: "app"}
	others := map[string]*auth.Token{
		"bob":             {Issuer: "https://as", Subject: "bob", ClientID: "app"},
		"alice elsewhere": {Issuer: "https://as", Subject: "alice", ClientID: "other-app"},
		"other issuer":    {Issuer: "https://evil", Subject: "alice", ClientID: "app"},
		"no token":        nil,
	}
	id := e.create(alice, "ask", `{}`)
	e.await(alice, id, "input_required")
	for name, tok := range others {
		for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			a := e.do(tok, m, id, `"inputResponses":{"k":{"action":"accept","content":{"by":"`+name+`"}}},`)
			if a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "taskId" {
				t.Errorf("%s, %s: %+v", name, m, a)
			}
		}
	}
	if v := e.get(alice, id); v["status"] != "input_required" {
		t.Fatalf("after the others: %v", v)
	}
	e.do(alice, "tasks/update", id, `"inputResponses":{"k":{"action":"accept","content":{"by":"alice"}}},`)
	v := e.await(alice, id, "completed")
	if !strings.Contains(fmt.Sprint(v["result"]), `alice`) {
		t.Errorf("result %v", v["result"])
	}
	// A task made without a token is not a token holder's either.
	anon := e.create(nil, "ask", `{}`)
	if e.get(alice, anon) != nil {
		t.Errorf("alice sees an anonymous task")
	}
}

// TestR7TaskLateOutcomeStaysCancelled: a handler that ignores its Context
// and returns after tasks/cancel or Server.Close does not overwrite
// "cancelled".
func TestR7TaskLateOutcomeStaysCancelled(t *testing.T) {
	gate := make(chan struct{})
	var ended atomic.Int32
	stubborn := Tool{Name: "stubborn", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		defer ended.Add(1)
		<-gate // ignores the Context
		c.AddText("late")
		return nil
	})}
	e := r7New(t, nil, stubborn)
	a, b := e.create(nil, "stubborn", `{}`), e.create(nil, "stubborn", `{}`)
	e.do(nil, "tasks/cancel", a, "")
	e.s.Close()
	close(gate)
	deadline := time.Now().Add(3 * time.Second)
	for ended.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	e.idle(a)
	e.idle(b)
	for _, id := range []string{a, b} {
		if v := e.get(nil, id); v["status"] != "cancelled" || v["result"] != nil {
			t.Errorf("%s: %v", id, v)
		}
	}
	if a := e.call(nil, "stubborn", `{}`); a.Status != 503 {
		t.Errorf("a task after Close: %+v", a)
	}
	e.audit()
}

// TestR7TaskRerunModel: the handler runs again from the start in the task
// with every answer gathered so far; a partial tasks/update keeps the task
// input_required with the unanswered keys only and runs nothing; stray
// and repeated keys are ignored.
func TestR7TaskRerunModel(t *testing.T) {
	var requestRuns, taskRuns atomic.Int32
	var mu sync.Mutex
	var seen []string
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		pre, err := c.Elicit("pre", nil) // before StartTask: on the request
		if err != nil {
			return err
		}
		if !c.InTask() {
			requestRuns.Add(1)
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		taskRuns.Add(1)
		a, e1 := c.Elicit("a", nil)
		b, e2 := c.Elicit("b", nil)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s|%s|%s", pre, a, b))
		mu.Unlock()
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		c.AddText(fmt.Sprintf("%s %s %s", pre, a, b))
		return nil
	})}
	e := r7New(t, nil, ask)
	// Round one on the request: input_required for "pre".
	a := e.call(nil, "ask", `{}`)
	st, _ := obj(t, a.Result)["requestState"].(string)
	if st == "" {
		t.Fatalf("first round %s", a.Result)
	}
	id := e.create(nil, "ask", `{},"inputResponses":{"pre":{"v":0}},"requestState":`+string(decode.AppendString(nil, st)))
	v := e.await(nil, id, "input_required")
	if r, _ := v["inputRequests"].(map[string]any); len(r) != 2 || r["a"] == nil || r["b"] == nil {
		t.Fatalf("inputRequests %v", v["inputRequests"])
	}
	e.do(nil, "tasks/update", id, `"inputResponses":{"a":{"v":1},"zz":{"v":9}},`)
	v = e.get(nil, id)
	if r, _ := v["inputRequests"].(map[string]any); v["status"] != "input_required" || len(r) != 1 || r["b"] == nil {
		t.Fatalf("after a partial update: %v", v)
	}
	if taskRuns.Load() != 1 {
		t.Errorf("a partial update ran the handler: %d task runs", taskRuns.Load())
	}
	e.do(nil, "tasks/update", id, `"inputResponses":{"a":{"v":"again"},"b":{"v":2}},`)
	v = e.await(nil, id, "completed")
	if !strings.Contains(fmt.Sprint(v["result"]), `{"v":0} {"v":1} {"v":2}`) {
		t.Errorf("result %v", v["result"])
	}
	if taskRuns.Load() != 2 {
		t.Errorf("%d task runs, want 2", taskRuns.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[1] != `{"v":0}|{"v":1}|{"v":2}` {
		t.Errorf("the runs saw %q", seen)
	}
}

// TestR7TaskTTL: a task is found for its whole TTL, gone after, and a
// task still running then sees its Context end.
func TestR7TaskTTL(t *testing.T) {
	ended := make(chan struct{})
	tools := []Tool{r7Sized(nil), {Name: "forever", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		<-c.Context().Done()
		close(ended)
		return c.Context().Err()
	})}}
	e := r7New(t, []Option{WithTasks(TaskOptions{TTL: 300 * time.Millisecond})}, tools...)
	start := time.Now()
	done := e.create(nil, "sized", `{"size":1}`)
	run := e.create(nil, "forever", `{}`)
	e.await(nil, done, "completed")
	for time.Since(start) < 200*time.Millisecond {
		if e.get(nil, done) == nil || e.get(nil, run) == nil {
			t.Fatalf("a task gone %v into a 300ms TTL", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the running task's Context did not end at its TTL")
	}
	time.Sleep(50 * time.Millisecond)
	if e.get(nil, done) != nil || e.get(nil, run) != nil {
		t.Errorf("tasks found past their TTL")
	}
	e.audit()
	e.s.tasks.mu.Lock()
	n, b := len(e.s.tasks.byID), e.s.tasks.bytes
	e.s.tasks.mu.Unlock()
	if n != 0 || b != 0 {
		t.Errorf("after expiry: %d tasks, %d bytes", n, b)
	}
}

// TestR7TaskBoundsHoldOverCycles: many create / partial update / cancel
// cycles keep the books exact and within the bounds, a full store of
// running tasks refuses a new one (503) without dropping any, and
// cancelled tasks make room.
func TestR7TaskBoundsHoldOverCycles(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		_ = c.Progress(0, 1, "asking")
		a, e1 := c.Elicit("a", nil)
		_, e2 := c.Elicit("b", nil)
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		c.AddText(string(a))
		return nil
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxTasks: 8, MaxBytes: 64 << 10})}, ask, r7Sized(release))
	for i := range 200 {
		id := e.create(nil, "ask", `{"pad":"`+strings.Repeat("q", i%50*10)+`"}`)
		e.await(nil, id, "input_required")
		e.do(nil, "tasks/update", id, `"inputResponses":{"a":{"v":"`+strings.Repeat("a", i%7*100)+`"}},`)
		if i%3 == 0 {
			e.do(nil, "tasks/update", id, `"inputResponses":{"b":{}},`)
			e.await(nil, id, "completed")
		} else {
			e.do(nil, "tasks/cancel", id, "")
		}
		e.audit()
		if t.Failed() {
			t.Fatalf("cycle %d", i)
		}
	}
	var running []string
	for range 8 {
		running = append(running, e.create(nil, "sized", `{"block":true}`))
	}
	if a := e.call(nil, "sized", `{}`); a.Status != 503 || a.Code != decode.CodeInternalError {
		t.Errorf("a full store of running tasks: %+v", a)
	}
	for _, id := range running {
		if v := e.get(nil, id); v == nil || v["status"] != "working" {
			t.Errorf("running task %s: %v", id, v)
		}
	}
	e.do(nil, "tasks/cancel", running[0], "")
	// The room comes once its handler has returned: cancellation is
	// cooperative, and a handler still running counts against MaxTasks
	// (TestReview15FaultCancelledRunningTaskFreesItsSlot). This one
	// returns at once on its context's end.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		a := e.call(nil, "sized", `{}`)
		if a.Code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a cancelled task does not make room once its handler returned: %+v", a)
		}
	}
	e.audit()
}

// TestR7TaskRaceHammer: tasks/update, tasks/cancel and tasks/get at once
// on the same tasks, then Server.Close: no data race (go test -race),
// never two runs of one task at once, and a cancelled task stays
// cancelled.
func TestR7TaskRaceHammer(t *testing.T) {
	var mu sync.Mutex
	inflight := map[*task]int{}
	var overlap atomic.Int32
	ask := Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		mu.Lock()
		inflight[c.task]++
		if inflight[c.task] > 1 {
			overlap.Add(1)
		}
		mu.Unlock()
		defer func() { mu.Lock(); inflight[c.task]--; mu.Unlock() }()
		time.Sleep(200 * time.Microsecond)
		_ = c.Progress(0, 1, "step")
		if _, err := c.Elicit("a", nil); err != nil {
			return err
		}
		if _, err := c.Elicit("b", nil); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})}
	e := r7New(t, []Option{WithTasks(TaskOptions{MaxTasks: 64})}, ask)
	var ids []string
	for range 16 {
		ids = append(ids, e.create(nil, "ask", `{}`))
	}
	var wg sync.WaitGroup
	stop := time.Now().Add(400 * time.Millisecond)
	cancelled := make([]atomic.Bool, len(ids))
	for w := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				k := (i + w) % len(ids)
				id := ids[k]
				switch (i + w) % 5 {
				case 0, 1:
					e.do(nil, "tasks/update", id, `"inputResponses":{"a":{},"b":{}},`)
				case 2:
					e.do(nil, "tasks/update", id, `"inputResponses":{"a":{}},`)
				case 3:
					if w == 0 && i%7 == 0 {
						e.do(nil, "tasks/cancel", id, "")
						if v := e.get(nil, id); v != nil && v["status"] == "cancelled" {
							cancelled[k].Store(true)
						}
					}
				default:
					was := cancelled[k].Load() // before the get: a get may overtake the cancel
					v := e.get(nil, id)
					if was && v != nil && v["status"] != "cancelled" {
						t.Errorf("task %s cancelled, then %v", id, v["status"])
					}
				}
			}
		})
	}
	wg.Wait()
	e.s.Close()
	for _, id := range ids {
		e.idle(id)
		if v := e.get(nil, id); v == nil || (v["status"] != "cancelled" && v["status"] != "completed") {
			t.Errorf("after Close: %v", v)
		}
	}
	if n := overlap.Load(); n > 0 {
		t.Errorf("a task's handler ran twice at once %d times", n)
	}
	e.audit()
}
