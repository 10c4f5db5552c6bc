package app

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
)

// TestTaskLimitFlags: the -a2a-* flags parse into Options.Tasks, refuse
// what they cannot mean, and reach the task store: with a bound of 3
// tasks, the fourth evicts the first.
func TestTaskLimitFlags(t *testing.T) {
	o, err := ParseFlags([]string{"-a2a-max-tasks", "3", "-a2a-owner-tasks", "2", "-a2a-max-task-bytes", "8MiB", "-a2a-owner-task-bytes", "1M"}, io.Discard)
	if want := (TaskLimits{3, 8 << 20, 2, 1 << 20}); err != nil || o.Tasks != want {
		t.Errorf("parsed %+v (%v), want %+v", o.Tasks, err, want)
	}
	for _, args := range [][]string{
		{"-a2a-max-tasks", "-1"},
		{"-a2a-owner-tasks", "-2"},
		{"-a2a-max-task-bytes", "lots"},
		{"-a2a-owner-task-bytes", "0"},
	} {
		if _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
	if _, err := New(Options{Tasks: TaskLimits{MaxTasks: 3, MaxOwnerTasks: 4}}); err == nil || !strings.Contains(err.Error(), "MaxOwnerTasks") {
		t.Errorf("an owner share above the store: %v", err)
	}

	url, stop, err := Start(Options{Server: fastserver.Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Tasks: TaskLimits{MaxTasks: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	hdr := map[string]string{"A2A-Version": "1.0"}
	var ids []string
	for i := range 4 {
		a := do(t, "POST", url+"/a2a", hdr, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m`+strconv.Itoa(i)+`","parts":[{"text":"ping"}]}}}`)
		res, _ := a.body["result"].(map[string]any)
		task, _ := res["task"].(map[string]any)
		id, _ := task["id"].(string)
		if a.status != 200 || id == "" {
			t.Fatalf("SendMessage %d: %d %.300s", i, a.status, a.raw)
		}
		ids = append(ids, id)
	}
	for i, id := range ids {
		g := do(t, "POST", url+"/a2a", hdr, `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"`+id+`"}}`)
		if evicted := errCode(g) == -32001; evicted != (i == 0) {
			t.Errorf("task %d of 4 with -a2a-max-tasks 3: %d %.200s", i+1, g.status, g.raw)
		}
	}
}
