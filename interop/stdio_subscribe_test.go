package interop

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioSubscribeSource is the server TestMCPGoSDKStdioSubscribe drives:
// an rpcedge mcp.Server served by fastserver.ServeLines on standard input
// and output, with two resources (their URIs the arguments) and a tool
// "touch" that calls Server.NotifyResourceUpdated for the URI it is given
// and answers how many streams it reached.
const stdioSubscribeSource = `package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

func main() {
	s, err := mcp.New(mcp.Info{Name: "interop-stdio-subscribe", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	for _, uri := range os.Args[1:] {
		s.AddResource(mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain", Text: "contents"})
	}
	s.AddTool(mcp.Tool{Name: "touch", InputSchema: ` + "`" + `{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}` + "`" + `,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			uri, _ := strconv.Unquote(string(c.Arg("uri")))
			c.AddText(strconv.Itoa(s.NotifyResourceUpdated(uri)))
			return nil
		})})
	cfg := fastserver.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if err := fastserver.ServeLines(context.Background(), s.StreamEndpoint(), cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ServeLines:", err)
		os.Exit(1)
	}
}
`

// TestMCPGoSDKStdioSubscribe: the official Go SDK client (v1.8.0) over its
// CommandTransport, under 2025-11-25, subscribes to a resource over
// stdio: an update of it reaches the SDK's ResourceUpdatedHandler (a line
// between the answers), an update of the other resource does not, and
// after Unsubscribe none does.
func TestMCPGoSDKStdioSubscribe(t *testing.T) {
	a, b := "interop://a/"+randomSegment(), "interop://b/"+randomSegment()
	bin := buildProgram(t, "stdio-subscribe-server", stdioSubscribeSource)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var updated []string
	arrived := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-stdio-subscribe", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updated = append(updated, req.Params.URI)
			mu.Unlock()
			arrived <- struct{}{}
		},
	})
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, a, b)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()
	if caps := session.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("initialize offers no resources.subscribe: %+v", caps.Resources)
	}
	touch := func(uri string) string {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("touch %s: %v %+v", uri, err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: a}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if n := touch(b); n != "0" {
		t.Errorf("an update of %s reached %s streams, want 0", b, n)
	}
	if n := touch(a); n != "1" {
		t.Errorf("an update of %s reached %s streams, want 1", a, n)
	}
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the update did not reach the SDK's handler")
	}
	if err := session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: a}); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	if n := touch(a); n != "0" {
		t.Errorf("after Unsubscribe an update reached %s streams, want 0", n)
	}
	select {
	case <-arrived:
		t.Error("an update arrived after Unsubscribe")
	case <-time.After(300 * time.Millisecond):
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updated) != 1 || updated[0] != a {
		t.Errorf("updates %q, want one of %s", updated, a)
	}
}
