package a2a

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Wire shapes for encoding/json, one set per generation.
type (
	part10 struct {
		Text      *string         `json:"text"`
		Raw       *string         `json:"raw"`
		URL       *string         `json:"url"`
		Data      json.RawMessage `json:"data"`
		Filename  string          `json:"filename"`
		MediaType string          `json:"mediaType"`
	}
	message10 struct {
		MessageID string   `json:"messageId"`
		ContextID string   `json:"contextId"`
		TaskID    string   `json:"taskId"`
		Role      string   `json:"role"`
		Parts     []part10 `json:"parts"`
	}
	task10 struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State     string     `json:"state"`
			Message   *message10 `json:"message"`
			Timestamp string     `json:"timestamp"`
		} `json:"status"`
		Artifacts []struct {
			ArtifactID string   `json:"artifactId"`
			Name       string   `json:"name"`
			Parts      []part10 `json:"parts"`
		} `json:"artifacts"`
		History []message10 `json:"history"`
	}
	part03 struct {
		Kind string  `json:"kind"`
		Text *string `json:"text"`
		File *struct {
			Bytes    *string `json:"bytes"`
			URI      *string `json:"uri"`
			Name     string  `json:"name"`
			MimeType string  `json:"mimeType"`
		} `json:"file"`
		Data json.RawMessage `json:"data"`
	}
	message03 struct {
		Kind      string   `json:"kind"`
		MessageID string   `json:"messageId"`
		ContextID string   `json:"contextId"`
		TaskID    string   `json:"taskId"`
		Role      string   `json:"role"`
		Parts     []part03 `json:"parts"`
	}
	task03 struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State     string     `json:"state"`
			Message   *message03 `json:"message"`
			Timestamp string     `json:"timestamp"`
		} `json:"status"`
		Artifacts []struct {
			ArtifactID string   `json:"artifactId"`
			Name       string   `json:"name"`
			Parts      []part03 `json:"parts"`
		} `json:"artifacts"`
		History []message03 `json:"history"`
	}
)

func decodeJSON(t testing.TB, s string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
}

func texts10(ps []part10) []string {
	var out []string
	for _, p := range ps {
		if p.Text != nil {
			out = append(out, *p.Text)
		}
	}
	return out
}

func texts03(ps []part03) []string {
	var out []string
	for _, p := range ps {
		if p.Kind == "text" && p.Text != nil {
			out = append(out, *p.Text)
		}
	}
	return out
}

func TestRoundTrip10(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "1.0", req("SendMessage", msg10))
	if a.code != 0 {
		t.Fatalf("SendMessage: %+v", a)
	}
	if hasKey(parse(t, a.result), "kind") {
		t.Errorf("a 1.0 answer has kind tags: %s", a.result)
	}
	var sent struct{ Task task10 }
	decodeJSON(t, a.result, &sent)
	tk := sent.Task
	if !uuidRE.MatchString(tk.ID) || !uuidRE.MatchString(tk.ContextID) {
		t.Errorf("ids %q %q", tk.ID, tk.ContextID)
	}
	if tk.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("state %q", tk.Status.State)
	}
	if ts, err := time.Parse(time.RFC3339Nano, tk.Status.Timestamp); err != nil || !strings.HasSuffix(tk.Status.Timestamp, "Z") || time.Since(ts) > time.Minute {
		t.Errorf("timestamp %q: %v", tk.Status.Timestamp, err)
	}
	if len(tk.Artifacts) != 1 || tk.Artifacts[0].Name != "echo" || !uuidRE.MatchString(tk.Artifacts[0].ArtifactID) ||
		strings.Join(texts10(tk.Artifacts[0].Parts), "|") != "hi|there" {
		t.Errorf("artifacts %+v", tk.Artifacts)
	}
	if len(tk.History) != 1 || tk.History[0].Role != "ROLE_USER" || tk.History[0].MessageID != "m1" ||
		tk.History[0].TaskID != tk.ID || tk.History[0].ContextID != tk.ContextID {
		t.Errorf("history %+v", tk.History)
	}

	// GetTask answers the bare task, the same.
	g := call(t, s, "1.0", req("GetTask", `{"id":"`+tk.ID+`"}`))
	var got task10
	decodeJSON(t, g.result, &got)
	if got.ID != tk.ID || got.Status.State != "TASK_STATE_COMPLETED" || got.Status.Timestamp != tk.Status.Timestamp {
		t.Errorf("GetTask: %s", g.result)
	}
	// CancelTask: it is final.
	c := call(t, s, "1.0", req("CancelTask", `{"id":"`+tk.ID+`"}`))
	if c.code != -32002 || c.data != `{"taskId":"`+tk.ID+`"}` || !strings.Contains(c.msg, "TASK_STATE_COMPLETED") {
		t.Errorf("CancelTask: %+v", c)
	}
	// The same task in 0.3 shapes.
	g = call(t, s, "0.3", req("tasks/get", `{"id":"`+tk.ID+`"}`))
	var got03 task03
	decodeJSON(t, g.result, &got03)
	if got03.Kind != "task" || got03.Status.State != "completed" || got03.History[0].Role != "user" ||
		got03.History[0].Kind != "message" || got03.Artifacts[0].Parts[0].Kind != "text" {
		t.Errorf("tasks/get of a 1.0 task: %s", g.result)
	}
}

func TestRoundTrip03(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "0.3", req("message/send", msg03))
	var tk task03
	decodeJSON(t, a.result, &tk)
	if tk.Kind != "task" || !uuidRE.MatchString(tk.ID) || tk.Status.State != "completed" {
		t.Errorf("message/send: %s", a.result)
	}
	if len(tk.Artifacts) != 1 || strings.Join(texts03(tk.Artifacts[0].Parts), "|") != "hi|there" {
		t.Errorf("artifacts %+v", tk.Artifacts)
	}
	if len(tk.History) != 1 || tk.History[0].Kind != "message" || tk.History[0].Role != "user" || tk.History[0].TaskID != tk.ID {
		t.Errorf("history %+v", tk.History)
	}

	g := call(t, s, "0.3", req("tasks/get", `{"id":"`+tk.ID+`","historyLength":5,"metadata":{}}`))
	var got task03
	decodeJSON(t, g.result, &got)
	if got.ID != tk.ID || got.Kind != "task" {
		t.Errorf("tasks/get: %s", g.result)
	}
	if c := call(t, s, "0.3", req("tasks/cancel", `{"id":"`+tk.ID+`"}`)); c.code != -32002 || !strings.Contains(c.msg, "(completed)") {
		t.Errorf("tasks/cancel: %+v", c)
	}
	// And in 1.0 shapes, no kind tags.
	g = call(t, s, "1.0", req("GetTask", `{"id":"`+tk.ID+`"}`))
	var got10 task10
	decodeJSON(t, g.result, &got10)
	if got10.Status.State != "TASK_STATE_COMPLETED" || got10.History[0].Role != "ROLE_USER" || hasKey(parse(t, g.result), "kind") {
		t.Errorf("GetTask of a 0.3 task: %s", g.result)
	}
}

func TestDirectMessage(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","contextId":"c1","parts":[{"text":"direct"}]}}`))
	var r10 struct{ Message message10 }
	decodeJSON(t, a.result, &r10)
	m := r10.Message
	if m.Role != "ROLE_AGENT" || !uuidRE.MatchString(m.MessageID) || m.ContextID != "c1" || m.TaskID != "" ||
		strings.Join(texts10(m.Parts), "") != "hello" {
		t.Errorf("SendMessage direct: %s", a.result)
	}
	if memStore(s).len() != 0 {
		t.Errorf("a direct message stored a task")
	}
	a = call(t, s, "", req("message/send", `{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"direct"}]}}`))
	var m03 message03
	decodeJSON(t, a.result, &m03)
	if m03.Kind != "message" || m03.Role != "agent" || !uuidRE.MatchString(m03.ContextID) || texts03(m03.Parts)[0] != "hello" {
		t.Errorf("message/send direct: %s", a.result)
	}
}

func TestMultiTurnAndCancel(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m1","contextId":"ctx","parts":[{"text":"ask"}]}}`))
	var r struct{ Task task10 }
	decodeJSON(t, a.result, &r)
	tk := r.Task
	if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" || tk.ContextID != "ctx" || tk.Status.Message == nil ||
		tk.Status.Message.Role != "ROLE_AGENT" || tk.Status.Message.TaskID != tk.ID || len(tk.History) != 2 || tk.Artifacts != nil {
		t.Fatalf("ask: %s", a.result)
	}

	// Refusals when continuing.
	for _, tt := range []struct {
		name, params string
		code         int
	}{
		{"unknown task", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"nope","parts":[{"text":"x"}]}}`, -32001},
		{"other context", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"` + tk.ID + `","contextId":"other","parts":[{"text":"x"}]}}`, -32602},
	} {
		if a := call(t, s, "1.0", req("SendMessage", tt.params)); a.code != tt.code {
			t.Errorf("%s: %+v", tt.name, a)
		}
	}

	// Continue: the same task, completed, history grown.
	a = call(t, s, "1.0", req("SendMessage", `{"configuration":{"historyLength":2},"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+tk.ID+`","contextId":"ctx","parts":[{"text":"answer"}]}}`))
	r = struct{ Task task10 }{}
	decodeJSON(t, a.result, &r)
	if r.Task.ID != tk.ID || r.Task.Status.State != "TASK_STATE_COMPLETED" || len(r.Task.Artifacts) != 1 || len(r.Task.History) != 2 ||
		r.Task.History[1].MessageID != "m2" || r.Task.Status.Message != nil {
		t.Errorf("continue: %s", a.result)
	}
	full, _ := s.Task(tk.ID)
	if len(full.History) != 3 {
		t.Errorf("stored history: %d messages", len(full.History))
	}
	for _, tt := range []struct {
		n    string
		want int
	}{{"0", 0}, {"1", 1}, {"2", 2}, {"99", 3}, {"99999999999999999999", 3}} {
		g := call(t, s, "1.0", req("GetTask", `{"id":"`+tk.ID+`","historyLength":`+tt.n+`}`))
		var got task10
		decodeJSON(t, g.result, &got)
		if len(got.History) != tt.want || (tt.want == 0 && strings.Contains(g.result, "history")) {
			t.Errorf("historyLength %s: %d messages", tt.n, len(got.History))
		}
		if tt.want > 0 && got.History[len(got.History)-1].MessageID != "m2" {
			t.Errorf("historyLength %s: not the newest", tt.n)
		}
	}
	// A completed task takes no more messages.
	if a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m3","taskId":"`+tk.ID+`","parts":[{"text":"x"}]}}`)); a.code != -32004 {
		t.Errorf("send to a completed task: %+v", a)
	}

	// Cancel a task waiting for input, in 0.3 shapes; then again.
	a = call(t, s, "0.3", req("message/send", `{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"ask"}]}}`))
	var t3 task03
	decodeJSON(t, a.result, &t3)
	if t3.Status.State != "input-required" || t3.Status.Message.Kind != "message" || t3.Status.Message.Role != "agent" {
		t.Fatalf("ask 0.3: %s", a.result)
	}
	c := call(t, s, "0.3", req("tasks/cancel", `{"id":"`+t3.ID+`"}`))
	var canceled task03
	decodeJSON(t, c.result, &canceled)
	if canceled.ID != t3.ID || canceled.Status.State != "canceled" || len(canceled.History) != 2 {
		t.Errorf("tasks/cancel: %s", c.result)
	}
	if c := call(t, s, "1.0", req("CancelTask", `{"id":"`+t3.ID+`"}`)); c.code != -32002 || !strings.Contains(c.msg, "TASK_STATE_CANCELED") {
		t.Errorf("cancel twice: %+v", c)
	}
	g := call(t, s, "1.0", req("GetTask", `{"id":"`+t3.ID+`"}`))
	if get(parse(t, g.result), "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("GetTask after cancel: %s", g.result)
	}
	if a := call(t, s, "0.3", req("message/send", `{"message":{"role":"user","messageId":"m9","taskId":"`+t3.ID+`","parts":[{"kind":"text","text":"x"}]}}`)); a.code != -32004 {
		t.Errorf("send to a canceled task: %+v", a)
	}
}

// TestParts sends every kind of part and reads it back in both shapes.
func TestParts(t *testing.T) {
	mirror := AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
		return &Reply{Artifacts: []Artifact{{Parts: c.Message.Parts, Metadata: json.RawMessage(`{"m":1}`)}}, Metadata: c.Metadata}, nil
	})
	s := newTestServer(t, func(c *Config) { c.Agent = mirror })
	a := call(t, s, "1.0", req("SendMessage", `{"metadata":{"skillId":"echo","x":[1]},"message":{"role":"ROLE_USER","messageId":"m","parts":[
		{"text":"caf\u00e9 \"q\"","mediaType":"text/plain","metadata":{"p":true}},
		{"raw":"aGk","filename":"hi.txt","mediaType":"text/plain"},
		{"url":"https://x.example/f.png","filename":"f.png"},
		{"data":{"a":[1,2]}},
		{"data":[1, 2]}]}}`))
	if a.code != 0 {
		t.Fatalf("%+v", a)
	}
	res := parse(t, a.result)
	if get(res, "task", "metadata", "skillId") != "echo" || get(res, "task", "artifacts", 0, "metadata", "m") != 1.0 {
		t.Errorf("metadata: %s", a.result)
	}
	id := get(res, "task", "id").(string)

	// A client's strings are written back as it escaped them; base64 in
	// the standard alphabet, padded.
	g := call(t, s, "1.0", req("GetTask", `{"id":"`+id+`","historyLength":0}`))
	want10 := `"parts":[{"text":"caf\u00e9 \"q\"","mediaType":"text/plain","metadata":{"p":true}},{"raw":"aGk=","filename":"hi.txt","mediaType":"text/plain"},{"url":"https://x.example/f.png","filename":"f.png"},{"data":{"a":[1,2]}},{"data":[1, 2]}]`
	if !strings.Contains(g.result, want10) {
		t.Errorf("1.0 parts:\n%s\nwant %s", g.result, want10)
	}
	g = call(t, s, "0.3", req("tasks/get", `{"id":"`+id+`","historyLength":0}`))
	want03 := `"parts":[{"kind":"text","text":"caf\u00e9 \"q\"","metadata":{"p":true}},{"kind":"file","file":{"name":"hi.txt","mimeType":"text/plain","bytes":"aGk="}},{"kind":"file","file":{"name":"f.png","uri":"https://x.example/f.png"}},{"kind":"data","data":{"a":[1,2]}},{"kind":"data","data":{"value":[1, 2]}}]`
	if !strings.Contains(g.result, want03) {
		t.Errorf("0.3 parts:\n%s\nwant %s", g.result, want03)
	}

	// 0.3 in, 1.0 out.
	a = call(t, s, "0.3", req("message/send", `{"message":{"role":"user","messageId":"m","parts":[{"kind":"file","file":{"bytes":"AAE=","mimeType":"application/octet-stream"}},{"kind":"file","file":{"uri":"https://x/y"}},{"kind":"data","data":{}}]}}`))
	id = get(parse(t, a.result), "id").(string)
	g = call(t, s, "1.0", req("GetTask", `{"id":"`+id+`","historyLength":0}`))
	want := `"parts":[{"raw":"AAE=","mediaType":"application/octet-stream"},{"url":"https://x/y"},{"data":{}}]`
	if !strings.Contains(g.result, want) {
		t.Errorf("0.3 → 1.0 parts:\n%s\nwant %s", g.result, want)
	}
}

func TestAgentErrors(t *testing.T) {
	s := newTestServer(t, nil)
	send := func(text string) answer {
		return call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"`+text+`"}]}}`))
	}
	if a := send("fail"); a.status != 500 || a.code != -32603 {
		t.Errorf("failing agent: %+v", a)
	}
	if a := send("bad"); a.status != 200 || a.code != -32602 || a.field() != "message.parts" {
		t.Errorf("refusing agent: %+v", a)
	}
	for name, reply := range map[string]*Reply{
		"nil reply":        nil,
		"bad metadata":     {Metadata: json.RawMessage(`[1]`)},
		"invalid metadata": {Metadata: json.RawMessage(`{"a":`)},
		"bad data":         {Artifacts: []Artifact{{Parts: PartsOf(Part{Kind: PartData, Data: json.RawMessage(`{x}`)})}}},
		"bad part meta":    {Status: &Message{Parts: PartsOf(Part{Kind: PartText, Metadata: json.RawMessage(`1`)})}},
		"bad message meta": {Message: &Message{Metadata: json.RawMessage(`"x"`)}},
	} {
		s := newTestServer(t, func(c *Config) {
			c.Agent = AgentFunc(func(context.Context, *Call) (*Reply, error) { return reply, nil })
		})
		if a := call(t, s, "", req("SendMessage", msg10)); a.status != 500 || !strings.HasPrefix(a.msg, "a2a: ") {
			t.Errorf("%s: %+v", name, a)
		}
	}
}

func TestCallContents(t *testing.T) {
	var got *Call
	s := newTestServer(t, func(c *Config) {
		c.Agent = AgentFunc(func(_ context.Context, c *Call) (*Reply, error) {
			got = c
			return &Reply{State: TaskStateWorking}, nil
		})
	})
	body := []byte(req("message/send", `{"metadata":{"skillId":"echo"},"message":{"role":"user","messageId":"m\u0031","contextId":"c","extensions":["e"],"referenceTaskIds":["r"],"metadata":{"k":"v"},"parts":[{"kind":"text","text":"t"}]}}`))
	a := call(t, s, "", string(body))
	if a.code != 0 {
		t.Fatalf("%+v", a)
	}
	if got.SkillID != "echo" || got.Version != Version03 || got.ContextID != "c" || !uuidRE.MatchString(got.TaskID) || got.Task != nil ||
		string(got.Metadata) != `{"skillId":"echo"}` {
		t.Errorf("call: %+v", got)
	}
	m := got.Message
	if m.MessageID != "m1" || m.Role != RoleUser || m.TaskID != got.TaskID || m.ContextID != "c" || m.Extensions[0] != "e" ||
		m.ReferenceTaskIDs[0] != "r" || string(m.Metadata) != `{"k":"v"}` || m.Parts.Slice()[0].Text != "t" {
		t.Errorf("message: %+v", m)
	}
	if get(parse(t, a.result), "status", "state") != "working" {
		t.Errorf("state: %s", a.result)
	}
}

func TestTaskIDsUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 10000 {
		id := newID()
		if seen[id] || !uuidRE.MatchString(id) {
			t.Fatalf("id %q repeated or malformed", id)
		}
		seen[id] = true
	}
}

func TestStateNames(t *testing.T) {
	for s := TaskStateUnspecified; s <= TaskStateAuthRequired+1; s++ {
		if s.name(Version10) == "" || s.name(Version03) == "" {
			t.Errorf("state %d has no name", s)
		}
	}
	if TaskStateInputRequired.name(Version03) != "input-required" || TaskStateAuthRequired.String() != "TASK_STATE_AUTH_REQUIRED" {
		t.Error("state names")
	}
	finals := 0
	for s := TaskStateUnspecified; s <= TaskStateAuthRequired; s++ {
		if s.Final() {
			finals++
		}
	}
	if finals != 4 {
		t.Errorf("%d final states", finals)
	}
	if RoleAgent.String() != "ROLE_AGENT" || RoleUser.name(Version03) != "user" || RoleUnspecified.name(Version03) != "unknown" {
		t.Error("role names")
	}
	if Version10.String() != "1.0" || Version03.String() != "0.3" || Version(7).String() != "" {
		t.Error("version names")
	}
}

// TestContinueRaces covers a task that changes while the agent handles a
// message continuing it: canceled meanwhile (-32004), or evicted meanwhile
// (-32001: the reply is dropped, the task not stored again).
func TestContinueRaces(t *testing.T) {
	var s *Server
	var during func(c *Call)
	s = newTestServer(t, func(c *Config) {
		c.MaxTasks = 1
		c.Agent = AgentFunc(func(ctx context.Context, c *Call) (*Reply, error) {
			if c.Task == nil {
				return &Reply{State: TaskStateInputRequired}, nil
			}
			during(c)
			return &Reply{Artifacts: []Artifact{{Name: "n", Description: "d", Extensions: []string{"urn:x"}, Parts: PartsOf(TextPart("done"))}}}, nil
		})
	})
	start := func() string {
		a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}`))
		return get(parse(t, a.result), "task", "id").(string)
	}
	cont := func(id string) answer {
		return call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id+`","parts":[{"text":"y"}]}}`))
	}

	id := start()
	during = func(c *Call) { call(t, s, "", req("CancelTask", `{"id":"`+c.TaskID+`"}`)) }
	if a := cont(id); a.code != -32004 {
		t.Errorf("canceled meanwhile: %+v", a)
	}

	id = start()
	during = func(*Call) { memStore(s).put(task("other", "x")) } // MaxTasks 1: evicts id
	if a := cont(id); a.code != -32001 || !strings.Contains(a.data, id) {
		t.Errorf("evicted meanwhile: %+v, want -32001", a)
	}
	if stored, ok := s.Task(id); ok {
		t.Errorf("evicted meanwhile, then stored again: %+v", stored)
	}
}

// TestCanceledEvictedStaysGone: a task canceled while the agent handles a
// message continuing it (the cancel acknowledged), then evicted before
// the agent replies, is not brought back by the reply: the message is
// answered -32001 and GetTask keeps answering -32001, in both versions
// and by SendStreamingMessage as well. (Found by review: storeReply
// stored the evicted task again from its snapshot taken before the
// agent ran, completed, undoing the cancel.)
func TestCanceledEvictedStaysGone(t *testing.T) {
	var s *Server
	var addr string
	during := func(c *Call) {
		if a := call(t, s, "", req("CancelTask", `{"id":"`+c.TaskID+`"}`)); a.code != 0 || get(parse(t, a.result), "status", "state") != "TASK_STATE_CANCELED" {
			t.Errorf("CancelTask while the agent runs: %+v", a)
		}
		call(t, s, "", req("SendMessage", text10("other"))) // MaxTasks 1: evicts the canceled task
		if _, ok := s.Task(c.TaskID); ok {
			t.Errorf("the canceled task was not evicted")
		}
	}
	s, _, addr = streamServer(t, fastserver.Config{}, func(c *Config) {
		c.MaxTasks = 1
		c.Agent = AgentFunc(func(ctx context.Context, c *Call) (*Reply, error) {
			if c.Task == nil {
				return &Reply{State: TaskStateInputRequired}, nil
			}
			during(c)
			return &Reply{Artifacts: []Artifact{{Name: "late", Parts: PartsOf(TextPart("done"))}}}, nil
		})
	})
	start := func() string {
		a := call(t, s, "", req("SendMessage", text10("x")))
		id, _ := get(parse(t, a.result), "task", "id").(string)
		if id == "" {
			t.Fatalf("SendMessage: %+v", a)
		}
		return id
	}
	gone := func(how, id string) {
		t.Helper()
		if stored, ok := s.Task(id); ok {
			t.Errorf("%s: the canceled task is back, %s: %+v", how, stored.Status.State.name(Version10), stored)
		}
		for _, v := range []string{"1.0", "0.3"} {
			method := map[string]string{"1.0": "GetTask", "0.3": "tasks/get"}[v]
			if a := call(t, s, v, req(method, `{"id":"`+id+`"}`)); a.code != -32001 {
				t.Errorf("%s: %s answered %+v, want -32001", how, method, a)
			}
		}
	}
	for _, v := range []string{"1.0", "0.3"} {
		id := start()
		method, msg := "SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id+`","parts":[{"text":"y"}]}}`
		if v == "0.3" {
			method, msg = "message/send", `{"message":{"kind":"message","role":"user","messageId":"m2","taskId":"`+id+`","parts":[{"kind":"text","text":"y"}]}}`
		}
		if a := call(t, s, v, req(method, msg)); a.code != -32001 {
			t.Errorf("%s after cancel and eviction: %+v, want -32001", method, a)
		}
		gone(method, id)
	}

	id := start()
	c := post(t, addr, "1.0", streamReq(1, "SendStreamingMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id+`","parts":[{"text":"y"}]}}`))
	if c.resp == nil || !strings.Contains(string(c.body), "-32001") {
		t.Errorf("SendStreamingMessage after cancel and eviction: %+v %s, want -32001", c.resp, c.body)
	}
	gone("SendStreamingMessage", id)
}
