// Command rpcedge serves the MCP endpoint at POST /mcp and the A2A
// endpoint at POST /a2a with the demo content of rpcedge's wire contract:
//
//	go run ./cmd/rpcedge                 # http://127.0.0.1:8080
//	go run ./cmd/rpcedge -addr :8080     # beyond loopback, on purpose
//	go run ./cmd/rpcedge -stdio          # MCP over standard input/output
//	go run ./cmd/rpcedge -demo conformance   # the MCP conformance suite's fixtures
//	go run ./cmd/rpcedge -sessions       # MCP sessions for 2025-xx clients
//
// Run it with -h for every flag. It prints "listening on http://ADDR" to
// standard error once it accepts connections, and exits 0 after SIGINT or
// SIGTERM once every accepted request has been answered.
package main

import (
	"os"

	"github.com/rpcedge/rpcedge/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
