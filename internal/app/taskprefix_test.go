package app

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestTaskIDPrefix(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		instance string
		fleet    bool
		want     string
	}{
		{"", false, ""},
		{"edge-1", false, "edge-1."},
		{"edge-1", true, "edge-1."},
		{"a.b/c d", false, "a-b-c-d."},
		{"é", false, "--."},
		{strings.Repeat("x", 80), false, strings.Repeat("x", 63) + "."},
	} {
		if got := taskIDPrefix(c.instance, c.fleet); got != c.want {
			t.Errorf("taskIDPrefix(%q, %v) = %q, want %q", c.instance, c.fleet, got, c.want)
		}
	}
	if got := taskIDPrefix("", true); host != "" && !strings.HasSuffix(got, ".") {
		t.Errorf("with -redis and no -instance: %q", got)
	}
}

// TestMCPTaskMetrics: with -demo conformance and -instance, a task's id
// names the instance and /metrics counts the task store's tasks.
func TestMCPTaskMetrics(t *testing.T) {
	var opts Options
	opts.Server.Addr = "127.0.0.1:0"
	opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Demo, opts.Instance = "conformance", "edge-7"
	u, stop, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	req, _ := http.NewRequest("POST", u+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":30},`+meta+`}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow_compute"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Result struct{ TaskID string } }
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(v.Result.TaskID, "edge-7.") {
		t.Fatalf("task id %q (%v)", v.Result.TaskID, err)
	}
	resp, err = http.Get(u + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"\nrpcedge_mcp_tasks{status=\"working\"} 1\n", "\nrpcedge_mcp_tasks{status=\"completed\"} 0\n",
		"\n# TYPE rpcedge_mcp_task_bytes gauge\n", "\nrpcedge_mcp_tasks_refused_total{reason=\"full\"} 0\n"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
