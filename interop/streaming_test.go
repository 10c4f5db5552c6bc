// Roots, sampling and logging are deprecated by SEP-2577 (2026-07-28) but
// served during the deprecation window; this test drives them on purpose.
//
//lint:file-ignore SA1019 the deprecated features are what this test exercises

package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPGoSDKStreaming drives the conformance fixtures (cmd/rpcedge
// -demo conformance) with the official MCP Go SDK client under both
// protocol generations: progress and log notifications on streamed
// answers, and requests to the client (sampling, elicitation, roots) — on
// the request's stream under 2025-11-25, as input_required rounds with
// requestState under 2026-07-28 (the SDK's client runs the rounds).
func TestMCPGoSDKStreaming(t *testing.T) {
	s := startServer(t, "-demo", "conformance")
	goSDKStreaming(t, func() mcp.Transport {
		return &mcp.StreamableClientTransport{
			Endpoint:             s.url + "/mcp",
			HTTPClient:           &http.Client{},
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
	})
}

// TestMCPGoSDKStdioStreaming is TestMCPGoSDKStreaming over stdio: the Go
// SDK's CommandTransport runs rpcedge -stdio -demo conformance, a
// process per version. Progress and log messages are lines before the
// answer; under 2025-11-25 sampling and elicitation are request lines
// whose responses the SDK writes back while the tool waits.
func TestMCPGoSDKStdioStreaming(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rpcedge")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rpcedge")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/rpcedge: %v\n%s", err, out)
	}
	goSDKStreaming(t, func() mcp.Transport {
		cmd := exec.Command(bin, "-stdio", "-demo", "conformance")
		cmd.Stderr = io.Discard
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	})
}

// goSDKStreaming is the body of the streaming tests: the Go SDK client on
// the transport dial gives, under each protocol generation.
func goSDKStreaming(t *testing.T, dial func() mcp.Transport) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var (
				mu       sync.Mutex
				progress []float64
				logs     []string
				sampled  int
				elicited int
			)
			client := mcp.NewClient(&mcp.Implementation{Name: "interop-streaming", Version: "1.0.0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					sampled++
					mu.Unlock()
					return &mcp.CreateMessageResult{Role: "assistant", Model: "interop-model", Content: &mcp.TextContent{Text: "sampled by the Go SDK"}}, nil
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					elicited++
					mu.Unlock()
					content := map[string]any{}
					if req.Params != nil && req.Params.RequestedSchema != nil {
						// Answer every string the schema asks for.
						if schema, ok := req.Params.RequestedSchema.(map[string]any); ok {
							if props, ok := schema["properties"].(map[string]any); ok {
								for name, p := range props {
									if pm, ok := p.(map[string]any); ok && pm["type"] == "string" && pm["enum"] == nil {
										content[name] = "go-" + name
									}
								}
							}
						}
					}
					return &mcp.ElicitResult{Action: "accept", Content: content}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Progress)
					mu.Unlock()
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, fmt.Sprint(req.Params.Data))
					mu.Unlock()
				},
			})
			client.AddRoots(&mcp.Root{URI: "file:///interop", Name: "interop"})
			session, err := client.Connect(ctx, dial(), &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer session.Close()

			// Progress, then logs.
			params := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
			params.SetProgressToken("go-progress-" + version)
			if _, err := session.CallTool(ctx, params); err != nil {
				t.Fatalf("progress tool: %v", err)
			}
			logParams := &mcp.CallToolParams{Name: "test_tool_with_logging", Arguments: map[string]any{}}
			if version == "2026-07-28" {
				logParams.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": "info"}
			} else if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatalf("logging/setLevel: %v", err)
			}
			if _, err := session.CallTool(ctx, logParams); err != nil {
				t.Fatalf("logging tool: %v", err)
			}
			// The SDK hands notifications to their handlers on goroutines of
			// their own: the last may land just after the result.
			var gotProgress []float64
			var gotLogs []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				gotProgress, gotLogs = append([]float64(nil), progress...), append([]string(nil), logs...)
				mu.Unlock()
				if len(gotProgress) >= 3 && len(gotLogs) >= 3 || time.Now().After(deadline) {
					break
				}
			}
			slices.Sort(gotProgress) // handled concurrently, so possibly out of order
			if len(gotProgress) != 3 || gotProgress[0] != 0 || gotProgress[1] != 50 || gotProgress[2] != 100 {
				t.Errorf("progress %v, want [0 50 100]", gotProgress)
			}
			slices.Sort(gotLogs)
			if !slices.Equal(gotLogs, []string{"Tool execution completed", "Tool execution started", "Tool processing data"}) {
				t.Errorf("logs %q, want the tool's three messages", gotLogs)
			}

			// Requests to the client.
			text := func(name string, args map[string]any) string {
				t.Helper()
				res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if res.IsError || len(res.Content) == 0 {
					t.Fatalf("%s: %+v", name, res)
				}
				return res.Content[0].(*mcp.TextContent).Text
			}
			if got := text("test_sampling", map[string]any{"prompt": "hi"}); got != "LLM response: sampled by the Go SDK" {
				t.Errorf("sampling: %q", got)
			}
			if got := text("test_elicitation", map[string]any{"message": "who?"}); !strings.Contains(got, `"username":"go-username"`) {
				t.Errorf("elicitation: %q", got)
			}
			if version == "2026-07-28" {
				if got := text("test_input_required_result_multi_round", map[string]any{}); got != "go-name likes go-color" {
					t.Errorf("multi-round: %q", got)
				}
				if got := text("test_input_required_result_list_roots", map[string]any{}); !strings.Contains(got, "file:///interop") {
					t.Errorf("roots: %q", got)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if sampled == 0 || elicited == 0 {
				t.Errorf("the server asked for %d samples and %d elicitations", sampled, elicited)
			}
		})
	}
}
