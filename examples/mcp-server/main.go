// Command mcp-server serves two typed MCP tools on fasthttp, add and lookup,
// until SIGINT or SIGTERM, then shuts down gracefully.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

type AddIn struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

type LookupIn struct {
	Key string `json:"key"`
}

var (
	table        = map[string]string{"go": "a language", "mcp": "a protocol"}
	lookupSchema = `{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z]+$"}},"required":["key"]}`
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *mcp.Call, in AddIn) (int64, error) { return in.A + in.B, nil })
	mcp.AddTool(s, mcp.Tool{Name: "lookup", Description: "Looks a key up.", InputSchema: lookupSchema},
		func(_ context.Context, _ *mcp.Call, in LookupIn) (string, error) { return table[in.Key], nil })
	srv, err := fastserver.New(fastserver.Config{Addr: *addr}, s.Endpoint()) // registration mistakes fail here
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil { // serves until a signal, then shuts down gracefully
		log.Fatal(err)
	}
}
