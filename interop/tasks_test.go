package interop

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMCPTasksTypeScriptV2 drives the tasks extension (SEP-2663,
// "io.modelcontextprotocol/tasks", MCP 2026-07-28) of the conformance
// fixtures from Node over real HTTP (node/ts2_tasks_client.mjs), with the
// official MCP TypeScript SDK v2 client (@modelcontextprotocol/client
// 2.4.0) pinned to 2026-07-28.
//
// The SDK has no task API: its 2026-07-28 codec refuses a tools/call
// answered with resultType "task" (UNSUPPORTED_RESULT_TYPE, which the script
// checks so that an SDK that learns tasks is noticed), and it has nothing to
// poll, answer or cancel a task with (@modelcontextprotocol/sdk 1.32.2 has
// only the 2025-11-25 experimental tasks: tasks/result, no tasks/update, no
// resultType). So the script creates tasks with plain fetch POSTs carrying
// the 2026-07-28 headers and _meta envelope with clientCapabilities.extensions,
// and sends tasks/get, tasks/update and tasks/cancel with the SDK's raw
// client.request, whose transport sets Mcp-Name to the taskId.
//
// Covered: slow_compute (0.3 s) polled to completed; confirm_delete's
// elicitation answered through tasks/update (an answer to no request
// ignored first), accepted and declined; a 30 s slow_compute cancelled and
// still cancelled afterwards; failing_job completed with isError;
// protocol_error_job failed with -32603 inlined; -32602 for an unknown task
// on tasks/get, tasks/update and tasks/cancel; -32021 (HTTP 400) for the
// tasks methods and a task-required tool without the extension; -32020 for
// an Mcp-Name that is not the taskId; 404 / -32601 for tasks/list; calls
// answered on their request (no extension, 0 s, greet). The script checks
// everything it sees; this test checks the summary's key answers again.
func TestMCPTasksTypeScriptV2(t *testing.T) {
	out := runNodeClient(t, "ts2_tasks_client.mjs", 45*time.Second)
	type flow struct {
		Statuses []string `json:"statuses"`
		// A cancelled task's statusMessage: gone with the cancel (a
		// progress message would tell of work that stopped).
		StatusMessageAfterCancel *string `json:"statusMessageAfterCancel"`
		Text                     string  `json:"text"`
		IsError                  bool    `json:"isError"`
		Error                    *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	type coded struct {
		Code any `json:"code"` // a JSON-RPC code, or the SDK's string code
	}
	var got struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Flows           map[string]flow `json:"flows"`
		Refusals        struct {
			UnknownGet    coded    `json:"unknownGet"`
			UnknownUpdate coded    `json:"unknownUpdate"`
			UnknownCancel coded    `json:"unknownCancel"`
			NoExtGet      coded    `json:"noExtGet"`
			NoExtCall     coded    `json:"noExtCall"`
			NoExtRaw      []int    `json:"noExtRaw"`
			Mismatch      []int    `json:"mismatch"`
			TasksList     []int    `json:"tasksList"`
			Inline        []string `json:"inline"`
			SDKTaskCall   coded    `json:"sdkTaskCall"`
		} `json:"refusals"`
		SDKTaskPosts int       `json:"sdkTaskPosts"`
		ElapsedMs    int       `json:"elapsedMs"`
		Failures     *[]string `json:"failures"`
	}
	// The summary is the last line (the client may warn on stderr first).
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("ts2_tasks_client.mjs printed no summary (%v):\n%s", err, out)
	}
	if got.Failures == nil || len(*got.Failures) != 0 {
		t.Errorf("ts2_tasks_client.mjs failures: %v", got.Failures)
	}
	if got.ProtocolVersion != "2026-07-28" {
		t.Errorf("negotiated %q, want 2026-07-28", got.ProtocolVersion)
	}

	asked := []string{"working", "input_required", "completed"}
	askedSeen := []string{"working", "input_required", "working", "completed"}
	for _, w := range []struct {
		name     string
		statuses [][]string
		text     string
		isError  bool
		code     int
	}{
		{"slow", [][]string{{"working", "completed"}}, "computed interop in 0.3s", false, 0},
		{"confirmed", [][]string{asked, askedSeen}, "deleted notes.txt", false, 0},
		{"declined", [][]string{asked, askedSeen}, "kept keep.txt", false, 0},
		{"cancelled", [][]string{{"working", "cancelled"}}, "", false, 0},
		{"failing", [][]string{{"working", "completed"}}, "the job failed: no such input", true, 0},
		{"protocolError", [][]string{{"working", "failed"}}, "", false, -32603},
	} {
		f, ok := got.Flows[w.name]
		if !ok {
			t.Errorf("flow %s: missing from the summary", w.name)
			continue
		}
		okSeq := false
		for _, s := range w.statuses {
			okSeq = okSeq || reflect.DeepEqual(f.Statuses, s)
		}
		if !okSeq {
			t.Errorf("flow %s: statuses %v, want one of %v", w.name, f.Statuses, w.statuses)
		}
		if f.Text != w.text || f.IsError != w.isError {
			t.Errorf("flow %s: text %q isError %v, want %q %v", w.name, f.Text, f.IsError, w.text, w.isError)
		}
		switch {
		case w.code == 0 && f.Error != nil:
			t.Errorf("flow %s: error %d, want none", w.name, f.Error.Code)
		case w.code != 0 && (f.Error == nil || f.Error.Code != w.code):
			t.Errorf("flow %s: error %+v, want %d", w.name, f.Error, w.code)
		}
	}

	if m := got.Flows["cancelled"].StatusMessageAfterCancel; m != nil {
		t.Errorf("a cancelled task's statusMessage %q, want none", *m)
	}

	r := got.Refusals
	for name, c := range map[string]struct {
		got  any
		want any
	}{
		"tasks/get of an unknown task":            {r.UnknownGet.Code, -32602.0},
		"tasks/update of an unknown task":         {r.UnknownUpdate.Code, -32602.0},
		"tasks/cancel of an unknown task":         {r.UnknownCancel.Code, -32602.0},
		"tasks/get without the extension":         {r.NoExtGet.Code, -32021.0},
		"a task-required tool without it":         {r.NoExtCall.Code, -32021.0},
		"HTTP status and codes without it (raw)":  {r.NoExtRaw, []int{400, -32021, 400, -32021}},
		"Mcp-Name other than the taskId":          {r.Mismatch, []int{400, -32020}},
		"tasks/list":                              {r.TasksList, []int{404, -32601}},
		"calls answered on their request":         {r.Inline, []string{"computed inline in 0.2s", "computed job in 0s", "Hello, Ada!"}},
		"the SDK's callTool answered with a task": {r.SDKTaskCall.Code, "UNSUPPORTED_RESULT_TYPE"},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	if got.SDKTaskPosts < 20 {
		t.Errorf("%d tasks/* requests through the SDK, want at least 20", got.SDKTaskPosts)
	}
	t.Logf("%s", out)
}
