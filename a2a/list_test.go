package a2a

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestListTasks(t *testing.T) {
	s := newTestServer(t, nil)
	clock := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	send := func(ctxID, text string) string {
		a := call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","contextId":"`+ctxID+`","parts":[{"text":"`+text+`"}]}}`))
		if a.code != 0 {
			t.Fatalf("send: %+v", a)
		}
		return get(parse(t, a.result), "task", "id").(string)
	}
	var inA []string
	for i := range 7 {
		inA = append([]string{send("ctx-a", fmt.Sprint("t", i))}, inA...)
	}
	asked := send("ctx-a", "ask") // input-required, newest
	inA = append([]string{asked}, inA...)
	send("ctx-b", "other")

	var got []string
	tok := ""
	for range 10 {
		params := `{"contextId":"ctx-a","pageSize":3,"historyLength":0,"pageToken":"` + tok + `"}`
		a := call(t, s, "", req("ListTasks", params))
		if a.code != 0 {
			t.Fatalf("ListTasks: %+v", a)
		}
		res := parse(t, a.result)
		if get(res, "pageSize") != 3.0 || get(res, "totalSize") != 8.0 {
			t.Errorf("sizes: %s", a.result)
		}
		for _, tk := range get(res, "tasks").([]any) {
			got = append(got, get(tk, "id").(string))
			if get(tk, "history") != nil || get(tk, "artifacts") != nil {
				t.Errorf("historyLength 0 and no includeArtifacts: %v", tk)
			}
		}
		tok = get(res, "nextPageToken").(string)
		if tok == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(inA, ",") {
		t.Errorf("pages: %v\nwant %v", got, inA)
	}
	// Filters, artifacts, defaults.
	a := call(t, s, "1.0", req("ListTasks", `{"contextId":"ctx-a","status":"TASK_STATE_INPUT_REQUIRED"}`))
	res := parse(t, a.result)
	if a.code != 0 || get(res, "totalSize") != 1.0 || get(res, "pageSize") != 50.0 || get(res, "tasks", 0, "id") != asked {
		t.Errorf("status filter: %+v", a)
	}
	a = call(t, s, "", req("ListTasks", `{"contextId":"ctx-b","includeArtifacts":true}`))
	if a.code != 0 || get(parse(t, a.result), "tasks", 0, "artifacts", 0, "parts", 0, "text") != "other" {
		t.Errorf("includeArtifacts: %+v", a)
	}
	a = call(t, s, "", req("ListTasks", ""))
	if a.code != 0 || get(parse(t, a.result), "totalSize") != 9.0 {
		t.Errorf("no params: %+v", a)
	}
	a = call(t, s, "0.3", req("ListTasks", `{"status":"input-required"}`))
	if a.code != 0 || get(parse(t, a.result), "tasks", 0, "kind") != "task" {
		t.Errorf("0.3 shapes: %+v", a)
	}
	a = call(t, s, "", req("ListTasks", `{"statusTimestampAfter":"2026-05-06T07:08:09.008Z"}`))
	if a.code != 0 || get(parse(t, a.result), "totalSize") != 2.0 {
		t.Errorf("statusTimestampAfter: %+v", a)
	}
	for params, field := range map[string]string{
		`[]`:                                   "",
		`{"pageSize":0}`:                       "pageSize",
		`{"pageSize":101}`:                     "pageSize",
		`{"pageSize":1.5}`:                     "pageSize",
		`{"pageSize":"3"}`:                     "pageSize",
		`{"pageSize":-1}`:                      "pageSize",
		`{"status":"WORKING"}`:                 "status",
		`{"status":"working"}`:                 "status", // a 0.3 name under 1.0
		`{"contextId":3}`:                      "contextId",
		`{"pageToken":"not-a-token"}`:          "pageToken",
		`{"historyLength":-2}`:                 "historyLength",
		`{"statusTimestampAfter":"yesterday"}`: "statusTimestampAfter",
		`{"includeArtifacts":"yes"}`:           "includeArtifacts",
		`{"pageSize":1,"pageSize":2}`:          "",
	} {
		a := call(t, s, "1.0", req("ListTasks", params))
		if a.status != 200 || a.code != -32602 || a.field() != field {
			t.Errorf("%s: %+v, want -32602 field %q", params, a, field)
		}
	}
}

// downStore is a TaskStore whose backend is unreachable.
type downStore struct{}

var errDown = fmt.Errorf("redis: connection refused: %w", ErrStoreUnavailable)

func (downStore) Get(context.Context, string) (*Task, error) { return nil, errDown }
func (downStore) Create(context.Context, *Task) error        { return errDown }
func (downStore) Update(context.Context, string, func(*Task) (*Task, error)) (*Task, error) {
	return nil, errDown
}
func (downStore) List(context.Context, TaskQuery) (TaskPage, error) { return TaskPage{}, errDown }

// The store down: every task call is 503 / -32603 with Retry-After; the
// rest (a direct message, refusals decided before the store) still
// answers.
func TestStoreUnavailable(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.Tasks = downStore{} })
	for _, body := range []string{
		req("SendMessage", msg10),
		req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","taskId":"t1","parts":[{"text":"hi"}]}}`),
		req("GetTask", `{"id":"t1"}`),
		req("CancelTask", `{"id":"t1"}`),
		req("ListTasks", `{}`),
	} {
		a := call(t, s, "", body)
		if a.status != 503 || a.code != -32603 {
			t.Errorf("%s: %+v, want 503 / -32603", body, a)
		}
	}
	if e := storeError(errDown, "x"); e != errStoreDown || errStoreDown.RetryAfter != StoreRetryAfter {
		t.Errorf("storeError: %v", e)
	}
	if a := call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"direct"}]}}`)); a.code != 0 {
		t.Errorf("a direct message needs no store: %+v", a)
	}
	if a := call(t, s, "", req("GetTask", `{"id":3}`)); a.code != -32602 {
		t.Errorf("params are checked before the store: %+v", a)
	}
	if _, ok := s.Task("t1"); ok {
		t.Error("Task found a task in a store that is down")
	}
	if e := storeError(fmt.Errorf("w: %w", ErrTaskTooLarge), "x"); !strings.Contains(fmt.Sprint(e), "-32602") {
		t.Errorf("too large: %v", e)
	}
	plain := errors.New("boom")
	if e := storeError(plain, "x"); e != plain {
		t.Errorf("other errors pass: %v", e)
	}
}

// UpdateTask reports background work; a cancel that came first wins.
func TestUpdateTask(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"ask"}]}}`))
	id := get(parse(t, a.result), "task", "id").(string)
	done := &Reply{State: TaskStateCompleted, Status: &Message{Parts: PartsOf(TextPart("done"))}, Artifacts: []Artifact{{Parts: PartsOf(TextPart("r"))}}}
	tk, err := s.UpdateTask(context.Background(), id, done)
	if err != nil || tk.Status.State != TaskStateCompleted || len(tk.Artifacts) != 1 || tk.Artifacts[0].ArtifactID == "" || len(tk.History) != 3 {
		t.Fatalf("UpdateTask: %+v %v", tk, err)
	}
	if _, err := s.UpdateTask(context.Background(), id, done); !errors.Is(err, ErrTaskFinal) {
		t.Errorf("second report: %v, want ErrTaskFinal", err)
	}
	a = call(t, s, "", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"ask"}]}}`))
	id = get(parse(t, a.result), "task", "id").(string)
	if a := call(t, s, "", req("CancelTask", `{"id":"`+id+`"}`)); a.code != 0 {
		t.Fatalf("cancel: %+v", a)
	}
	if _, err := s.UpdateTask(context.Background(), id, done); !errors.Is(err, ErrTaskFinal) {
		t.Errorf("report after cancel: %v", err)
	}
	if a := call(t, s, "", req("CancelTask", `{"id":"`+id+`"}`)); a.code != -32002 || !strings.Contains(a.msg, "TASK_STATE_CANCELED") {
		t.Errorf("second cancel: %+v", a)
	}
	if _, err := s.UpdateTask(context.Background(), "nope", done); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	if _, err := s.UpdateTask(context.Background(), id, &Reply{Message: &Message{}}); err == nil {
		t.Error("a direct message is refused")
	}
}
