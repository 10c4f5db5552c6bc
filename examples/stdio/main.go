// Command stdio serves an MCP tool over standard input and output (MCP's
// stdio transport), one message per line; logs go to standard error. It
// stops at the end of input, or on SIGINT or SIGTERM.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

// EchoIn is the echo tool's arguments.
type EchoIn struct {
	Text string `json:"text"`
}

func main() {
	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.Call, in EchoIn) (string, error) { return in.Text, nil })
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = fastserver.ServeLines(ctx, s.StreamEndpoint(), fastserver.Config{}, os.Stdin, os.Stdout)
	if err != nil && err != context.Canceled {
		log.Fatal(err)
	}
}
