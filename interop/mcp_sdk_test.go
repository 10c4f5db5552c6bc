package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is a running cmd/rpcedge process.
type server struct {
	url  string
	cmd  *exec.Cmd
	done chan error
}

// startServer builds cmd/rpcedge from the parent module and runs it on a
// free loopback port; t.Cleanup stops it by its process id with SIGTERM
// and checks that it exits 0.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rpcedge")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rpcedge")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/rpcedge: %v\n%s", err, out)
	}
	if tr := os.Getenv("RPCEDGE_TRANSPORT"); tr != "" {
		// The same clients against the other transport (.ci/run runs both).
		args = append([]string{"-transport", tr}, args...)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-grace", "5s"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		sent := false
		for lines.Scan() {
			if l := lines.Text(); !sent && strings.HasPrefix(l, "listening on ") {
				found <- strings.TrimPrefix(l, "listening on ")
				sent = true
			}
		}
		s.done <- cmd.Wait()
	}()
	select {
	case s.url = <-found:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("cmd/rpcedge did not print its address within 30 s")
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("cmd/rpcedge exited with %v after SIGTERM, want 0", err)
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Error("cmd/rpcedge did not exit within 15 s of SIGTERM")
		}
	})
	return s
}

// headerRecorder records the MCP headers the SDK sends.
type headerRecorder struct {
	base    http.RoundTripper
	methods []string
	version []string
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		h.methods = append(h.methods, r.Header.Get("Mcp-Method"))
		h.version = append(h.version, r.Header.Get("MCP-Protocol-Version"))
	}
	return h.base.RoundTrip(r)
}

func TestMCPGoSDK(t *testing.T) {
	s := startServer(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rec := &headerRecorder{base: http.DefaultTransport}
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:             s.url + "/mcp",
				HTTPClient:           &http.Client{Transport: rec},
				DisableStandaloneSSE: true,
				MaxRetries:           -1,
			}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer session.Close()
			if got := session.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}

			tools, err := session.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !contains(names, "echo") || !contains(names, "add") {
				t.Errorf("tools/list: %v, want echo and add", names)
			}

			text := fmt.Sprintf("héllo %s \"quoted\" \\ %d", version, time.Now().UnixNano())
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if err != nil {
				t.Fatalf("tools/call echo: %v", err)
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != text {
				t.Errorf("echo: %+v, want %q", res, text)
			}

			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
			if err != nil {
				t.Fatalf("tools/call add: %v", err)
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "42" {
				t.Errorf("add: %+v, want 42", res)
			}

			// Arguments that do not fit the schema: -32602, the call did not happen.
			_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 5}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 {
				t.Errorf("echo with a number: err %v, want a -32602 error", err)
			}

			rr, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "rpcedge://about"})
			if err != nil {
				t.Fatalf("resources/read: %v", err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].URI != "rpcedge://about" || rr.Contents[0].Text == "" {
				t.Errorf("resources/read: %+v", rr.Contents)
			}

			pr, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil {
				t.Fatalf("prompts/get: %v", err)
			}
			if len(pr.Messages) != 1 || pr.Messages[0].Role != "user" || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
				t.Errorf("prompts/get: %+v", pr.Messages)
			}

			if version == "2026-07-28" {
				for i, m := range rec.methods {
					if m == "" || rec.version[i] != version {
						t.Errorf("request %d: Mcp-Method %q, MCP-Protocol-Version %q", i, m, rec.version[i])
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
