// Command stdio serves MCP tools over standard input and output (MCP's
// stdio transport), one message per line; logs go to standard error. It
// stops at the end of input, or on SIGINT or SIGTERM. The count tool
// streams: for a request with _meta.progressToken, each step is a
// notifications/progress line written before the answer.
package main

import (
	"context"
	"errors"
	"fmt"
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

// CountIn is the count tool's arguments.
type CountIn struct {
	To int `json:"to"`
}

func main() {
	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.Call, in EchoIn) (string, error) { return in.Text, nil })
	mcp.AddTool(s, mcp.Tool{Name: "count", Description: "Counts to 'to' (at most 100), reporting each step as progress.", Streaming: true},
		func(ctx context.Context, c *mcp.Call, in CountIn) (string, error) {
			if in.To < 0 || in.To > 100 {
				return "", errors.New("to must be 0 to 100")
			}
			for i := 1; i <= in.To; i++ {
				if err := c.Progress(float64(i), float64(in.To), fmt.Sprintf("step %d", i)); err != nil {
					return "", err // the client went away, or cancelled the call
				}
			}
			return fmt.Sprintf("counted to %d", in.To), nil
		})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = fastserver.ServeLines(ctx, s.StreamEndpoint(), fastserver.Config{}, os.Stdin, os.Stdout)
	if err != nil && err != context.Canceled {
		log.Fatal(err)
	}
}
