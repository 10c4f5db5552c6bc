package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioServerSource is the server TestMCPGoSDKStdioCancel drives: an
// rpcedge mcp.Server served by fastserver.ServeLines on standard input
// and output (as rpcedge -stdio serves its demo), built in the parent
// module as startListenServer builds its program. Two tools: wait, which
// writes "started ID" to standard error and waits (at most 30 s) for its
// context to end, then writes "ended ERR"; say, which answers its text.
const stdioServerSource = `package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

func main() {
	s, err := mcp.New(mcp.Info{Name: "interop-stdio", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	s.AddTool(mcp.Tool{Name: "wait", Handler: mcp.ToolFunc(func(c *mcp.Call) error {
		fmt.Fprintf(os.Stderr, "started %s\n", c.Request().Msg.ID)
		select {
		case <-c.Context().Done():
			fmt.Fprintf(os.Stderr, "ended %v\n", c.Context().Err())
			return c.Context().Err()
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "ended: not cancelled")
		}
		c.AddText("waited")
		return nil
	})})
	s.AddTool(mcp.Tool{Name: "say", InputSchema: ` + "`" + `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}` + "`" + `,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error { return c.AddTextJSON(c.Arg("text")) })})
	cfg := fastserver.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if err := fastserver.ServeLines(context.Background(), s.StreamEndpoint(), cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ServeLines:", err)
		os.Exit(1)
	}
}
`

// buildProgram writes source (package main, importing rpcedge) to a
// temporary directory and builds it in the parent module, which this
// module does not require (the clients stay out of its dependencies); it
// returns the binary's path.
func buildProgram(t *testing.T, name, source string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", bin, src)
	build.Dir = ".." // the parent module: github.com/rpcedge/rpcedge
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// TestMCPGoSDKStdioCancel: the official Go SDK's client (v1.8.0), over
// its CommandTransport, against rpcedge over stdio. Cancelling the
// context of a CallTool makes the SDK send notifications/cancelled for
// the call's id (MCP 2026-07-28: over stdio the only way to cancel); the
// tool's context ends with context.Canceled at once, the call gets no
// answer on the wire, and the session goes on (a later CallTool answers,
// the process exits 0 when the session closes).
func TestMCPGoSDKStdioCancel(t *testing.T) {
	bin := buildProgram(t, "stdio-server", stdioServerSource)
	stderr := &syncBuffer{}
	cmd := exec.Command(bin)
	cmd.Stderr = stderr
	wire := &syncBuffer{}
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	session, err := client.Connect(ctx, &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: wire}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr)
	}
	closed := false
	defer func() {
		if !closed {
			session.Close()
		}
	}()

	waitFor := func(re *regexp.Regexp, what string) []string {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				return m
			}
		}
		t.Fatalf("%s: not within 10 s; stderr:\n%s\nwire:\n%s", what, stderr, wire)
		return nil
	}

	callCtx, cancelCall := context.WithCancel(ctx)
	res := make(chan error, 1)
	go func() {
		_, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		res <- err
	}()
	id := waitFor(regexp.MustCompile(`started (\S+)`), "the wait tool's start")[1]
	cancelCall()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("CallTool after its context was cancelled: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CallTool did not return after its context was cancelled")
	}
	if m := waitFor(regexp.MustCompile(`ended (.*)`), "the wait tool's end"); m[1] != "context canceled" {
		t.Fatalf("the tool ended with %q, want its context cancelled", m[1])
	}

	text := "après " + randomSegment()
	r, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "say", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("CallTool after the cancellation: %v", err)
	}
	if len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != text {
		t.Fatalf("say answered %+v", r.Content)
	}
	if err := session.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	closed = true
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "Wait was already called") {
		t.Errorf("the server exited with %v; stderr:\n%s", err, stderr)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the server's exit: %v; stderr:\n%s", cmd.ProcessState, stderr)
	}

	// On the wire: the SDK sent the cancellation for the wait call's id,
	// and no answer to that id came back.
	w := wire.String()
	if !regexp.MustCompile(`write: \{[^\n]*"method":"notifications/cancelled"[^\n]*"requestId":` + regexp.QuoteMeta(id)).MatchString(w) {
		t.Fatalf("no notifications/cancelled for request %s on the wire:\n%s", id, w)
	}
	if regexp.MustCompile(`read: \{[^\n]*"id":` + regexp.QuoteMeta(id) + `[,}]`).MatchString(w) {
		t.Fatalf("the cancelled request %s was answered:\n%s", id, w)
	}
	t.Logf("request %s cancelled; wire:\n%s", id, w)
}

// sessionCancelServerSource is the server TestMCPTypeScriptSDKSessionCancel
// drives: an rpcedge mcp.Server with sessions, served by fastserver on a
// free loopback port (it prints "listening on URL"), with the tools of
// stdioServerSource: wait writes "started ID" and "ended ERR" to
// standard error. It serves until its standard input ends.
const sessionCancelServerSource = `package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

func main() {
	s, err := mcp.New(mcp.Info{Name: "interop-session-cancel", Version: "1.0.0"}, mcp.WithSessions(mcp.SessionOptions{}))
	if err != nil {
		panic(err)
	}
	s.AddTool(mcp.Tool{Name: "wait", Handler: mcp.ToolFunc(func(c *mcp.Call) error {
		fmt.Fprintf(os.Stderr, "started %s\n", c.Request().Msg.ID)
		select {
		case <-c.Context().Done():
			fmt.Fprintf(os.Stderr, "ended %v\n", c.Context().Err())
			return c.Context().Err()
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "ended: not cancelled")
		}
		c.AddText("waited")
		return nil
	})})
	s.AddTool(mcp.Tool{Name: "say", InputSchema: ` + "`" + `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}` + "`" + `,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error { return c.AddTextJSON(c.Arg("text")) })})
	srv, err := fastserver.New(fastserver.Config{HandlerTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}, s.Endpoint())
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
`

// TestMCPTypeScriptSDKSessionCancel: the official TypeScript SDK client
// (1.32.2, 2025-11-25, Streamable HTTP with a session) aborts a tools/call
// through its AbortSignal once the tool runs: it POSTs
// notifications/cancelled in its session, and rpcedge ends the tool's
// context with context.Canceled (under 2025-xx the aborted connection
// alone would not: "Disconnection SHOULD NOT be interpreted as the client
// cancelling its request"); a later call in the session answers.
func TestMCPTypeScriptSDKSessionCancel(t *testing.T) {
	dir, node := nodeTools(t)
	bin := buildProgram(t, "session-cancel-server", sessionCancelServerSource)
	stderr := &syncBuffer{}
	cmd := exec.Command(bin)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the server exited with %v; stderr:\n%s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the server did not exit; stderr:\n%s", stderr)
		}
	}()
	line := make([]byte, 0, 128)
	for b := make([]byte, 1); ; {
		if _, err := out.Read(b); err != nil {
			t.Fatalf("the server's address: %v; stderr:\n%s", err, stderr)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
	}
	url, ok := strings.CutPrefix(string(line), "listening on ")
	if !ok {
		t.Fatalf("the server printed %q", line)
	}
	src, err := os.ReadFile(filepath.Join("node", "ts_cancel_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := exec.CommandContext(ctx, node, "--input-type=module", "-", url)
	client.Dir = dir
	client.Stdin = strings.NewReader(string(src))
	got, err := client.CombinedOutput()
	if err != nil {
		t.Fatalf("ts_cancel_client.mjs: %v\n%s\nserver:\n%s", err, got, stderr)
	}
	if !strings.Contains(string(got), `"protocolVersion":"2025-11-25"`) || !strings.Contains(string(got), `"failures":[]`) {
		t.Fatalf("ts_cancel_client.mjs: %s", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "ended ") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !regexp.MustCompile(`started \S+\n`).MatchString(stderr.String()) || !strings.Contains(stderr.String(), "ended context canceled") {
		t.Fatalf("the wait tool was not cancelled; server:\n%s\nclient: %s", stderr, got)
	}
	t.Logf("client: %s", got)
}
