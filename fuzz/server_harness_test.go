package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// The server under test is built from public packages only, like the demo
// server of internal/app (which this module cannot import): the MCP echo
// and add tools, the about resource and the greet prompt; the A2A echo
// agent with the demo card (no streaming, no push notifications, no
// extended card). It serves over an in-memory listener, so the early
// answers that hijack the connection (rows 1 to 7 with a body still
// pending) run exactly as over TCP.

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Take returns what was logged since the last call and forgets it.
func (b *syncBuffer) Take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

type testServer struct {
	srv *fastserver.Server
	ln  *fasthttputil.InmemoryListener
	log *syncBuffer
}

func demoMCP() (*mcp.Server, error) {
	s, err := mcp.New(mcp.Info{Name: "rpcedge-fuzz", Version: "0.0.1"})
	if err != nil {
		return nil, err
	}
	s.AddTool(mcp.Tool{
		Name:        "echo",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Handler:     mcp.ToolFunc(func(c *mcp.Call) error { return c.AddTextJSON(c.Arg("text")) }),
	})
	s.AddTool(mcp.Tool{
		Name:        "add",
		InputSchema: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			// Echo the raw numbers: the test is about the server, not
			// about arithmetic.
			c.AddText(string(c.Arg("a")) + "+" + string(c.Arg("b")))
			return nil
		}),
	})
	s.AddResource(mcp.Resource{URI: "rpcedge://about", Name: "about", MIMEType: "text/plain", Text: "rpcedge fuzz server"})
	s.AddPrompt(mcp.Prompt{
		Name:      "greet",
		Arguments: []mcp.PromptArgument{{Name: "name", Required: true}},
		Get: func(_ *fastserver.Request, args map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Text: "Please greet " + args["name"]}}}, nil
		},
	})
	return s, s.Err()
}

func demoA2A() (*a2a.Server, error) {
	card := a2a.AgentCard{
		Name:               "rpcedge-fuzz",
		Description:        "echo agent",
		Version:            "0.0.1",
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echo", Tags: []string{"echo"}}},
	}
	echo := func(_ context.Context, c *a2a.Call) (*a2a.Reply, error) {
		parts := c.Message.Parts.OfKind(a2a.PartText)
		if parts.Len() == 0 {
			return &a2a.Reply{State: a2a.TaskStateRejected}, nil
		}
		return &a2a.Reply{Artifacts: []a2a.Artifact{{Name: "echo", Parts: parts}}}, nil
	}
	return a2a.New(a2a.Config{Card: card, Agent: a2a.AgentFunc(echo)})
}

// startServer builds the server and serves it in the background until the
// test (or fuzz target) ends.
func startServer(tb testing.TB) *testServer {
	tb.Helper()
	m, err := demoMCP()
	if err != nil {
		tb.Fatal(err)
	}
	a, err := demoA2A()
	if err != nil {
		tb.Fatal(err)
	}
	logs := new(syncBuffer)
	cfg := fastserver.Config{
		Logger:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		DrainTimeout: 200 * time.Millisecond,
	}
	srv, err := fastserver.New(cfg, m.Endpoint(), a.Endpoint())
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.HandleGET("/.well-known/agent-card.json", a.ServeCard); err != nil {
		tb.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ln.Close()
		<-done
	})
	return &testServer{srv: srv, ln: ln, log: logs}
}

// roundTrip writes raw, one HTTP/1.1 request, on a fresh in-memory
// connection and reads one response.
func (s *testServer) roundTrip(raw []byte, resp *fasthttp.Response) error {
	c, err := s.ln.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// One Write: the pipe buffers it whole, so a server that answers
	// early and stops reading cannot block us.
	if _, err := c.Write(raw); err != nil {
		return err
	}
	resp.Reset()
	resp.SkipBody = false
	if err := resp.Read(bufio.NewReader(c)); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the server closed the connection without an answer")
		}
		return err
	}
	return nil
}

var _ net.Conn = (*net.TCPConn)(nil)
