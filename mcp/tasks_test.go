package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// metaTasks is the _meta of a 2026-07-28 request whose client declares
// the tasks extension (and elicitation).
const metaTasks = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// taskView is a CreateTaskResult or DetailedTask, decoded.
type taskView struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          json.Number     `json:"ttlMs"`
	PollIntervalMs json.Number     `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
	InputRequests  map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	Content []struct{ Text string } `json:"content"`
	Has     map[string]bool         `json:"-"`
}

func viewOf(t testing.TB, a answer) taskView {
	t.Helper()
	if a.Status != 200 || a.Code != 0 {
		t.Fatalf("not a result: %+v", a)
	}
	var v taskView
	if err := json.Unmarshal(a.Result, &v); err != nil {
		t.Fatalf("%s: %v", a.Result, err)
	}
	v.Has = map[string]bool{}
	for k := range obj(t, a.Result) {
		v.Has[k] = true
	}
	return v
}

// tasksTest is a server with task tools, and helpers to call them.
type tasksTest struct {
	t  *testing.T
	s  *Server
	ep *fastserver.Endpoint
}

func (tt *tasksTest) call(tool, args, meta string) answer {
	tt.t.Helper()
	return exchange(tt.t, tt.ep, v26("tools/call", HeaderName, tool), req("tools/call", `"name":"`+tool+`","arguments":`+args+`,`+meta))
}

func (tt *tasksTest) method(method, id, more string) answer {
	tt.t.Helper()
	return exchange(tt.t, tt.ep, v26(method, HeaderName, id), req(method, `"taskId":"`+id+`",`+more+metaTasks))
}

func (tt *tasksTest) get(id string) taskView {
	tt.t.Helper()
	return viewOf(tt.t, tt.method("tasks/get", id, ""))
}

// await polls tasks/get until the task's status is want, for at most 5 s.
func (tt *tasksTest) await(id, want string) taskView {
	tt.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := tt.get(id)
		if v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("task %s: status %q, want %q", id, v.Status, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func newTasksTest(t *testing.T, opts ...Option) *tasksTest {
	t.Helper()
	s, err := New(Info{Name: "tasks", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tt := &tasksTest{t: t, s: s}
	t.Cleanup(s.Close)
	return tt
}

func (tt *tasksTest) add(tools ...Tool) {
	tt.t.Helper()
	for _, tl := range tools {
		if tl.InputSchema == "" {
			tl.InputSchema = `{"type":"object"}`
		}
		if err := tt.s.AddTool(tl); err != nil {
			tt.t.Fatal(err)
		}
	}
	tt.ep = tt.s.Endpoint()
	if tt.ep.Err != nil {
		tt.t.Fatal(tt.ep.Err)
	}
}

// TestTaskLifecycle: a task's creation, its working state, the handler
// run again in the task with its arguments copied, and its result.
func TestTaskLifecycle(t *testing.T) {
	tt := newTasksTest(t)
	release := make(chan struct{})
	var runs, inTask atomic.Int32
	tt.add(Tool{Name: "job", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		runs.Add(1)
		text, err := c.ArgString("text")
		if err != nil {
			return err
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		inTask.Add(1)
		if !c.InTask() || c.Request() != nil || c.TaskID() == "" {
			return errors.New("not in a task")
		}
		c.AddText("task " + c.TaskID() + ": ")
		if err := c.Progress(1, 2, "halfway"); err != nil {
			return err
		}
		select {
		case <-release:
		case <-c.Context().Done():
			return c.Context().Err()
		}
		c.AddText("done: " + string(text))
		return c.SetStructuredContent([]byte(`{"n":1}`))
	})})

	for i, text := range []string{"a", `q\"uote`, "ünï"} {
		a := tt.call("job", `{"text":"`+text+`"}`, metaTasks)
		v := viewOf(t, a)
		if v.ResultType != "task" || v.Status != "working" || v.TaskID == "" || v.Has["result"] || v.Has["content"] || v.Has["task"] {
			t.Fatalf("CreateTaskResult %s", a.Result)
		}
		for _, ts := range []string{v.CreatedAt, v.LastUpdatedAt} {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("timestamp %q: %v", ts, err)
			}
		}
		if v.TTLMs != "3600000" || v.PollIntervalMs != "1000" {
			t.Errorf("ttlMs %s pollIntervalMs %s", v.TTLMs, v.PollIntervalMs)
		}
		if !v.Has["_meta"] || v.Has["ttl"] || v.Has["pollInterval"] || v.Has["requestState"] {
			t.Errorf("members of %s", a.Result)
		}
		// tasks/get at once finds it (durable create), working.
		g := tt.await(v.TaskID, "working")
		if g.ResultType != "complete" || g.TaskID != v.TaskID || g.Has["result"] || g.Has["error"] || g.Has["inputRequests"] {
			t.Errorf("working DetailedTask %+v", g)
		}
		deadline := time.Now().Add(5 * time.Second)
		for tt.get(v.TaskID).StatusMessage != "halfway" && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		release <- struct{}{}
		g = tt.await(v.TaskID, "completed")
		var res struct {
			ResultType        string
			Content           []struct{ Type, Text string }
			StructuredContent map[string]int
			IsError           bool
		}
		if err := json.Unmarshal(g.Result, &res); err != nil || g.Has["error"] || g.Has["inputRequests"] {
			t.Fatalf("completed %s: %v", g.Result, err)
		}
		want := "done: " + string(decode.AppendUnquoted(nil, []byte(`"`+text+`"`)))
		if len(res.Content) != 2 || res.Content[0].Text != "task "+v.TaskID+": " || res.Content[1].Text != want || res.StructuredContent["n"] != 1 || res.IsError {
			t.Errorf("result %s, want text %q", g.Result, want)
		}
		if strings.Contains(string(g.Result), "related-task") {
			t.Errorf("related-task _meta in %s", g.Result)
		}
		if runs.Load() != int32(2*(i+1)) || inTask.Load() != int32(i+1) {
			t.Errorf("runs %d, in task %d after %d tasks", runs.Load(), inTask.Load(), i+1)
		}
	}
}

// TestTaskWithoutExtension: a client that does not declare the extension
// gets a TaskOptional tool's result on its request; a TaskRequired tool
// is refused with -32021 before its handler runs, under every version.
func TestTaskWithoutExtension(t *testing.T) {
	tt := newTasksTest(t)
	var required atomic.Int32
	tt.add(Tool{Name: "opt", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("sync " + fmt.Sprint(c.InTask()) + c.TaskID())
		return nil
	})}, Tool{Name: "req", Task: TaskRequired, Handler: ToolFunc(func(c *Call) error {
		required.Add(1)
		return c.StartTask()
	})}, Tool{Name: "plain", Handler: ToolFunc(func(c *Call) error {
		return c.StartTask()
	})})

	for _, meta := range []string{meta26,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{}}}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":true}}}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"io.modelcontextprotocol/tasks":{}}}`,
	} {
		v := viewOf(t, tt.call("opt", `{}`, meta))
		if v.ResultType != "complete" || v.TaskID != "" || len(v.Content) != 1 || v.Content[0].Text != "sync false" {
			t.Errorf("%s: %+v", meta, v)
		}
		a := tt.call("req", `{}`, meta)
		if a.Status != 400 || a.Code != CodeMissingCapability || !strings.Contains(string(a.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
			t.Errorf("required tool: %+v", a)
		}
	}
	// Under 2025-11-25 there are no tasks.
	a := exchange(t, tt.ep, hdr{HeaderProtocolVersion, "2025-11-25"}, req("tools/call", `"name":"req","arguments":{}`))
	if a.Code != CodeMissingCapability {
		t.Errorf("2025-11-25 required tool: %+v", a)
	}
	a = exchange(t, tt.ep, hdr{HeaderProtocolVersion, "2025-11-25"}, req("tools/call", `"name":"opt","arguments":{},`+metaTasks))
	if v := viewOf(t, a); v.Has["taskId"] || len(v.Content) != 1 || v.Content[0].Text != "sync false" {
		t.Errorf("2025-11-25 optional tool: %s", a.Result)
	}
	if required.Load() != 0 {
		t.Errorf("a refused required tool's handler ran %d times", required.Load())
	}
	// StartTask on a tool registered without Task is a tool failure.
	if v := viewOf(t, tt.call("plain", `{}`, metaTasks)); !v.Has["isError"] || v.Has["taskId"] {
		t.Errorf("StartTask without Task: %+v", v)
	}
}

// TestTaskMethodsGated: the tasks methods need the extension in the
// request's capabilities (-32021), exist only under 2026-07-28, and only
// on a server with tasks.
func TestTaskMethodsGated(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "opt", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error { return nil })})
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		a := exchange(t, tt.ep, v26(m, HeaderName, "x"), req(m, `"taskId":"x","inputResponses":{},`+meta26))
		if a.Status != 400 || a.Code != CodeMissingCapability {
			t.Errorf("%s without the extension: %+v", m, a)
		}
		a = exchange(t, tt.ep, hdr{HeaderProtocolVersion, "2025-11-25"}, req(m, `"taskId":"x","inputResponses":{},`+metaTasks))
		if a.Status != 404 || a.Code != decode.CodeMethodNotFound {
			t.Errorf("%s under 2025-11-25: %+v", m, a)
		}
		a = tt.method(m, "nope", `"inputResponses":{},`)
		if a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "taskId" {
			t.Errorf("%s of an unknown task: %+v", m, a)
		}
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if a := tt.method(m, "x", ""); a.Code != decode.CodeMethodNotFound {
			t.Errorf("%s: %+v", m, a)
		}
	}
	// Without task tools there are no tasks methods, and Mcp-Name is
	// not compared on them.
	_, ep := testServer(t)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		a := exchange(t, ep, v26(m, HeaderName, "other"), req(m, `"taskId":"x",`+metaTasks))
		if a.Status != 404 || a.Code != decode.CodeMethodNotFound {
			t.Errorf("%s on a server without tasks: %+v", m, a)
		}
	}
	// The capability is advertised only with tasks.
	disc := exchange(t, tt.ep, v26("server/discover"), req("server/discover", meta26))
	if !strings.Contains(string(disc.Result), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("discover with tasks: %s", disc.Result)
	}
	disc = exchange(t, ep, v26("server/discover"), req("server/discover", meta26))
	if strings.Contains(string(disc.Result), "extensions") {
		t.Errorf("discover without tasks: %s", disc.Result)
	}
}

// TestTaskHeaders: Mcp-Name carries params.taskId on the tasks methods.
func TestTaskHeaders(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "opt", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error { return c.StartTask() })})
	id := viewOf(t, tt.call("opt", `{}`, metaTasks)).TaskID
	body := req("tasks/get", `"taskId":"`+id+`",`+metaTasks)
	for name, h := range map[string]hdr{
		"missing":   v26("tasks/get"),
		"other":     v26("tasks/get", HeaderName, id+"x"),
		"two lines": v26("tasks/get", HeaderName, id, HeaderName, id),
	} {
		if a := exchange(t, tt.ep, h, body); a.Status != 400 || a.Code != CodeHeaderMismatch {
			t.Errorf("%s: %+v", name, a)
		}
	}
	b64 := "=?base64?" + base64Std(id) + "?="
	if a := exchange(t, tt.ep, v26("tasks/get", HeaderName, b64), body); a.Code != 0 {
		t.Errorf("base64 Mcp-Name: %+v", a)
	}
	// An escaped id in the body is the same id.
	esc := strings.Replace(body, `"taskId":"`+id, `"taskId":"\u00`+fmt.Sprintf("%02x", id[0])+id[1:], 1)
	if esc == body {
		t.Fatal("the id was not escaped")
	}
	if a := exchange(t, tt.ep, v26("tasks/get", HeaderName, id), esc); a.Code != 0 {
		t.Errorf("escaped taskId: %+v", a)
	}
}

// TestTaskInput: a task asks for input, tasks/get lists what it waits on,
// a partial tasks/update keeps it waiting on the rest, and the handler
// runs again with every answer; answers to keys not pending are ignored.
func TestTaskInput(t *testing.T) {
	tt := newTasksTest(t)
	var runs atomic.Int32
	tt.add(Tool{Name: "ask", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		runs.Add(1)
		if !c.HasState() {
			if err := c.SetState([]byte(`{"round":1}`)); err != nil {
				return err
			}
		}
		a, e1 := c.Elicit("first", []byte(`{"message":"1?"}`))
		b, e2 := c.Elicit("second", []byte(`{"message":"2?"}`))
		if err := errors.Join(e1, e2); err != nil {
			return err
		}
		third, err := c.Elicit("third", []byte(`{"message":"3?"}`))
		if err != nil {
			return err
		}
		c.AddText(fmt.Sprintf("%s %s %s state=%s", a, b, third, c.State()))
		return nil
	})})
	id := viewOf(t, tt.call("ask", `{}`, metaTasks)).TaskID
	v := tt.await(id, "input_required")
	if len(v.InputRequests) != 2 || v.InputRequests["first"].Method != "elicitation/create" || string(v.InputRequests["second"].Params) != `{"message":"2?"}` || v.Has["result"] {
		t.Fatalf("input_required %+v", v)
	}
	ack := tt.method("tasks/update", id, `"inputResponses":{"second":{"v":2},"stray":{"x":1}},`)
	if r := viewOf(t, ack); r.ResultType != "complete" || r.Has["taskId"] || r.Has["status"] || r.Has["inputRequests"] {
		t.Fatalf("update ack %s", ack.Result)
	}
	v = tt.get(id)
	if v.Status != "input_required" || len(v.InputRequests) != 1 || v.InputRequests["first"].Method == "" {
		t.Fatalf("after a partial update: %+v", v)
	}
	tt.method("tasks/update", id, `"inputResponses":{"first":{"v":1}},`)
	v = tt.await(id, "input_required")
	if len(v.InputRequests) != 1 || v.InputRequests["third"].Method == "" {
		t.Fatalf("second round: %+v", v)
	}
	tt.method("tasks/update", id, `"inputResponses":{"third":{"v":3}},`)
	v = tt.await(id, "completed")
	if len(v.Content) != 0 || !strings.Contains(string(v.Result), `{\"v\":1} {\"v\":2} {\"v\":3} state={\"round\":1}`) {
		t.Errorf("result %s", v.Result)
	}
	if runs.Load() != 3 {
		t.Errorf("the handler ran %d times in the task, want 3", runs.Load())
	}
	// Malformed inputResponses.
	for _, bad := range []string{``, `"inputResponses":[],`, `"inputResponses":{"a":1},`, `"inputResponses":{"a":{},"a":{}},`, `"inputResponses":null,`} {
		if a := tt.method("tasks/update", id, bad); a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "inputResponses" {
			t.Errorf("update with %q: %+v", bad, a)
		}
	}
}

// TestTaskOutcomes: how each way a handler ends shows on tasks/get.
func TestTaskOutcomes(t *testing.T) {
	tt := newTasksTest(t)
	start := func(f func(c *Call) error) ToolHandler {
		return ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			return f(c)
		})
	}
	tt.add(
		Tool{Name: "toolerr", Task: TaskOptional, Handler: start(func(c *Call) error { return errors.New("disk full") })},
		Tool{Name: "seterr", Task: TaskOptional, Handler: start(func(c *Call) error { c.AddText("bad"); c.SetError(); return nil })},
		Tool{Name: "rpcerr", Task: TaskOptional, Handler: start(func(c *Call) error {
			return &fastserver.Error{Code: -32042, Message: "refused", Data: []byte(`{"why":"x"}`)}
		})},
		Tool{Name: "panics", Task: TaskOptional, Handler: start(func(c *Call) error { panic("boom") })},
		Tool{Name: "badout", Task: TaskOptional, OutputSchema: `{"type":"object","required":["n"]}`,
			Handler: start(func(c *Call) error { return c.SetStructuredContent([]byte(`{}`)) })},
		Tool{Name: "askmissing", Task: TaskOptional, Handler: start(func(c *Call) error {
			_, err := c.Sample("s", []byte(`{"messages":[],"maxTokens":1}`))
			return err
		})},
	)
	for tool, want := range map[string]string{
		"toolerr":    `completed isError disk full`,
		"seterr":     `completed isError bad`,
		"rpcerr":     `failed -32042 refused {"why":"x"}`,
		"panics":     `failed -32603 internal error: the tool panicked`,
		"badout":     `failed -32603`,
		"askmissing": `failed -32021`,
	} {
		id := viewOf(t, tt.call(tool, `{}`, metaTasks)).TaskID
		deadline := time.Now().Add(5 * time.Second)
		var v taskView
		for v = tt.get(id); !(v.Status == "completed" || v.Status == "failed") && time.Now().Before(deadline); v = tt.get(id) {
			time.Sleep(time.Millisecond)
		}
		var got string
		switch v.Status {
		case "completed":
			var r struct {
				IsError bool
				Content []struct{ Text string }
			}
			_ = json.Unmarshal(v.Result, &r)
			got = fmt.Sprintf("completed isError %s", r.Content[0].Text)
			if !r.IsError || v.Has["error"] {
				got += " (not isError, or an error too)"
			}
		case "failed":
			var e struct {
				Code    int
				Message string
				Data    json.RawMessage
			}
			_ = json.Unmarshal(v.Error, &e)
			got = fmt.Sprintf("failed %d %s %s", e.Code, e.Message, e.Data)
			if v.Has["result"] {
				got += " (and a result)"
			}
		default:
			got = v.Status
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s, want %s", tool, got, want)
		}
	}
}

// TestTaskCancel: tasks/cancel ends a running task's Context, its late
// outcome is dropped, and cancelling again (or a finished task) is the
// same empty answer.
func TestTaskCancel(t *testing.T) {
	tt := newTasksTest(t)
	ended := make(chan struct{})
	tt.add(Tool{Name: "long", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		<-c.Context().Done()
		c.AddText("late")
		defer close(ended)
		return nil // an outcome that must not replace "cancelled"
	})}, Tool{Name: "quick", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("ok")
		return nil
	})}, Tool{Name: "waits", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		_, err := c.Elicit("k", nil)
		return err
	})})
	id := viewOf(t, tt.call("long", `{}`, metaTasks)).TaskID
	tt.await(id, "working")
	for range 2 {
		a := tt.method("tasks/cancel", id, "")
		if v := viewOf(t, a); v.ResultType != "complete" || v.Has["taskId"] || v.Has["status"] {
			t.Fatalf("cancel ack %s", a.Result)
		}
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's Context did not end")
	}
	time.Sleep(10 * time.Millisecond)
	if v := tt.get(id); v.Status != "cancelled" || v.Has["result"] {
		t.Errorf("after cancel: %+v", v)
	}
	id = viewOf(t, tt.call("quick", `{}`, metaTasks)).TaskID
	tt.await(id, "completed")
	if v := viewOf(t, tt.method("tasks/cancel", id, "")); v.ResultType != "complete" {
		t.Errorf("cancel of a finished task: %+v", v)
	}
	if v := tt.get(id); v.Status != "completed" {
		t.Errorf("a finished task cancelled: %+v", v)
	}
	// A task waiting for input: cancelled, and an update no longer runs it.
	id = viewOf(t, tt.call("waits", `{}`, metaTasks)).TaskID
	tt.await(id, "input_required")
	tt.method("tasks/cancel", id, "")
	tt.method("tasks/update", id, `"inputResponses":{"k":{}},`)
	if v := tt.get(id); v.Status != "cancelled" || v.Has["inputRequests"] {
		t.Errorf("cancelled while waiting: %+v", v)
	}
}

// TestTaskTTL: a task is found for its TTL and not after; one still
// running at its TTL is cancelled.
func TestTaskTTL(t *testing.T) {
	tt := newTasksTest(t, WithTasks(TaskOptions{TTL: 300 * time.Millisecond, PollInterval: 1500 * time.Microsecond}))
	stopped := make(chan error, 1)
	tt.add(Tool{Name: "long", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		<-c.Context().Done()
		stopped <- c.Context().Err()
		return nil
	})})
	created := time.Now()
	v := viewOf(t, tt.call("long", `{}`, metaTasks))
	if v.TTLMs != "300" || v.PollIntervalMs != "2" {
		t.Errorf("ttlMs %s pollIntervalMs %s", v.TTLMs, v.PollIntervalMs)
	}
	for time.Since(created) < 200*time.Millisecond {
		if a := tt.method("tasks/get", v.TaskID, ""); a.Code != 0 {
			t.Fatalf("within its TTL: %+v", a)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, errDeadline) {
			t.Errorf("the task's context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a task running at its TTL was not cancelled")
	}
	time.Sleep(20 * time.Millisecond)
	if a := tt.method("tasks/get", v.TaskID, ""); a.Code != decode.CodeInvalidParams {
		t.Errorf("after its TTL: %+v", a)
	}
	tt.s.tasks.mu.Lock()
	n, b := len(tt.s.tasks.byID), tt.s.tasks.bytes
	tt.s.tasks.mu.Unlock()
	if n != 0 || b != 0 {
		t.Errorf("store after expiry: %d tasks, %d bytes", n, b)
	}
}

// TestTaskStoreBounds: MaxTasks and MaxBytes hold; finished tasks make
// room, oldest first; running ones never do.
func TestTaskStoreBounds(t *testing.T) {
	tt := newTasksTest(t, WithTasks(TaskOptions{MaxTasks: 3, MaxBytes: 64 << 10, IDPrefix: "node-1."}))
	block := make(chan struct{})
	tt.add(Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)})
	call := func(args string) answer { return tt.call("run", args, metaTasks) }
	var done []string
	for range 3 {
		v := viewOf(t, call(`{"size":10}`))
		if !strings.HasPrefix(v.TaskID, "node-1.") || len(v.TaskID) != len("node-1.")+22 {
			t.Errorf("task id %q", v.TaskID)
		}
		tt.await(v.TaskID, "completed")
		done = append(done, v.TaskID)
	}
	// A fourth drops the oldest finished one.
	r1 := viewOf(t, call(`{"block":true}`)).TaskID
	if a := tt.method("tasks/get", done[0], ""); a.Code != decode.CodeInvalidParams {
		t.Errorf("the oldest finished task was kept: %+v", a)
	}
	r2 := viewOf(t, call(`{"block":true}`)).TaskID
	r3 := viewOf(t, call(`{"block":true}`)).TaskID
	// Three running: a fourth is refused, and nothing running was dropped.
	if a := call(`{"size":1}`); a.Status != 503 || a.Code != decode.CodeInternalError {
		t.Errorf("a full store of running tasks: %+v", a)
	}
	for _, id := range []string{r1, r2, r3} {
		if v := tt.get(id); v.Status != "working" {
			t.Errorf("running task %s: %+v", id, v)
		}
	}
	close(block)
	for _, id := range []string{r1, r2, r3} {
		tt.await(id, "completed")
	}
	// A result past the byte budget fails the task and keeps nothing.
	id := viewOf(t, call(`{"size":100000}`)).TaskID
	v := tt.await(id, "failed")
	if !strings.Contains(string(v.Error), "byte budget") {
		t.Errorf("an oversized result: %+v", v)
	}
	tt.s.tasks.mu.Lock()
	n, b := len(tt.s.tasks.byID), tt.s.tasks.bytes
	sum := 0
	for t := tt.s.tasks.head; t != nil; t = t.next {
		sum += t.size
	}
	tt.s.tasks.mu.Unlock()
	if n > 3 || b > 64<<10 || b != sum {
		t.Errorf("store: %d tasks, %d bytes counted, %d held", n, b, sum)
	}
}

// TestTaskOwner: a task belongs to the token holder that created it.
func TestTaskOwner(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "w", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		_, err := c.Elicit("k", nil)
		return err
	})})
	alice := &auth.Token{Issuer: "https://as", Subject: "alice", ClientID: "app"}
	bob := &auth.Token{Issuer: "https://as", Subject: "bob", ClientID: "app"}
	a := exchangeAs(t, tt.ep, alice, v26("tools/call", HeaderName, "w"), req("tools/call", `"name":"w","arguments":{},`+metaTasks))
	id := viewOf(t, a).TaskID
	as := func(tok *auth.Token, m, more string) answer {
		return exchangeAs(t, tt.ep, tok, v26(m, HeaderName, id), req(m, `"taskId":"`+id+`",`+more+metaTasks))
	}
	for _, tok := range []*auth.Token{bob, nil} {
		for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			if a := as(tok, m, `"inputResponses":{"k":{}},`); a.Code != decode.CodeInvalidParams {
				t.Errorf("%s by another holder: %+v", m, a)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for viewOf(t, as(alice, "tasks/get", "")).Status != "input_required" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if v := viewOf(t, as(alice, "tasks/get", "")); v.Status != "input_required" {
		t.Errorf("the holder's task after others' requests: %+v", v)
	}
}

// TestTaskMRTRComposition: input gathered on the request by rounds of
// input_required, then the task, which finds the answers and the state.
func TestTaskMRTRComposition(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "compose", Task: TaskRequired, Handler: ToolFunc(func(c *Call) error {
		name, err := c.Elicit("user_name", nil)
		if err != nil {
			if !c.HasState() {
				_ = c.SetState([]byte(`"round1"`))
			}
			return err
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText(fmt.Sprintf("%s %s", name, c.State()))
		return nil
	})})
	a := tt.call("compose", `{}`, metaTasks)
	r1 := obj(t, a.Result)
	if r1["resultType"] != "input_required" || r1["taskId"] != nil {
		t.Fatalf("round 1: %s", a.Result)
	}
	state, _ := json.Marshal(r1["requestState"])
	a = tt.call("compose", `{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+string(state), metaTasks)
	v := viewOf(t, a)
	if v.ResultType != "task" || v.Has["requestState"] || v.Has["inputRequests"] {
		t.Fatalf("round 2: %s", a.Result)
	}
	v = tt.await(v.TaskID, "completed")
	if !strings.Contains(string(v.Result), `Ada`) || !strings.Contains(string(v.Result), `\"round1\"`) {
		t.Errorf("result %s", v.Result)
	}
}

// TestTaskClose: Server.Close cancels what runs and refuses new tasks.
func TestTaskClose(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "long", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		<-c.Context().Done()
		return c.Context().Err()
	})})
	id := viewOf(t, tt.call("long", `{}`, metaTasks)).TaskID
	tt.s.Close()
	if v := tt.get(id); v.Status != "cancelled" {
		t.Errorf("after Close: %+v", v)
	}
	if a := tt.call("long", `{}`, metaTasks); a.Status != 503 {
		t.Errorf("a task after Close: %+v", a)
	}
	tt.s.Close() // twice is fine
}

func TestWithTasksOptions(t *testing.T) {
	for _, o := range []TaskOptions{{TTL: -1}, {PollInterval: -1}, {MaxTasks: -1}, {MaxBytes: -1},
		{IDPrefix: "a/b"}, {IDPrefix: strings.Repeat("a", 65)}, {IDPrefix: "é"}} {
		if _, err := New(Info{Name: "n", Version: "1"}, WithTasks(o)); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	s, _ := New(Info{Name: "n", Version: "1"})
	if err := s.AddTool(Tool{Name: "x", Task: TaskRequired + 1, Handler: ToolFunc(func(*Call) error { return nil })}); err == nil {
		t.Error("an unknown TaskSupport registered")
	}
	if TaskOptional.String() != "optional" || TaskSupport(9).String() != "TaskSupport(9)" {
		t.Error("TaskSupport.String")
	}
}

var errDeadline = context.DeadlineExceeded

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestTaskOwnerShares: one token holder takes at most its share of the
// store, and at its share drops its own finished tasks, never another's.
func TestTaskOwnerShares(t *testing.T) {
	tt := newTasksTest(t, WithTasks(TaskOptions{MaxTasks: 10, MaxOwnerTasks: 2}))
	block := make(chan struct{})
	tt.add(Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)})
	alice := &auth.Token{Issuer: "https://as", Subject: "alice", ClientID: "app"}
	bob := &auth.Token{Issuer: "https://as", Subject: "bob", ClientID: "app"}
	call := func(tok *auth.Token, args string) answer {
		return exchangeAs(t, tt.ep, tok, v26("tools/call", HeaderName, "run"), req("tools/call", `"name":"run","arguments":`+args+`,`+metaTasks))
	}
	getAs := func(tok *auth.Token, id string) answer {
		return exchangeAs(t, tt.ep, tok, v26("tasks/get", HeaderName, id), req("tasks/get", `"taskId":"`+id+`",`+metaTasks))
	}
	awaitAs := func(tok *auth.Token, id, want string) {
		deadline := time.Now().Add(5 * time.Second)
		for viewOf(t, getAs(tok, id)).Status != want {
			if time.Now().After(deadline) {
				t.Fatalf("task %s never %s", id, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	bobDone := viewOf(t, call(bob, `{}`)).TaskID
	awaitAs(bob, bobDone, "completed")
	a1 := viewOf(t, call(alice, `{"block":1}`)).TaskID
	a2 := viewOf(t, call(alice, `{"block":1}`)).TaskID
	if a := call(alice, `{}`); a.Status != 429 || a.Code != decode.CodeInternalError {
		t.Fatalf("a third running task of one holder: %+v", a)
	}
	if v := viewOf(t, call(bob, `{"block":1}`)); v.TaskID == "" {
		t.Fatal("another holder refused")
	}
	close(block)
	awaitAs(alice, a1, "completed")
	awaitAs(alice, a2, "completed")
	a3 := viewOf(t, call(alice, `{}`)).TaskID
	if a := getAs(alice, a1); a.Code != decode.CodeInvalidParams {
		t.Errorf("the holder's oldest finished task kept past its share: %+v", a)
	}
	for tok, id := range map[*auth.Token]string{alice: a2, bob: bobDone} {
		if a := getAs(tok, id); a.Code != 0 {
			t.Errorf("task %s dropped: %+v", id, a)
		}
	}
	awaitAs(alice, a3, "completed")
	st := tt.s.tasks
	st.mu.Lock()
	defer st.mu.Unlock()
	for owner, u := range st.owners {
		n, b := 0, 0
		for x := st.head; x != nil; x = x.next {
			if x.owner == owner {
				n, b = n+1, b+x.size
			}
		}
		if u.tasks != n || u.bytes != b {
			t.Errorf("owner use %+v, held %d tasks %d bytes", *u, n, b)
		}
	}
}

// TestTaskTyped: a typed tool moves into a task as a raw one does; its Out
// is the task's structuredContent.
func TestTaskTyped(t *testing.T) {
	tt := newTasksTest(t)
	type in struct {
		N int `json:"n"`
	}
	type out struct {
		Square int `json:"square"`
	}
	if err := AddTool(tt.s, Tool{Name: "square", Task: TaskOptional}, func(ctx context.Context, c *Call, x in) (out, error) {
		if err := c.StartTask(); err != nil {
			return out{}, err
		}
		if c.InTask() && ctx != c.Context() {
			return out{}, errors.New("not the task's context")
		}
		return out{Square: x.N * x.N}, nil
	}); err != nil {
		t.Fatal(err)
	}
	tt.add()
	for _, n := range []int{3, -12, 40000} {
		id := viewOf(t, tt.call("square", fmt.Sprintf(`{"n":%d}`, n), metaTasks)).TaskID
		v := tt.await(id, "completed")
		var r struct{ StructuredContent out }
		if err := json.Unmarshal(v.Result, &r); err != nil || r.StructuredContent.Square != n*n {
			t.Errorf("n=%d: %s", n, v.Result)
		}
	}
	// Without the extension: on the request.
	a := tt.call("square", `{"n":5}`, meta26)
	if v := viewOf(t, a); v.Has["taskId"] || !strings.Contains(string(a.Result), `"square":25`) {
		t.Errorf("on the request: %s", a.Result)
	}
}

// TestTaskAfterProgress: a Streaming tool that sent progress on its
// request's stream, then starts a task: the CreateTaskResult is the
// stream's last event, and the task runs without the stream.
func TestTaskAfterProgress(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "work", Task: TaskOptional, Streaming: true, Handler: ToolFunc(func(c *Call) error {
		if !c.InTask() {
			if err := c.Progress(1, 2, "preparing"); err != nil {
				return err
			}
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		if err := c.Progress(2, 2, "in the task"); err != nil {
			return err
		}
		c.AddText("worked")
		return nil
	})})
	// Through exchange's path (no stream to write to), the plain
	// answer: the CreateTaskResult.
	meta := strings.Replace(metaTasks, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	a := tt.call("work", `{}`, meta)
	v := viewOf(t, a)
	if v.ResultType != "task" {
		t.Fatalf("%s", a.Result)
	}
	v = tt.await(v.TaskID, "completed")
	if v.StatusMessage != "" {
		t.Errorf("a finished task's statusMessage: %q", v.StatusMessage)
	}
	if !strings.Contains(string(v.Result), "worked") {
		t.Errorf("%s", v.Result)
	}
}

// TestTaskOverHTTP: the same through a real server: the progress event,
// then the CreateTaskResult, on the request's stream; then tasks/get.
func TestTaskOverHTTP(t *testing.T) {
	s, err := New(Info{Name: "st", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.AddTool(Tool{Name: "work", Task: TaskOptional, Streaming: true, Handler: ToolFunc(func(c *Call) error {
		if !c.InTask() {
			if err := c.Progress(1, 2, "preparing"); err != nil {
				return err
			}
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("worked")
		return nil
	})})
	_, url := serveLoopback(t, s, fastserver.Config{})
	meta := strings.Replace(metaTasks, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	a := postMCP(t, url, "2026-07-28", "tools/call", "work", `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"work","arguments":{},`+meta+`}}`, sse)
	if a.status != 200 || len(a.events) != 2 || a.events[0]["method"] != "notifications/progress" {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	res, _ := a.events[1]["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || a.events[1]["id"] != "w" {
		t.Fatalf("last event %v", a.events[1])
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := postMCP(t, url, "2026-07-28", "tasks/get", id, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`",`+metaTasks+`}}`, sse)
		var v struct{ Result taskView }
		if g.status != 200 || json.Unmarshal(g.raw, &v) != nil {
			t.Fatalf("tasks/get: %d %s", g.status, g.raw)
		}
		if v.Result.Status == "completed" {
			if !strings.Contains(string(v.Result.Result), "worked") {
				t.Errorf("%s", g.raw)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s", g.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blocker is a task tool that waits for block (or its cancellation) when
// its arguments have "block", then answers "size" bytes of text.
func blocker(block <-chan struct{}) ToolHandler {
	return ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		if c.Arg("block") != nil {
			select {
			case <-block:
			case <-c.Context().Done():
			}
		}
		n, _ := c.ArgInt("size")
		c.AddText(strings.Repeat("x", int(n)))
		return nil
	})
}

// TestTaskMetrics: the store's gauges and refusal counters.
func TestTaskMetrics(t *testing.T) {
	tt := newTasksTest(t, WithTasks(TaskOptions{MaxTasks: 2}))
	block := make(chan struct{})
	defer close(block)
	tt.add(Tool{Name: "run", Task: TaskOptional, Handler: blocker(block)})
	scrape := func() string {
		var b strings.Builder
		tt.s.WritePrometheus(&b)
		return b.String()
	}
	done := viewOf(t, tt.call("run", `{}`, metaTasks)).TaskID
	tt.await(done, "completed")
	for range 2 {
		viewOf(t, tt.call("run", `{"block":1}`, metaTasks))
	}
	if a := tt.call("run", `{"block":1}`, metaTasks); a.Status != 503 {
		t.Fatalf("%+v", a)
	}
	tt.s.Close()
	if a := tt.call("run", `{}`, metaTasks); a.Status != 503 {
		t.Fatalf("%+v", a)
	}
	m := scrape()
	for _, want := range []string{`rpcedge_mcp_tasks{status="cancelled"} 2`, `rpcedge_mcp_tasks{status="working"} 0`,
		`rpcedge_mcp_tasks_refused_total{reason="full"} 1`, `rpcedge_mcp_tasks_refused_total{reason="closed"} 1`,
		`rpcedge_mcp_tasks_refused_total{reason="share"} 0`, "# TYPE rpcedge_mcp_tasks gauge"} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	if !strings.Contains(m, "rpcedge_mcp_task_bytes ") || strings.Contains(m, "rpcedge_mcp_task_bytes 0\n") {
		t.Errorf("task bytes:\n%s", m)
	}
	var none strings.Builder
	s, _ := New(Info{Name: "n", Version: "1"})
	s.WritePrometheus(&none)
	if strings.Contains(none.String(), "rpcedge_mcp_task") {
		t.Errorf("a server without tasks wrote %q", none.String())
	}
}

// TestTaskOverStdio: over a newline-delimited stream (StreamEndpoint, no
// headers) a task is created, and found by tasks/get on the same stream.
func TestTaskOverStdio(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "job", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})})
	pr, pw := io.Pipe()
	var out syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- fastserver.ServeLines(context.Background(), tt.s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.DiscardHandler)}, pr, &out)
	}()
	line := func(id int, method, params string) {
		fmt.Fprintf(pw, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`+"\n", id, method, params, metaTasks)
	}
	answer := func(id int) map[string]any {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			for _, l := range strings.Split(out.String(), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) == nil && m["id"] == float64(id) {
					return m
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatalf("no answer %d in %q", id, out.String())
		return nil
	}
	line(1, "tools/call", `"name":"job","arguments":{}`)
	res, _ := answer(1)["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("%v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n := 2; ; n++ {
		line(n, "tasks/get", `"taskId":"`+id+`"`)
		g, _ := answer(n)["result"].(map[string]any)
		if g["status"] == "completed" {
			if !strings.Contains(fmt.Sprint(g["result"]), "done") {
				t.Errorf("%v", g)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v", g)
		}
		time.Sleep(2 * time.Millisecond)
	}
	pw.Close()
	if err := <-served; err != nil {
		t.Errorf("ServeLines: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// BenchmarkTask measures what a task costs beside the same call answered
// on its request: the call that creates it (the store, the goroutine and
// the handler's run in it, until the task completes) and a tasks/get of a
// finished one.
func BenchmarkTask(b *testing.B) {
	s, err := New(Info{Name: "bench", Version: "1"}, WithTasks(TaskOptions{MaxTasks: 1 << 20, MaxBytes: 1 << 30}))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	done := make(chan struct{}, 1)
	s.AddTool(Tool{Name: "echo", InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
			if err := c.StartTask(); err != nil {
				return err
			}
			err := c.AddTextJSON(c.Arg("text"))
			if c.InTask() {
				done <- struct{}{}
			}
			return err
		})})
	ep := s.Endpoint()
	args := `"name":"echo","arguments":{"text":"hello, world"},`
	b.Run("on the request", func(b *testing.B) {
		benchEndpoint(b, ep, v26("tools/call", HeaderName, "echo"), call(args+meta26), nil)
	})
	b.Run("as a task, to completed", func(b *testing.B) {
		benchEndpoint(b, ep, v26("tools/call", HeaderName, "echo"), call(args+metaTasks), func([]byte) { <-done })
	})
	a := exchange(b, ep, v26("tools/call", HeaderName, "echo"), call(args+metaTasks))
	<-done
	v, _ := decode.Lookup(a.Result, "taskId")
	id := string(decode.AppendUnquoted(nil, v))
	b.Run("tasks/get, completed", func(b *testing.B) {
		benchEndpoint(b, ep, v26("tasks/get", HeaderName, id), req("tasks/get", `"taskId":"`+id+`",`+metaTasks), nil)
	})
}
