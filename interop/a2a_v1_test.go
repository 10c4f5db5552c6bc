package interop

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestA2AJavaScriptSDKv1 drives the 1.0 wire (A2A-Version: 1.0,
// SendStreamingMessage, SubscribeToTask, CancelTask) with the A2A
// JavaScript SDK's 1.x client (@a2a-js/sdk 1.3.0 as @a2a-js/sdk-v1,
// node/a2a_client_v1.mjs), built by the SDK's ClientFactory from the agent
// card's JSONRPC interface of protocolVersion 1.0. Each event is checked as
// the SDK parsed it and, strictly, as the 1.0 StreamResponse on the wire:
// the stream skill's Task first, chunk (append, lastChunk) and status
// pairs, completed last; a Task complete at once as one event; a sending
// stream and a subscription to the wait skill's task both ended canceled by
// a CancelTask from another client; a subscription joining the stream
// skill midway (the Task's artifact so far, then the appended rest, nothing
// lost or repeated); the refusals as the SDK's typed errors (-32004 for a
// finished task, -32001 for an unknown one, -32002 for a second cancel);
// and the SDK's v0.3 compatibility layer (message/stream, tasks/resubscribe
// under A2A-Version 0.3) against the same server.
func TestA2AJavaScriptSDKv1(t *testing.T) {
	dir, node := nodeTools(t)
	s := startServer(t)
	script, err := os.ReadFile("node/a2a_client_v1.mjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-", s.url)
	cmd.Dir = dir // so that the SDK resolves from the installed node_modules
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("a2a_client_v1.mjs: %v\n%s", err, out)
	}
	for _, want := range []string{`"failures":[]`, `"subscribe":"task statusUpdate"`, `UnsupportedOperationError -32004`, `TaskNotFoundError -32001`, `"legacyOrder":"task artifactUpdate`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("a2a_client_v1.mjs: no %s in %s", want, out)
		}
	}
	t.Logf("%s", out)
}
